"""LLM backends behind one protocol (:class:`LLM`), named by a spec string.

=============================== ===========================================================================
spec                            backend
=============================== ===========================================================================
``llamacpp:NAME_OR_FILE.gguf``  llama.cpp in this process (default ``qwen2.5-coder-1.5b-instruct``)
``openai:URL[#MODEL]``          an OpenAI-compatible server (vLLM, Ollama, llama.cpp server, ...)
``hf:DIR_OR_FILE``              transformers, any causal-LM directory (or GGUF, slowly)
=============================== ===========================================================================
A bare known model name (``qwen2.5-coder-0.5b-instruct``) or ``.gguf`` path means ``llamacpp:``. Each backend is an
entry of :mod:`.registry` (``register_llm_backend``: one file adds one).
"""

from __future__ import annotations

from .base import LLM, Completion, Message, SamplingParams, sample_all
from .registry import LLMBackend, LoadOptions, llm_backends, register_llm_backend, split_spec, unregister_llm_backend

__all__ = [
    "LLM",
    "Completion",
    "LLMBackend",
    "Message",
    "SamplingParams",
    "llm_backends",
    "load_llm",
    "register_llm_backend",
    "sample_all",
    "unregister_llm_backend",
]

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
    """Build the backend named by ``spec`` (models load on first use; the backends: :mod:`.registry`, a plugin's
    included). ``parallel``: sequences decoded together by llama.cpp in process (default 16; 1 = one after another);
    ``concurrency``: sequences in flight to a server (default 32); ``timeout`` (seconds per request, default 120) and
    ``retries`` (default 2): a server's."""
    backend, rest = split_spec(spec)
    options = LoadOptions(reuse_prefix, n_ctx, parallel, concurrency, timeout, retries)
    return backend.build(rest, options)
