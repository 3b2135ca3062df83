"""The LLM protocol shared by every backend."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]  # {"role": "user" | "assistant" | "system", "content": ...}


@dataclass(frozen=True)
class Completion:
    """One sampled continuation; ``finish_reason`` is ``stop`` (ended on its own or at a stop string) or ``length``."""

    text: str
    finish_reason: str


@dataclass(frozen=True)
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_k: int = 40
    max_tokens: int = 256
    seed: int | None = 0
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("n must be at least 1")
        if self.temperature < 0 or self.top_k < 0 or self.max_tokens < 1:
            raise ValueError("temperature and top_k must be >= 0 and max_tokens >= 1")


@runtime_checkable
class LLM(Protocol):
    """Batch-first text generation. ``complete`` continues raw prompts; ``chat`` answers message lists through
    the model's chat template. Both return ``params.n`` completions per input, in input order. Sample ``i`` of
    an input uses seed ``params.seed + i``, so a run is reproducible."""

    @property
    def model_id(self) -> str: ...

    def complete(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]: ...

    def chat(self, conversations: Sequence[Sequence[Message]], params: SamplingParams) -> list[list[Completion]]: ...

    def count_tokens(self, text: str) -> int: ...

    def context_size(self) -> int: ...

    def info(self) -> dict[str, Any]: ...
