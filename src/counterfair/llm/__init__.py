"""LLM backends behind one protocol (:class:`LLM`), named by a spec string.

=============================== ===========================================================================
spec                            backend
=============================== ===========================================================================
``llamacpp:NAME_OR_FILE.gguf``  llama.cpp in this process (default ``qwen2.5-coder-1.5b-instruct``)
``openai:URL[#MODEL]``          an OpenAI-compatible server (vLLM, Ollama, llama.cpp server, ...)
``hf:DIR_OR_FILE``              transformers, any causal-LM directory (or GGUF, slowly)
=============================== ===========================================================================
A bare known model name (``qwen2.5-coder-0.5b-instruct``) or ``.gguf`` path means ``llamacpp:``.
"""

from __future__ import annotations

from ..errors import ConfigError
from .base import LLM, Completion, Message, SamplingParams, sample_all

__all__ = ["LLM", "Completion", "Message", "SamplingParams", "load_llm", "sample_all"]

DEFAULT_LLM = "llamacpp:qwen2.5-coder-1.5b-instruct"


def load_llm(
    spec: str = DEFAULT_LLM,
    *,
    reuse_prefix: bool = True,
    n_ctx: int = 4096,
    parallel: int | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    retries: int | None = None,
) -> LLM:
    """Build the backend named by ``spec`` (models load on first use). ``parallel``: sequences decoded together by
    llama.cpp in process (default 16; 1 = one after another); ``concurrency``: sequences in flight to a server
    (default 32); ``timeout`` (seconds per request, default 120) and ``retries`` (default 2): a server's."""
    kind, sep, rest = spec.partition(":")
    if kind in ("http", "https"):  # a bare URL
        kind, rest = "openai", spec
    elif not sep:
        kind, rest = "llamacpp", spec
    if not rest:
        raise ConfigError(f"LLM spec {spec!r} names no model or endpoint")
    if kind == "llamacpp":
        from .llamacpp import LlamaCppLLM

        return LlamaCppLLM(rest, n_ctx=n_ctx, reuse_prefix=reuse_prefix, parallel=parallel)
    if kind == "openai":
        from .openai_http import OpenAIHTTPLLM

        url, _, model = rest.partition("#")
        server = OpenAIHTTPLLM(url, model=model or "default", context=n_ctx, concurrency=concurrency)
        server.timeout = server.timeout if timeout is None else timeout
        server.retries = server.retries if retries is None else retries
        return server
    if kind == "hf":
        from .hf import TransformersLLM

        return TransformersLLM(rest, reuse_prefix=reuse_prefix)
    raise ConfigError(f"unknown LLM backend {kind!r} in {spec!r}; use llamacpp:, openai: or hf:")
