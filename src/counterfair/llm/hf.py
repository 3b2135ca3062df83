"""Local transformers backend: any causal-LM directory (or GGUF file, dequantised by transformers).

Prefix reuse: the KV cache of the last prompt is kept; for the next prompt only the tokens after the longest
common prefix are run through the model, and every sample starts from a copy of that cache. Sampling is
seeded per sample, so results with and without reuse are the same.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..models import LoadedLM, load_causal_lm
from .base import Completion, Message, SamplingParams


class TransformersLLM:
    def __init__(self, model: str, *, dtype: str = "float32", reuse_prefix: bool = True) -> None:
        self.model = model
        self.dtype = dtype
        self.reuse_prefix = reuse_prefix
        self._lock = threading.Lock()
        self._cached_ids: list[int] = []
        self._cache: Any = None
        self.prompt_tokens_run = 0  # prompt tokens that went through the model (not served from the cache)

    @property
    def model_id(self) -> str:
        return self._lm().model_id

    def _lm(self) -> LoadedLM:
        return load_causal_lm(self.model, dtype=self.dtype)

    def _prompt_cache(self, ids: list[int]) -> Any:
        """A KV cache holding ``ids[:-1]`` (generate needs at least one uncached token)."""
        import torch
        from transformers import DynamicCache

        model = self._lm().model
        target = ids[:-1]
        common = 0
        if self.reuse_prefix and self._cache is not None:
            for a, b in zip(self._cached_ids, target, strict=False):
                if a != b:
                    break
                common += 1
            remove = len(self._cached_ids) - common
            try:
                if remove > 0:
                    self._cache.crop(-remove)  # negative: tokens to remove (transformers 4.x and 5.x)
            except (ValueError, RuntimeError):  # e.g. a sliding-window layer that cannot roll back
                self._cache, common = DynamicCache(), 0
        else:
            self._cache = DynamicCache()
        if common < len(target):
            with torch.inference_mode():
                model(input_ids=torch.tensor([target[common:]]), past_key_values=self._cache, use_cache=True)
            self.prompt_tokens_run += len(target) - common
        self._cached_ids = list(target)
        return self._cache

    def _sample(self, ids: list[int], params: SamplingParams) -> list[Completion]:
        import torch

        lm = self._lm()
        tokenizer = lm.tokenizer
        cache = self._prompt_cache(ids)
        input_ids = torch.tensor([ids])
        eos = tokenizer.eos_token_id
        out = []
        for i in range(params.n):
            if params.seed is not None:
                torch.manual_seed(params.seed + i)
            kwargs: dict[str, Any] = {
                "do_sample": params.temperature > 0,
                "max_new_tokens": params.max_tokens,
                "past_key_values": copy.deepcopy(cache),
                "attention_mask": torch.ones_like(input_ids),
                "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos,
            }
            if params.temperature > 0:
                kwargs.update(temperature=params.temperature, top_k=params.top_k, top_p=1.0)
            if params.stop:
                kwargs.update(stop_strings=list(params.stop), tokenizer=tokenizer)
            with torch.inference_mode():
                generated = lm.model.generate(input_ids, **kwargs)[0, len(ids) :].tolist()
            hit_eos = bool(generated) and eos is not None and generated[-1] == eos
            text = tokenizer.decode(generated, skip_special_tokens=True)
            stopped = next((s for s in params.stop if s in text), None)
            if stopped is not None:
                text = text[: text.index(stopped)]
            finish = "stop" if hit_eos or stopped is not None or len(generated) < params.max_tokens else "length"
            out.append(Completion(text, finish))
        return out

    def complete(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        with self._lock:
            tokenizer = self._lm().tokenizer
            return [self._sample(tokenizer(p, add_special_tokens=True)["input_ids"], params) for p in prompts]

    def chat(self, conversations: Sequence[Sequence[Message]], params: SamplingParams) -> list[list[Completion]]:
        with self._lock:
            tokenizer = self._lm().tokenizer
            if not getattr(tokenizer, "chat_template", None):
                raise ConfigError(f"{self.model}: the tokenizer has no chat template; use the plain prompt style")
            out = []
            for messages in conversations:
                ids = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True)
                if isinstance(ids, dict):
                    ids = ids["input_ids"]
                out.append(self._sample(list(ids), params))
            return out

    def count_tokens(self, text: str) -> int:
        return len(self._lm().tokenizer(text, add_special_tokens=False)["input_ids"])

    def context_size(self) -> int:
        return int(getattr(self._lm().model.config, "max_position_embeddings", 2048))

    def info(self) -> JSONObject:
        lm = self._lm()
        return {
            "backend": "transformers",
            "model": lm.model_id,
            "sha256": lm.sha256,
            "source": lm.source,
            "reuse_prefix": self.reuse_prefix,
        }
