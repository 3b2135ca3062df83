"""What writes the responses of an LLM audit: a generator spec, as a string on the command line or in Python.

================================== ==============================================================================
spec                               generator
================================== ==============================================================================
``callable:FILE.py:FN``            a Python function ``list[str] -> list[str]`` (one response per prompt given; it
                                   is given each prompt once per sample wanted, and ``seeds=`` when it takes them)
``callable:module:FN``             the same, from an importable module
``openai:URL[#MODEL]`` or a URL    an OpenAI-compatible server (vLLM, llama.cpp server, Ollama): concurrent,
                                   bounded and retried requests (:mod:`counterfair.llm.openai_http`)
``llamacpp:NAME_OR_FILE.gguf``     llama.cpp in this process (the packaged Qwen models by name)
``simulated:hiring``               a built-in simulated CV screener with planted, documented biases (the demo's;
                                   :mod:`counterfair.commands.llm_audit.simulated`)
================================== ==============================================================================

In Python a plain function is a generator too. Sample ``i`` of a prompt is asked with seed ``seed + i + s``, ``s`` a
number fixed by the prompt's text (:func:`variant_seed`), so a run is reproducible where the generator honours seeds,
and no two variants share their draws: with ``seed + i`` alone, one random number decided the same token (the decision)
of every variant of every prompt, and a decision's rate read 0 for every variant whose probability was below the
five draws.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import ConfigError, GeneratorError
from ...jsontypes import JSONObject
from ...progress import ProgressHook
from ...redact import redact

if TYPE_CHECKING:
    from .outcomes import Schema
    from .readout import Reading


def variant_seed(prompt: str) -> int:
    """A number below 2**28 fixed by ``prompt``'s text, added to its samples' seed: variants draw apart."""
    import hashlib

    return int(hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:7], 16)


class Generator(Protocol):
    """Writes ``samples`` responses to each prompt (one list per prompt, in order)."""

    def generate(
        self, prompts: Sequence[str], samples: int, *, seed: int, temperature: float, max_tokens: int
    ) -> list[list[str]]: ...

    def info(self) -> JSONObject: ...


class CallableGenerator:
    """A function from a list of prompts to a list of responses."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn = fn
        self.name = name
        try:
            self._seeds = "seeds" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            self._seeds = False

    def generate(
        self, prompts: Sequence[str], samples: int, *, seed: int, temperature: float, max_tokens: int
    ) -> list[list[str]]:
        asked = [p for p in prompts for _ in range(samples)]
        seeds = [seed + variant_seed(p) + i for p in prompts for i in range(samples)]
        answers = self.fn(asked, seeds=seeds) if self._seeds else self.fn(asked)
        answers = list(answers) if not isinstance(answers, str) else answers
        if isinstance(answers, str) or len(answers) != len(asked):
            got = "a string" if isinstance(answers, str) else f"{len(answers)} items"
            raise GeneratorError(
                f"generator {self.name}: asked {len(asked)} prompts, returned {got}; return one response "
                "per prompt, in order"
            )
        for i, answer in enumerate(answers):
            if not isinstance(answer, str):
                raise GeneratorError(
                    f"generator {self.name}: response {i} (to {asked[i][:60]!r}) is a {type(answer).__name__}, not text"
                )
        return [list(answers[k * samples : (k + 1) * samples]) for k in range(len(prompts))]

    def info(self) -> JSONObject:
        """What identifies the generator in ``run.json``: its target and, for a file, the file's sha256 (a changed
        generator is a different run)."""
        from pathlib import Path

        from ...io import file_sha256

        source = self.name.rpartition(":")[0]
        code = file_sha256(source) if source.endswith(".py") and Path(source).is_file() else None
        return {"type": "callable", "target": self.name, "code_sha256": code}


