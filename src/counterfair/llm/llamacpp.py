"""In-process llama.cpp (llama-cpp-python) backend for GGUF models.

Prefix reuse: llama.cpp keeps the KV cache of the last evaluated tokens and, for a new prompt, evaluates only
the tokens after the longest common prefix. The few-shot prefix is identical for every input, and the 16
samples of one input share their whole prompt, so after the first call almost nothing of the prompt is
evaluated again. ``reuse_prefix=False`` clears the cache before every call (the baseline the benchmark
compares against).

Native path: whether llama.cpp may repack weights for the CPU's instruction sets is decided once per machine by
:mod:`counterfair.llm.native` (a probe in a child process, or ``COUNTERFAIR_LLAMA_REPACK=on|off``); ``info()`` records
the path that ran.

Parallel sampling: with ``parallel`` > 1 (default 16, ``COUNTERFAIR_LLM_PARALLEL`` or ``--llm-parallel``) the samples of
an input, and the inputs of one call, decode together as sequences of one llama.cpp batch
(:mod:`counterfair.llm.llamacpp_batch`); ``parallel=1`` is the sequential path through ``create_completion``.

Threads: every core this process may use (``COUNTERFAIR_LLM_THREADS`` or ``n_threads`` to change it); llama-cpp-python
would otherwise generate with half of them (on 2 cores: 2.64 s instead of 3.22 s per mask-fill answer, same text).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from ..errors import ConfigError, ModelNotAvailable
from ..jsontypes import JSONObject
from ..progress import NullProgress, ProgressHook, answered
from .base import Completion, Message, SamplingParams, default_parallel, default_threads
from .values import ValueOdds
from .values import value_odds as odds_of

LLAMA_PIP = "pip install llama-cpp-python==0.3.36"


class LlamaCppLLM:
    """A GGUF model run by llama.cpp in this process; loads on first use."""

    def __init__(
        self,
        model: str = "qwen2.5-coder-1.5b-instruct",
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        reuse_prefix: bool = True,
        parallel: int | None = None,
        draft: int | None = None,
    ) -> None:
        self.model = model
        # prompt-lookup speculative decoding on the sequential path (parallel=1): up to ``draft`` tokens proposed
        # from the prompt's n-grams and checked in one evaluation (a rewrite copies most of its input)
        self.draft = draft
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.reuse_prefix = reuse_prefix
        self.parallel = parallel if parallel is not None else default_parallel()
        if self.parallel < 1:
            raise ConfigError(f"parallel must be at least 1, got {self.parallel}")
        if draft and self.parallel != 1:
            raise ConfigError("prompt-lookup drafting (draft=) runs on the sequential path only: use parallel=1")
        self._llama: Any = None
        self._batcher: Any = None
        self._path: Path | None = None
        self._native: Any = None  # the NativePath the model was loaded with
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return Path(self.model).stem if self.model.endswith(".gguf") else self.model

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as err:
                raise ModelNotAvailable("the llama.cpp backend needs llama-cpp-python", pip=LLAMA_PIP) from err
            path = Path(self.model).expanduser()
            if not path.exists():
                from ..models import get_model_info

                info = get_model_info(self.model)
                if info.kind != "instruct-llm" and not str(info.path()).endswith(".gguf"):
                    raise ConfigError(f"model {info.name!r} is not a GGUF language model")
                path = info.path()
            with open(path, "rb") as handle:
                if handle.read(4) != b"GGUF":
                    raise ConfigError(f"{path}: not a GGUF file")
            from .native import decide, model_params

            native = decide(path)
            drafting: dict[str, Any] = {}
            if self.draft:
                from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

                drafting["draft_model"] = LlamaPromptLookupDecoding(num_pred_tokens=self.draft)
            with model_params(repack=native.repack):
                self._llama = Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    verbose=False,
                    logits_all=False,
                    **drafting,
                )
            self._path, self._native = path, native
        return self._llama

    def _run(
        self, prompts: list[list[int]], params: SamplingParams, progress: ProgressHook | None
    ) -> list[list[Completion]]:
        """The samples of every prompt: in one batch when ``parallel`` > 1, else one after another."""
        hook = progress or NullProgress()
        if self.parallel == 1:
            out = []
            for k, tokens in enumerate(prompts):
                out.append(self._sample(tokens, replace(params, seed=params.seed_of(k), input_seeds=None)))
                hook.advance(params.n)
                answered(hook, k, out[-1])
            return out
        return list(
            self._batch_sampler().run(
                prompts,
                params,
                reuse_prefix=self.reuse_prefix,
                on_sample=hook.advance,
                on_input=lambda k, samples: answered(hook, k, samples),
            )
        )

    def _sample(self, prompt_tokens: list[int], params: SamplingParams) -> list[Completion]:
        """The sequential path: ``create_completion`` once per sample."""
        llama = self._load()
        out = []
        for i in range(params.n):
            if not self.reuse_prefix:
                llama.reset()  # forget the KV cache: the whole prompt is evaluated again
            result = llama.create_completion(
                prompt=prompt_tokens,
                max_tokens=params.max_tokens,
                temperature=params.temperature,
                top_k=params.top_k,
                top_p=1.0,
                min_p=0.0,
                repeat_penalty=1.0,
                seed=None if params.seed is None else params.seed + i,
                stop=list(params.stop) or None,
                grammar=_grammar(params.grammar),
            )
            choice = result["choices"][0]
            out.append(Completion(choice["text"], choice.get("finish_reason") or "stop"))
        return out

    def complete(
        self, prompts: Sequence[str], params: SamplingParams, *, progress: ProgressHook | None = None
    ) -> list[list[Completion]]:
        with self._lock:
            llama = self._load()
            tokens = [llama.tokenize(p.encode("utf-8"), add_bos=True, special=True) for p in prompts]
            return self._run(tokens, params, progress)

    def render_chat(self, messages: Sequence[Message]) -> str:
        """The chat template of the GGUF applied to ``messages``, ending with the assistant's turn opening."""
        llama = self._load()
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ConfigError(f"{self._path}: the GGUF has no chat template; use the plain prompt style")
        eos = llama.detokenize([llama.token_eos()]).decode("utf-8", errors="ignore")
        bos = llama.detokenize([llama.token_bos()]).decode("utf-8", errors="ignore") if llama.token_bos() >= 0 else ""
        formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        return str(formatter(messages=cast(Any, list(messages))).prompt)

    def chat(
        self,
        conversations: Sequence[Sequence[Message]],
        params: SamplingParams,
        *,
        progress: ProgressHook | None = None,
    ) -> list[list[Completion]]:
        with self._lock:
            llama = self._load()
            prompts = [self.render_chat(messages) for messages in conversations]
            tokens = [llama.tokenize(p.encode("utf-8"), add_bos=False, special=True) for p in prompts]
            return self._run(tokens, params, progress)

    def answer_logprobs(self, conversations: Sequence[Sequence[Message]], answers: Sequence[str]) -> list[list[float]]:
        """Per conversation, the log-probability that the assistant's reply starts with each of ``answers`` (the
        probability of its first token, from llama.cpp's logits)."""
        with self._lock:
            llama = self._load()
            prompts = [
                llama.tokenize(self.render_chat(m).encode("utf-8"), add_bos=False, special=True) for m in conversations
            ]
            first = [llama.tokenize(a.encode("utf-8"), add_bos=False, special=False)[0] for a in answers]
            return list(self._batch_sampler().next_token_logprobs(prompts, first, reuse_prefix=self.reuse_prefix))

    def value_odds(
        self,
        conversations: Sequence[Sequence[Message]],
        asks: Sequence[tuple[str, Mapping[str, Sequence[str]]]],
    ) -> list[list[ValueOdds]]:
        """Per conversation, per ask ``(prefix, spellings)``: the odds of each value as the assistant's reply after
        the forced ``prefix`` (``{"decision": "``), exact, from llama.cpp's logits
        (:func:`counterfair.llm.values.value_odds`): a conversation's contexts in one group of the batch sampler, so
        its prompt is evaluated once and the few tokens after it together."""
        with self._lock:
            llama = self._load()
            sampler = self._batch_sampler()

            def tokenize(text: str, special: bool) -> list[int]:
                return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=special))

            def next_logprobs(contexts: list[list[int]], ids: list[int]) -> list[list[float]]:
                return list(sampler.next_token_logprobs(contexts, ids, reuse_prefix=self.reuse_prefix))

            return odds_of(
                conversations,
                asks,
                render=self.render_chat,
                tokenize=tokenize,
                next_logprobs=next_logprobs,
                group=sampler.capacity,
                per_branch=True,
            )

    def _batch_sampler(self) -> Any:
        if self._batcher is None:
            from .llamacpp_batch import BatchSampler

            self._batcher = BatchSampler(
                self._load(), parallel=max(2, self.parallel), n_ctx=self.n_ctx, n_threads=self.n_threads
            )
        return self._batcher

    def count_tokens(self, text: str) -> int:
        return len(self._load().tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def context_size(self) -> int:
        return int(self._load().n_ctx())

    def info(self) -> JSONObject:
        from ..models import package_version, sha256_of

        self._load()
        assert self._path is not None
        return {
            "backend": "llama.cpp",
            "model": self.model_id,
            "path": str(self._path),
            "sha256": sha256_of(self._path),
            "n_ctx": self.n_ctx,
            "llama_cpp_python": package_version("llama-cpp-python"),
            "reuse_prefix": self.reuse_prefix,
            "parallel": self.parallel,
            "weight_repacking": self._native.repack,
            "native_path": self._native.to_dict(),
        } | ({"draft": self.draft} if self.draft else {})


def _grammar(text: str | None) -> Any:
    """llama-cpp-python's grammar object of a GBNF text (None: none)."""
    if not text:
        return None
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)
