"""The LLM backends a spec can name (``llamacpp:``, ``openai:``, ``hf:``, a plugin's), one registry entry each.

A backend is its spec prefix, a ``build(rest, options)`` that makes the :class:`~counterfair.llm.LLM` (``rest``: the
spec after ``PREFIX:``; ``options``: what the caller asked of it, :class:`LoadOptions`, each backend using what
applies), and two facts the commands ask of it instead of its class: whether it decodes in this process (an
``llm-audit`` grammar holds its samples) and whether it is a server (``--timeout`` and ``--retries`` apply). Adding a
backend is one file calling :func:`register_llm_backend` (a plugin module, :mod:`counterfair.plugins`)::

    register_llm_backend(LLMBackend("vllm", build=lambda rest, o: MyVLLM(rest), help="vLLM in this process",
                                    in_process=True))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ConfigError
from .base import LLM


@dataclass(frozen=True)
class LoadOptions:
    """What a caller of :func:`~counterfair.llm.load_llm` asked for; each backend reads the fields that apply to it."""

    reuse_prefix: bool = True
    n_ctx: int = 4096
    parallel: int | None = None  # sequences decoded together in this process
    concurrency: int | None = None  # sequences in flight to a server
    timeout: float | None = None  # seconds per request to a server
    retries: int | None = None  # a server's retries


@dataclass(frozen=True)
class LLMBackend:
    """One spec prefix and how to build its backend."""

    name: str
    build: Callable[[str, LoadOptions], LLM]
    help: str
    in_process: bool = False  # decodes in this process: a grammar can hold its samples
    server: bool = False  # answers over HTTP: --timeout and --retries apply


_BACKENDS: dict[str, LLMBackend] = {}


def register_llm_backend(backend: LLMBackend) -> None:
    """Add ``backend`` under its prefix (a prefix already taken is refused: unregister it first)."""
    if backend.name in _BACKENDS:
        raise ConfigError(f"an LLM backend named {backend.name!r} is already registered")
    if not backend.name or ":" in backend.name or backend.name in ("http", "https"):
        raise ConfigError(f"{backend.name!r} cannot name an LLM backend (a bare word before ':')")
    _BACKENDS[backend.name] = backend


def unregister_llm_backend(name: str) -> None:
    _BACKENDS.pop(name, None)


def llm_backends() -> dict[str, LLMBackend]:
    """The registered backends by prefix, built-in ones first."""
    return dict(_BACKENDS)


def split_spec(spec: str) -> tuple[LLMBackend, str]:
    """The backend a spec names and the rest of the spec: ``PREFIX:REST``; a bare ``http(s)://`` URL is ``openai:``,
    a spec without a registered prefix (a model name, a ``.gguf`` path) is ``llamacpp:``."""
    kind, sep, rest = spec.partition(":")
    if kind in ("http", "https"):
        kind, rest = "openai", spec
    elif not sep:
        kind, rest = "llamacpp", spec
    if not rest:
        raise ConfigError(f"LLM spec {spec!r} names no model or endpoint")
    if kind not in _BACKENDS:
        known = ", ".join(f"{name}:" for name in _BACKENDS)
        raise ConfigError(f"unknown LLM backend {kind!r} in {spec!r}; use {known}")
    return _BACKENDS[kind], rest


def _llamacpp(rest: str, o: LoadOptions) -> LLM:
    from .llamacpp import LlamaCppLLM

    return LlamaCppLLM(rest, n_ctx=o.n_ctx, reuse_prefix=o.reuse_prefix, parallel=o.parallel)


def _openai(rest: str, o: LoadOptions) -> LLM:
    from .openai_http import OpenAIHTTPLLM

    url, _, model = rest.partition("#")
    server = OpenAIHTTPLLM(url, model=model or "default", context=o.n_ctx, concurrency=o.concurrency)
    server.timeout = server.timeout if o.timeout is None else o.timeout
    server.retries = server.retries if o.retries is None else o.retries
    return server


def _hf(rest: str, o: LoadOptions) -> LLM:
    from .hf import TransformersLLM

    return TransformersLLM(rest, reuse_prefix=o.reuse_prefix, parallel=o.parallel)


for _backend in (
    LLMBackend("llamacpp", _llamacpp, "llama.cpp in this process (a packaged model's name or a .gguf file)", True),
    LLMBackend(
        "openai", _openai, "an OpenAI-compatible server: openai:URL#MODEL (vLLM, llama.cpp, Ollama)", server=True
    ),
    LLMBackend("hf", _hf, "transformers in this process, any causal-LM directory", in_process=False),
):
    register_llm_backend(_backend)
