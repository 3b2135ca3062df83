"""Local transformers backend: any causal-LM directory (or GGUF file, dequantised by transformers).

Batched sampling (``parallel`` > 1, the default 16 sequences, ``--llm-parallel`` / ``COUNTERFAIR_LLM_PARALLEL``): the
prompts of a call run through the model together (left-padded), each prompt once, its cache repeated for its ``n``
samples, then one token per live sequence per step, finished sequences dropped from the batch: on a GPU the model
sees hundreds of sequences at once instead of one. Every sample draws from its own generator seeded ``seed + i``
(sample ``i`` of its prompt), so a text's samples do not depend on which texts share its batch, and a rerun gives
the same ones.

Sequential sampling (``parallel=1``) with prefix reuse: the KV cache of the last prompt is kept; for the next prompt
only the tokens after the longest common prefix are run through the model, and every sample starts from a copy of
that cache, seeded per sample, so results with and without reuse are the same.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..models import LoadedLM, load_causal_lm, torch_device
from .base import Completion, Message, SamplingParams, default_parallel
from .values import ValueOdds
from .values import value_odds as odds_of


class TransformersLLM:
    def __init__(
        self, model: str, *, dtype: str = "float32", reuse_prefix: bool = True, parallel: int | None = None
    ) -> None:
        self.model = model
        self.dtype = dtype
        self.reuse_prefix = reuse_prefix
        self.parallel = max(1, parallel or default_parallel())  # sequences decoded together (1: one at a time)
        self._lock = threading.Lock()
        self._cached_ids: list[int] = []
        self._cache: Any = None
        self.prompt_tokens_run = 0  # prompt tokens that went through the model (not served from the cache)
        self.new_tokens = 0  # tokens sampled by the batched path

    @property
    def model_id(self) -> str:
        return self._lm().model_id

    def _lm(self) -> LoadedLM:
        return load_causal_lm(self.model, dtype=self.dtype, device=torch_device())

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
                model(input_ids=torch.tensor([target[common:]]), use_cache=True, **{_cache_name(model): self._cache})
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
                _cache_name(lm.model): copy.deepcopy(cache),
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

    def _sample_all(self, prompts: list[list[int]], params: SamplingParams) -> list[list[Completion]]:
        """Every prompt's ``n`` samples: batched (:meth:`_sample_batch`, as many prompts at once as fill ``parallel``
        sequences) or one prompt at a time with ``parallel=1``."""
        if self.parallel == 1:
            return [
                self._sample(ids, replace(params, seed=params.seed_of(k), input_seeds=None))
                for k, ids in enumerate(prompts)
            ]
        per_batch = max(1, self.parallel // params.n)
        out: list[list[Completion]] = []
        for start in range(0, len(prompts), per_batch):
            seeds = params.input_seeds[start : start + per_batch] if params.input_seeds is not None else None
            out += self._sample_batch(prompts[start : start + per_batch], replace(params, input_seeds=seeds))
        return out

    def _sample_batch(self, prompts: list[list[int]], params: SamplingParams) -> list[list[Completion]]:
        import torch

        lm = self._lm()
        model, tokenizer = lm.model, lm.tokenizer
        device = next(model.parameters()).device
        eos = tokenizer.eos_token_id
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos if eos is not None else 0)
        width = max(len(ids) for ids in prompts)
        ids = torch.full((len(prompts), width), pad, dtype=torch.long, device=device)
        mask = torch.zeros((len(prompts), width), dtype=torch.long, device=device)
        for row, prompt in enumerate(prompts):  # left-padded: every prompt ends where the samples start
            ids[row, width - len(prompt) :] = torch.tensor(prompt, device=device)
            mask[row, width - len(prompt) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():  # the last position's logits only: not prompts x tokens x vocabulary
            first = model(
                input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **_last_only(model)
            )
        self.prompt_tokens_run += int(mask.sum())
        n = params.n
        named = _cache_name(model)  # transformers 5.2x calls it ``cache``, earlier ones ``past_key_values``
        cache = getattr(first, named)
        cache.batch_repeat_interleave(n)  # each prompt's tokens ran once; its n samples share them
        logits = first.logits[:, -1, :].float().repeat_interleave(n, 0)
        mask, last = mask.repeat_interleave(n, 0), positions[:, -1].repeat_interleave(n, 0)
        seeds = [
            None if (first := params.seed_of(k)) is None else first + i for k in range(len(prompts)) for i in range(n)
        ]
        draws = [None if s is None else torch.Generator(device=device).manual_seed(s) for s in seeds]
        penalty = float(getattr(model.generation_config, "repetition_penalty", None) or 1.0)
        made: list[list[int]] = [[] for _ in seeds]
        finish = ["length"] * len(seeds)
        live = list(range(len(seeds)))  # the sequences still in the batch, by their index in ``made``
        for _ in range(params.max_tokens):
            if penalty != 1.0:  # the model's own repetition penalty, as transformers' generate applies it
                seen = [prompts[r // n] + made[r] for r in live]
                logits = _penalised(logits, seen, penalty)
            chosen = _choose(logits, params, [draws[r] for r in live])
            keep, picked = [], chosen.tolist()  # one transfer from the device per step
            for k, r in enumerate(live):
                made[r].append(int(picked[k]))
                said = tokenizer.decode(made[r], skip_special_tokens=True) if params.stop else ""
                if (eos is not None and made[r][-1] == eos) or any(s in said for s in params.stop):
                    finish[r] = "stop"
                else:
                    keep.append(k)
            if not keep or len(made[live[0]]) >= params.max_tokens:
                break
            if len(keep) < len(live):  # finished sequences leave the batch
                index = torch.tensor(keep, device=device)
                cache.batch_select_indices(index)
                mask, last, chosen = mask[index], last[index], chosen[index]
                live = [live[k] for k in keep]
            mask = torch.cat([mask, torch.ones((len(live), 1), dtype=mask.dtype, device=device)], dim=1)
            last = last + 1
            with torch.inference_mode():
                step = model(
                    input_ids=chosen[:, None],
                    attention_mask=mask,
                    position_ids=last[:, None],
                    use_cache=True,
                    **{named: cache},
                )
            logits = step.logits[:, -1, :].float()
        self.new_tokens += sum(len(tokens) for tokens in made)
        out: list[list[Completion]] = [[] for _ in prompts]
        for r, tokens in enumerate(made):
            text = tokenizer.decode(tokens, skip_special_tokens=True)
            stopped = next((s for s in params.stop if s in text), None)
            out[r // n].append(Completion(text[: text.index(stopped)] if stopped is not None else text, finish[r]))
        return out

    def complete(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        with self._lock:
            tokenizer = self._lm().tokenizer
            return self._sample_all([tokenizer(p, add_special_tokens=True)["input_ids"] for p in prompts], params)

    def chat(self, conversations: Sequence[Sequence[Message]], params: SamplingParams) -> list[list[Completion]]:
        with self._lock:
            tokenizer = self._lm().tokenizer
            if not getattr(tokenizer, "chat_template", None):
                raise ConfigError(f"{self.model}: the tokenizer has no chat template; use the plain prompt style")
            prompts = []
            for messages in conversations:
                ids = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True)
                prompts.append(list(ids["input_ids"] if isinstance(ids, dict) else ids))
            return self._sample_all(prompts, params)

    def value_odds(
        self,
        conversations: Sequence[Sequence[Message]],
        asks: Sequence[tuple[str, Mapping[str, Sequence[str]]]],
    ) -> list[list[ValueOdds]]:
        """Per conversation, per ask ``(prefix, spellings)``: the odds of each value as the assistant's reply after
        the forced ``prefix``, exact, from the logits of batched forward passes
        (:func:`counterfair.llm.values.value_odds`)."""
        with self._lock:
            tokenizer = self._lm().tokenizer
            if not getattr(tokenizer, "chat_template", None):
                raise ConfigError(f"{self.model}: the tokenizer has no chat template; use the plain prompt style")

            def render(messages: Sequence[Message]) -> str:
                return str(tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False))

            def tokenize(text: str, special: bool) -> list[int]:
                return list(tokenizer(text, add_special_tokens=False)["input_ids"])

            return odds_of(
                conversations,
                asks,
                render=render,
                tokenize=tokenize,
                next_logprobs=self._next_logprobs,
                group=self.parallel,
            )

    def _next_logprobs(self, contexts: list[list[int]], ids: list[int]) -> list[list[float]]:
        """Each context's log-probability of each of ``ids`` as its next token: one left-padded forward pass."""
        import torch

        model = self._lm().model
        device = next(model.parameters()).device
        width = max(len(c) for c in contexts)
        batch = torch.zeros((len(contexts), width), dtype=torch.long, device=device)
        mask = torch.zeros((len(contexts), width), dtype=torch.long, device=device)
        for row, context in enumerate(contexts):
            batch[row, width - len(context) :] = torch.tensor(context, device=device)
            mask[row, width - len(context) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            found = model(input_ids=batch, attention_mask=mask, position_ids=positions, **_last_only(model))
        self.prompt_tokens_run += int(mask.sum())
        logprobs = torch.log_softmax(found.logits[:, -1, :].float(), dim=-1)
        return [[float(x) for x in row] for row in logprobs[:, ids].tolist()]

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
            "parallel": self.parallel,
        }


