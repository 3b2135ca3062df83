"""The LLM protocol shared by every backend."""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..progress import ProgressHook

Message = dict[str, str]  # {"role": "user" | "assistant" | "system", "content": ...}


@dataclass(frozen=True)
class Completion:
    """One sampled continuation; ``finish_reason`` is ``stop`` (ended on its own or at a stop string) or ``length``."""

    text: str
    finish_reason: str
    # the most likely first tokens and their log-probabilities, where the backend was asked for them
    first_token_logprobs: tuple[tuple[str, float], ...] = ()
    # every token of the answer with its log-probability and top alternatives, where the backend was asked for them
    trace: tuple[Any, ...] = ()  # of counterfair.llm.values.Position


@dataclass(frozen=True)
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_k: int = 40
    max_tokens: int = 256
    seed: int | None = 0
    stop: tuple[str, ...] = ()
    grammar: str | None = (
        None  # a GBNF grammar every sample must follow (llama.cpp in process; other backends ignore it)
    )
    # each input's own seed in place of ``seed`` (sample i of input k: input_seeds[k] + i): inputs that do not share
    # their draws, so one random number does not decide the same token of every input
    input_seeds: tuple[int, ...] | None = None

    def seed_of(self, k: int) -> int | None:
        """The seed of input ``k``'s first sample (sample i: this + i)."""
        return self.input_seeds[k] if self.input_seeds is not None else self.seed

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("n must be at least 1")
        if self.temperature < 0 or self.top_k < 0 or self.max_tokens < 1:
            raise ValueError("temperature and top_k must be >= 0 and max_tokens >= 1")


@runtime_checkable
class LLM(Protocol):
    """Batch-first text generation. ``complete`` continues raw prompts; ``chat`` answers message lists through
    the model's chat template. Both return ``params.n`` completions per input, in input order. Sample ``i`` of
    an input uses seed ``params.seed + i``, so a run is reproducible. Give a backend every input of a step in one
    call: the built-in ones sample them concurrently (parallel sequences in process, concurrent requests to a
    server). They also take ``progress=``, a hook advanced once per finished sample (optional for other backends:
    :func:`sample_all` passes it where accepted)."""

    @property
    def model_id(self) -> str: ...

    def complete(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]: ...

    def chat(self, conversations: Sequence[Sequence[Message]], params: SamplingParams) -> list[list[Completion]]: ...

    def count_tokens(self, text: str) -> int: ...

    def context_size(self) -> int: ...

    def info(self) -> JSONObject: ...


def sample_all(
    llm: LLM,
    inputs: Sequence[str] | Sequence[Sequence[Message]],
    params: SamplingParams,
    *,
    chat: bool,
    progress: ProgressHook | None = None,
) -> list[list[Completion]]:
    """``llm.chat(inputs, params)`` (or ``complete``) with ``progress`` counting samples, for any backend: one
    without a ``progress`` parameter is advanced when the call returns."""
    method: Any = llm.chat if chat else llm.complete
    if progress is None:
        return list(method(inputs, params))
    try:
        accepts = "progress" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        accepts = False
    if accepts:
        return list(method(inputs, params, progress=progress))
    out = list(method(inputs, params))
    progress.advance(sum(len(samples) for samples in out))
    return out


def ask_until_parsed(
    llm: LLM,
    conversations: Sequence[Sequence[Message]],
    parse: Any,
    *,
    retries: int,
    max_tokens: int,
) -> list[tuple[Any, list[str]]]:
    """Ask every conversation at once: greedy first, then up to ``retries`` samples at temperature 0.7 (seed = the
    attempt number) for those whose answer ``parse`` rejects (returns None). Per conversation: the parsed value (or
    None) and every raw answer, in order. Each round is one LLM call, so a backend answers the questions together."""
    values: list[Any] = [None] * len(conversations)
    raws: list[list[str]] = [[] for _ in conversations]
    pending = list(range(len(conversations)))
    for attempt in range(retries + 1):
        if not pending:
            break
        params = SamplingParams(
            n=1, temperature=0.0 if attempt == 0 else 0.7, top_k=40, max_tokens=max_tokens, seed=attempt
        )
        answers = sample_all(llm, [conversations[k] for k in pending], params, chat=True)
        for k, samples in zip(pending, answers, strict=True):
            raws[k].append(samples[0].text)
            values[k] = parse(samples[0].text)
        pending = [k for k in pending if values[k] is None]
    return list(zip(values, raws, strict=True))


DEFAULT_PARALLEL = 16  # the paper's 16 samples of one input decode together


def positive_env(name: str) -> int | None:
    """The positive whole number in environment variable ``name``; None when unset; an error for anything else."""
    configured = os.environ.get(name, "").strip()
    if not configured:
        return None
    if not configured.isdigit() or int(configured) < 1:
        raise ConfigError(f"{name}={configured!r}: expected a positive whole number")
    return int(configured)


def default_parallel() -> int:
    """``COUNTERFAIR_LLM_PARALLEL`` if set, else 16."""
    return positive_env("COUNTERFAIR_LLM_PARALLEL") or DEFAULT_PARALLEL


def default_threads() -> int:
    """``COUNTERFAIR_LLM_THREADS`` if set, else the cores this process may run on."""
    configured = positive_env("COUNTERFAIR_LLM_THREADS")
    if configured:
        return configured
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
