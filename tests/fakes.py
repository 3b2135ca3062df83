"""Test doubles: a scripted LLM implementing the counterfair LLM protocol, an editor answering by a function, and a
loopback HTTP server for a handler class."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from counterfair.editors.base import EditorBase
from counterfair.llm import Completion, Message, SamplingParams
from counterfair.records import Candidate


def sees_no_allusion(text: str) -> float:
    """A yes/no judge that sees only a text that says what it is about (the keyword+llm detector's named control)."""
    return 0.97 if text.startswith("This text is about") else 0.03


class ScriptedLLM:
    """Answers by a function of (input text, attempt, sample index); records every call. Yes/no questions scored by
    first-token log-probabilities (``answer_logprobs``: the keyword+llm detector's) get P(yes) = ``judge(text)``, the
    text being what follows the question's last "Text: "; they are recorded in ``judged``, not ``calls``. With
    ``judge=None`` it gives no log-probabilities (``answer_logprobs`` returns None), like a server without them."""

    model_id = "scripted"

    def __init__(
        self,
        answer: Callable[[str, int, int], str],
        *,
        context: int = 4096,
        judge: Callable[[str], float] | None = sees_no_allusion,
    ) -> None:
        self.answer = answer
        self.judge = judge
        self.calls: list[dict[str, Any]] = []
        self.judged: list[str] = []
        self.context = context
        self.batches = 0  # chat/complete calls: the texts of one call share its "batch" number

    def answer_logprobs(
        self, conversations: Sequence[Sequence[Message]], answers: Sequence[str]
    ) -> list[list[float]] | None:
        if self.judge is None:  # a backend without log-probabilities (a server that gives none)
            return None
        out = []
        for messages in conversations:
            text = messages[-1]["content"].rsplit("Text: ", 1)[1]
            self.judged.append(text)
            yes = self.judge(text)
            out.append([math.log(yes if a.lower() == "yes" else 1.0 - yes) for a in answers])
        return out

    def _text_of(self, messages: Sequence[Message]) -> str:
        last = messages[-1]["content"]
        return last[last.index("{") + 1 : last.rindex("}")]

    def chat(self, conversations: Sequence[Sequence[Message]], params: SamplingParams) -> list[list[Completion]]:
        out = []
        self.batches += 1
        for messages in conversations:
            text = self._text_of(messages)
            attempt = (params.seed or 0) // 1000
            self.calls.append(
                {
                    "text": text,
                    "n": params.n,
                    "seed": params.seed,
                    "top_k": params.top_k,
                    "temperature": params.temperature,
                    "stop": params.stop,
                    "batch": self.batches,
                    "messages": list(messages),
                }
            )
            out.append([Completion(self.answer(text, attempt, i), "stop") for i in range(params.n)])
        return out

    def complete(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        out = []
        self.batches += 1
        for prompt in prompts:
            text = prompt.rsplit("Here is some text: {", 1)[1].split("}", 1)[0]
            attempt = (params.seed or 0) // 1000
            self.calls.append({"text": text, "n": params.n, "seed": params.seed, "prompt": prompt})
            out.append([Completion(self.answer(text, attempt, i), "stop") for i in range(params.n)])
        return out

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def context_size(self) -> int:
        return self.context

    def info(self) -> dict[str, Any]:
        return {"backend": "scripted"}


class ListEditor(EditorBase):
    """An editor that answers by a function of the text (a list of candidate texts)."""

    name = "list"

    def __init__(self, make: Callable[[str], list[str]]) -> None:
        self.make = make

    def params(self) -> dict[str, Any]:
        return {}

    def edit(self, texts: Sequence[str], *, progress: Any = None) -> list[list[Candidate]]:
        return [[self.candidate(t) for t in self.make(text)] for text in texts]


def answer_json(
    handler: BaseHTTPRequestHandler,
    payload: bytes,
    *,
    status: int = 200,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    """A loopback handler's reply: HTTP ``status`` (200) with a JSON body, its length and any ``headers``."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(payload)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(payload)


class _Backlogged(ThreadingHTTPServer):
    """A threading server that queues as many connections as a client keeps in flight (the standard library's
    backlog of 5 resets the rest, which a client retries after its back-off)."""

    request_queue_size = 128


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port, one thread per request) for the ``with`` block; yields the base
    URL ``http://127.0.0.1:PORT``."""
    httpd = _Backlogged(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


#: sentences with one identity slot each, all different around it
CONTEXTS = (
    "Some people are {}.",
    "My {} neighbour waved at me.",
    "The {} students met after class.",
    "A {} author wrote this book.",
    "Our {} colleague joined the team today.",
    "I talked to a {} farmer at the market.",
    "The {} family next door has a dog.",
    "They said the {} doctor was kind.",
    "Two {} artists painted the mural.",
    "The {} driver stopped at the light.",
)


def in_contexts(terms: list[str], per_context: int = 2) -> list[str]:
    """Each context of :data:`CONTEXTS` written with ``per_context`` of ``terms`` (in turn, every term reached): an
    audit measures a slot once however many texts share it, so a test set needs contexts, not only terms."""
    step = max(1, len(terms) // per_context)
    return [c.format(terms[(k + j * step) % len(terms)]) for k, c in enumerate(CONTEXTS) for j in range(per_context)]


def slot_json(*args: Any, **kwargs: Any) -> dict[str, Any] | None:
    """:func:`~counterfair.analysis.slots.slot_effects` as the summary writes it (the record's JSON object)."""
    from counterfair.analysis.slots import slot_effects

    found = slot_effects(*args, **kwargs)
    return None if found is None else dict(found.to_dict())