def _cache_name(model: Any) -> str:
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _last_only(model: Any) -> dict[str, int]:
    """The forward argument that computes the last position's logits alone, where the model takes one
    (``logits_to_keep`` in recent transformers, ``num_logits_to_keep`` before)."""
    import inspect

    parameters = inspect.signature(model.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in parameters:
            return {name: 1}
    return {}


def _choose(logits: Any, params: SamplingParams, draws: list[Any]) -> Any:
    """One token per row: the most probable at temperature 0, else a draw from each row's own generator over the
    distribution transformers' sampling gives (logits / temperature, the top ``top_k`` kept, softmax)."""
    import torch

    if params.temperature == 0:
        return logits.argmax(-1)
    scores = logits / params.temperature
    if params.top_k > 0:
        kth = torch.topk(scores, min(params.top_k, scores.shape[-1])).values[..., -1, None]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    picks = [torch.multinomial(probs[k], 1, generator=draw) for k, draw in enumerate(draws)]
    return torch.cat(picks)


def _penalised(logits: Any, seen: list[list[int]], penalty: float) -> Any:
    """transformers' repetition penalty: a token already in a row's prompt or output has its logit divided by
    ``penalty`` where positive, multiplied where negative."""
    import torch

    out = logits.clone()
    for row, tokens in enumerate(seen):
        index = torch.tensor(sorted(set(tokens)), device=logits.device)
        values = out[row, index]
        out[row, index] = torch.where(values > 0, values / penalty, values * penalty)
    return out
