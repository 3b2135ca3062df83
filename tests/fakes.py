"""Test doubles: a scripted LLM implementing the counterfair LLM protocol, an editor answering by a function, and a
loopback HTTP server for a handler class."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from counterfair.editors.base import EditorBase
from counterfair.llm import Completion, Message, SamplingParams
from counterfair.records import Candidate


class ScriptedLLM:
    """Answers by a function of (input text, attempt, sample index); records every call."""

    model_id = "scripted"

    def __init__(self, answer: Callable[[str, int, int], str], *, context: int = 4096) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []
        self.context = context
        self.batches = 0  # chat/complete calls: the texts of one call share its "batch" number

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


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port, one thread per request) for the ``with`` block; yields the base
    URL ``http://127.0.0.1:PORT``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