class LLMGenerator:
    """An :class:`~counterfair.llm.LLM` backend asked through its chat template (one user message per prompt, after
    ``system`` when given)."""

    def __init__(
        self, llm: Any, spec: str, system: str | None = None, grammar: str | None = None, *, in_process: bool = False
    ) -> None:
        self.llm = llm
        self.spec = spec
        self.system = system
        # a backend decoding in this process (llama.cpp) holds its samples to the grammar; a server answers freely
        self.grammar = grammar if in_process else None

    def generate(
        self,
        prompts: Sequence[str],
        samples: int,
        *,
        seed: int,
        temperature: float,
        max_tokens: int,
        progress: ProgressHook | None = None,
    ) -> list[list[str]]:
        """Each prompt's ``samples`` responses; ``progress`` advanced per sample as the backend finishes it."""
        from ...llm import SamplingParams, sample_all

        conversations = self._conversations(prompts)
        params = SamplingParams(
            n=samples,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            grammar=self.grammar,
            input_seeds=tuple(seed + variant_seed(p) for p in prompts),
        )
        found = sample_all(self.llm, conversations, params, chat=True, progress=progress)
        return [[c.text for c in samples_of] for samples_of in found]

    def read(
        self,
        prompts: Sequence[str],
        schema: Schema,
        *,
        temperature: float,
        max_tokens: int,
    ) -> list[Reading | None] | None:
        """Each prompt's decision and rating read from token probabilities (None for one that could not be read: it
        is sampled); None when the backend gives none (see :mod:`.readout`)."""
        from .readout import read_forced, read_trace

        conversations = self._conversations(prompts)
        if callable(getattr(self.llm, "value_odds", None)):
            return list(read_forced(self.llm, conversations, schema, temperature, held=self.grammar is not None))
        traces_of = getattr(self.llm, "greedy_traces", None)
        if not callable(traces_of):
            return None
        traces = traces_of(conversations, max_tokens=max_tokens)
        return None if traces is None else [read_trace(t, schema, temperature) if t else None for t in traces]

    def _conversations(self, prompts: Sequence[str]) -> list[list[dict[str, str]]]:
        head = [{"role": "system", "content": self.system}] if self.system else []
        return [[*head, {"role": "user", "content": p}] for p in prompts]

    def info(self) -> JSONObject:
        return {
            "type": "llm",
            "spec": redact(self.spec),  # a URL's credentials never recorded
            "model": self.llm.model_id,
            "system": self.system,
            "grammar": self.grammar,
        }


def load_generator(
    spec: Any,
    *,
    system: str | None = None,
    concurrency: int | None = None,
    grammar: str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
) -> Generator:
    """The generator named by ``spec`` (see the module's docstring), or ``spec`` itself when it is one already;
    ``grammar``: GBNF every answer of an in-process llama.cpp model is held to (other generators answer freely);
    ``timeout`` and ``retries``: an ``openai:`` server's (refused for any other generator, which has none)."""
    if (timeout is not None or retries is not None) and not _is_server(spec):
        raise ConfigError(
            "--timeout and --retries are for an openai:URL#MODEL server; a callable: or llamacpp: generator runs in "
            "this process (its own code sets any time limit)"
        )
    if hasattr(spec, "generate") and hasattr(spec, "info"):
        return spec  # type: ignore[no-any-return]
    if callable(spec):
        return CallableGenerator(spec, getattr(spec, "__qualname__", repr(spec)))
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError("give a generator: callable:FILE.py:FN, openai:URL#MODEL, llamacpp:MODEL or simulated:hiring")
    kind, _, rest = spec.partition(":")
    if kind == "callable":
        if not rest:
            raise ConfigError(f"generator {spec!r}: expected callable:FILE.py:FN or callable:module:FN")
        from ...classifiers.adapters import load_function

        return CallableGenerator(load_function(rest, "generator"), rest)
    if kind == "simulated":
        from .simulated import SimulatedApplication

        return SimulatedApplication(rest)
    from ...llm import load_llm
    from ...llm.registry import split_spec

    llm = load_llm(spec, concurrency=concurrency, timeout=timeout, retries=retries)
    return LLMGenerator(llm, spec, system, grammar, in_process=split_spec(spec)[0].in_process)


def _is_server(spec: Any) -> bool:
    """Whether ``spec`` names an LLM backend that is a server (its registry entry says so)."""
    from ...llm.registry import split_spec

    if not isinstance(spec, str) or spec.split(":", 1)[0] in ("callable", "simulated"):
        return False
    try:
        return split_spec(spec.strip())[0].server
    except ConfigError:
        return False


def generator_for(spec: Any, options: Any) -> Generator:
    """:func:`load_generator` with an audit's options (its system message, concurrency, grammar, timeout, retries)."""
    return load_generator(
        spec,
        system=options.system,
        concurrency=options.concurrency,
        grammar=options.grammar,
        timeout=options.timeout,
        retries=options.retries,
    )
