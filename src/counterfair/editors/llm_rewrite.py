"""LLM rewriting (paper 000 §3.2, App. A.1-A.2, B.3): the few-shot prompt of Table 8 with the instruction
"not about <subject>" (Table 8's wording of "make this not about X"), 16 samples per input at temperature 1 and
top-k 40, keeping only the text inside the first ``{...}`` of each response.

Two prompt styles: ``turns`` renders the demonstrations as alternating user/assistant messages through the
model's chat template (the turn format of Table 8, for instruction models); ``plain`` writes them as one text
for next-token language models ("Here is a rewrite of the text, which is ...: {").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..lexicons.attributes import Attribute
from ..llm import LLM, Completion, Message, SamplingParams, sample_all
from ..llm.openai_http import LLMRequestsFailed
from ..progress import NullProgress, ProgressHook
from ..records import Candidate
from .base import EditorBase


@dataclass(frozen=True)
class FewShotPrompt:
    name: str
    version: int
    turn_user: str
    turn_assistant: str
    plain_example: str
    plain_query: str
    default_instruction: str
    examples: tuple[dict[str, str], ...]

    @classmethod
    def load(cls, name_or_path: str = "reif-fewshot") -> FewShotPrompt:
        path = Path(name_or_path)
        if not path.exists():
            path = Path(
                str(resources.files("counterfair") / "resources" / "prompts" / f"{name_or_path.replace('-', '_')}.yaml")
            )
        if not path.exists():
            raise ConfigError(f"unknown prompt {name_or_path!r}; built in: reif-fewshot; or give a YAML file")
        from ..yamlfiles import read_mapping

        data = read_mapping(path, "prompt file")  # capped, no aliases, no key twice: a user's file
        return cls(
            name=str(data["name"]),
            version=int(data["version"]),
            turn_user=data["turn_user"],
            turn_assistant=data["turn_assistant"],
            plain_example=data["plain_example"],
            plain_query=data["plain_query"],
            default_instruction=data["default_instruction"],
            examples=tuple(data["examples"]),
        )

    def messages(self, text: str, instruction: str) -> list[Message]:
        out: list[Message] = []
        for ex in self.examples:
            out.append(
                {"role": "user", "content": self.turn_user.format(text=ex["text"], instruction=ex["instruction"])}
            )
            out.append({"role": "assistant", "content": self.turn_assistant.format(text=ex["rewrite"])})
        out.append({"role": "user", "content": self.turn_user.format(text=text, instruction=instruction)})
        return out

    def plain(self, text: str, instruction: str) -> str:
        shots = [
            self.plain_example.format(text=e["text"], instruction=e["instruction"], rewrite=e["rewrite"])
            for e in self.examples
        ]
        return "\n\n".join([*shots, self.plain_query.format(text=text, instruction=instruction)])


@cache
def _default_prompt() -> FewShotPrompt:
    return FewShotPrompt.load()


def extract_braced(raw: str, *, opened: bool = False) -> str | None:
    """The text inside the first ``{...}`` of ``raw`` (``opened``: the prompt already opened the brace)."""
    text = "{" + raw if opened else raw
    start = text.find("{")
    if start < 0:
        return None
    end = text.find("}", start + 1)
    if end < 0:
        return None
    return text[start + 1 : end].strip()


class LLMRewriteEditor(EditorBase):
    """Samples ``n`` rewrites per input from an LLM; :meth:`sample` takes an attempt number for reruns."""

    name: ClassVar[str] = "llm"

    def __init__(
        self,
        llm: LLM,
        attribute: Attribute,
        *,
        style: str = "turns",
        instruction: str | None = None,
        n: int = 16,
        temperature: float = 1.0,
        top_k: int = 40,
        seed: int = 0,
        prompt: FewShotPrompt | None = None,
    ) -> None:
        if style not in ("turns", "plain"):
            raise ConfigError(f"prompt style must be 'turns' or 'plain', got {style!r}")
        self.llm = llm
        self.attribute = attribute
        self.style = style
        self.prompt = prompt or _default_prompt()
        self.instruction = (instruction or self.prompt.default_instruction).format(subject=attribute.subject)
        self.n = n
        self.temperature = temperature
        self.top_k = top_k
        self.seed = seed

    def params(self) -> JSONObject:
        return {
            "attribute": self.attribute.name,
            "style": self.style,
            "prompt": f"{self.prompt.name}@{self.prompt.version}",
            "instruction": self.instruction,
            "n": self.n,
            "temperature": self.temperature,
            "top_k": self.top_k,
            "seed": self.seed,
            "llm": self.llm.model_id,
        }

    def max_tokens_for(self, text: str) -> int:
        """Room for a rewrite somewhat longer than the input, plus the braces."""
        return max(48, int(self.llm.count_tokens(text) * 1.5) + 24)

    def prompt_tokens(self, text: str) -> int:
        if self.style == "plain":
            return self.llm.count_tokens(self.prompt.plain(text, self.instruction))
        return sum(self.llm.count_tokens(m["content"]) + 8 for m in self.prompt.messages(text, self.instruction))

    def fits(self, text: str) -> bool:
        """Whether prompt + answer fit the model's context window."""
        return self.prompt_tokens(text) + self.max_tokens_for(text) <= self.llm.context_size()

    def sample(
        self,
        texts: Sequence[str],
        *,
        attempt: int = 0,
        progress: ProgressHook | None = None,
        failures: dict[int, str] | None = None,
        sample_progress: ProgressHook | None = None,
    ) -> list[list[Candidate]]:
        """``n`` candidates per text, all texts in one LLM call (sampled concurrently by the built-in backends).
        Every prompt style stops at the closing ``}``: only the first ``{...}`` is kept, so nothing after it is
        generated. ``progress`` advances once per text. With ``failures`` given, a text whose requests to an LLM
        server failed gets no candidate and its reason in ``failures`` (by position) instead of failing the call.
        ``sample_progress`` advances once per finished sample."""
        if not texts:
            return []
        seed = self.seed + 1000 * attempt
        params = SamplingParams(
            n=self.n,
            temperature=self.temperature,
            top_k=self.top_k,
            max_tokens=max(self.max_tokens_for(text) for text in texts),
            seed=seed,
            stop=("}",),
        )
        plain = self.style == "plain"
        inputs: list[Any] = [
            self.prompt.plain(text, self.instruction) if plain else self.prompt.messages(text, self.instruction)
            for text in texts
        ]
        try:
            per_text: list[list[Completion] | None] = list(
                sample_all(self.llm, inputs, params, chat=not plain, progress=sample_progress)
            )
        except LLMRequestsFailed as err:
            if failures is None:
                raise
            failures.update(err.failures)
            per_text = err.completed
        out: list[list[Candidate]] = []
        for completions in per_text:
            out.append([self._candidate(c, attempt, seed, i) for i, c in enumerate(completions or [])])
        (progress or NullProgress()).advance(len(texts))
        return out

    def _candidate(self, completion: Completion, attempt: int, seed: int, i: int) -> Candidate:
        raw = completion.text
        # a stop at "}" leaves it out of the text; an answer cut by max_tokens has no closing brace
        closed = "}" in raw or completion.finish_reason == "stop"
        inner = extract_braced(raw + ("}" if closed and "}" not in raw else ""), opened=self.style == "plain")
        meta = {"attempt": attempt, "sample": i, "raw": raw, "finish_reason": completion.finish_reason}
        return self.candidate(
            inner if inner is not None else "",
            seed=seed + i,
            model_ids=(self.llm.model_id,),
            meta={**meta, "parsed": inner is not None},
        )

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        return self.sample(texts, attempt=0, progress=progress)
