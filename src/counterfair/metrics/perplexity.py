"""Perplexity under a causal language model, batched, with a sliding window for long texts.

Every token after the first is scored (with a BOS-adding tokenizer such as Gemma's, every token of the
text is scored, predicted from BOS onward). A text longer than ``window`` tokens is scored in windows
that advance by ``stride``; each token is scored once, with at least ``window - stride`` tokens of context.
Nothing is truncated: a text longer than ``max_tokens`` gets no perplexity and a stated reason instead.

Windows of all texts are sorted by length and packed into batches of at most ``token_budget`` tokens
(padding included), so little compute goes to padding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..jsontypes import JSONObject
from ..models import LoadedLM, load_causal_lm, torch_device
from ..progress import NullProgress, ProgressHook

DEFAULT_LM = "gemma-3-270m"


#: positions whose vocabulary logits exist at once (128 x 262,144 floats = 128 MiB for Gemma 3)
LOGIT_CHUNK = 128


def _body_and_head(model: Any) -> tuple[Any, Any]:
    """A causal LM's transformer body (hidden states) and its vocabulary projection, when the model exposes both
    as transformers' causal LMs do (``base_model``, ``get_output_embeddings``); else ``(None, None)``."""
    body = getattr(model, "base_model", None)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if body is None or body is model or head is None:
        return None, None
    return body, head


@dataclass
class PerplexityResult:
    """Per-text results; ``perplexity`` is NaN where ``reason`` says why the text was not scored."""

    perplexity: np.ndarray
    nll: np.ndarray
    n_tokens: np.ndarray
    reason: list[str | None] = field(default_factory=list)

    def row_failures(self) -> list[str | None]:
        """Why each text has no perplexity (None: it has one)."""
        return list(self.reason)

    def row_notes(self) -> list[str | None]:
        return [None] * len(self.perplexity)

    def notice(self) -> str | None:
        return None


@dataclass(frozen=True)
class _Segment:
    text_index: int
    ids: list[int]
    score_from: int  # first position (in ids) whose token is scored


def plan_windows(n_ids: int, *, window: int, stride: int, first_scored: int = 1) -> list[tuple[int, int, int]]:
    """(begin, end, score_from) windows over ``n_ids`` tokens; every position >= first_scored scored once."""
    if not 0 < stride <= window - 1:
        raise ValueError(f"need 0 < stride < window, got stride={stride}, window={window}")
    if n_ids <= window:
        return [(0, n_ids, first_scored)]
    plan = []
    scored_until = first_scored
    begin = 0
    while True:
        end = min(begin + window, n_ids)
        plan.append((begin, end, scored_until))
        scored_until = end
        if end == n_ids:
            return plan
        begin += stride


class PerplexityScorer:
    """Perplexity of texts under one causal LM, loaded once and reused.

    ``model`` is a registered name (default ``gemma-3-270m``), a GGUF file or a transformers directory.
    """

    def __init__(
        self,
        model: str = DEFAULT_LM,
        *,
        window: int = 1024,
        stride: int = 512,
        max_tokens: int = 8192,
        token_budget: int = 1024,
        dtype: str = "float32",
        use_store: bool = True,
    ) -> None:
        if window < 2 or not 0 < stride < window:
            raise ValueError(f"need window >= 2 and 0 < stride < window (got window={window}, stride={stride})")
        if max_tokens < 1 or token_budget < 1:
            raise ValueError("max_tokens and token_budget must be positive")
        self.model_name = model
        self.window = window
        self.stride = stride
        self.max_tokens = max_tokens
        self.token_budget = token_budget
        self.dtype = dtype
        self.use_store = use_store
        self.tokens_scored = 0
        self.tokens_forwarded = 0

    def lm(self) -> LoadedLM:
        return load_causal_lm(self.model_name, dtype=self.dtype, device=torch_device())

    def _effective_window(self, lm: LoadedLM) -> int:
        limit = getattr(lm.model.config, "max_position_embeddings", None)
        return min(self.window, int(limit)) if limit else self.window

    def signature(self) -> JSONObject:
        lm = self.lm()
        import torch
        import transformers

        return {
            "metric": "perplexity",
            "model": lm.model_id,
            "model_sha256": lm.sha256,
            "tokenizer": type(lm.tokenizer).__name__,
            "window": self._effective_window(lm),
            "stride": self.stride,
            "max_tokens": self.max_tokens,
            "dtype": self.dtype,
            "weights": lm.weights,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        }

    def _stored(
        self, lm: LoadedLM, texts: Sequence[str], window: int, stride: int
    ) -> tuple[Any, dict[int, str], dict[int, Any]]:
        """The run store, each text's key, and the results already stored (only for models with a pinned sha256)."""
        from ..store import content_key, default_store

        store = default_store() if self.use_store and lm.sha256 else None
        if store is None:
            return None, {}, {}
        params = {"window": window, "stride": stride, "dtype": self.dtype}
        model = {"id": lm.model_id, "sha256": lm.sha256, "weights": lm.weights}
        keys = {i: content_key("perplexity", params, model, t) for i, t in enumerate(texts) if t.strip()}

        def nll_and_count(v: Any) -> bool:  # [summed NLL, scored tokens]
            return (
                isinstance(v, list)
                and len(v) == 2
                and isinstance(v[0], int | float)
                and isinstance(v[1], int)
                and v[1] > 0
            )

        stored = store.get_many(list(keys.values()), valid=nll_and_count)
        return store, keys, {i: stored[k] for i, k in keys.items() if k in stored}

    def _segments(
        self,
        texts: Sequence[str],
        encoded: Sequence[Sequence[int]],
        found: dict[int, Any],
        bos: int | None,
        window: int,
        stride: int,
        reason: list[str | None],
    ) -> list[_Segment]:
        """The windows to forward for every text not already stored; why a text gets none goes into ``reason``."""
        segments: list[_Segment] = []
        for index, ids in enumerate(encoded):
            if index in found:
                continue
            ids = list(ids)
            n_scored = len(ids) - 1  # the first token is never predicted
            if not texts[index].strip() or n_scored < 1 or (bos is not None and ids == [bos]):
                reason[index] = "no tokens to score (empty text)"
                continue
            if n_scored > self.max_tokens:
                reason[index] = f"too long: {n_scored} tokens > max_tokens {self.max_tokens} (raise --ppl-max-tokens)"
                continue
            for begin, end, score_from in plan_windows(len(ids), window=window, stride=stride):
                segments.append(_Segment(index, ids[begin:end], score_from - begin))
        return segments

    def _forward(
        self, model: Any, batch: list[_Segment], pad_id: int, nll: np.ndarray, count: np.ndarray, hook: ProgressHook
    ) -> None:
        """One padded batch through the LM; each segment's summed NLL and scored tokens added to its text's."""
        import torch

        longest = len(batch[0].ids)
        device = next(model.parameters()).device  # where counterfair --device put the LM
        input_ids = torch.full((len(batch), longest), pad_id, dtype=torch.long, device=device)
        attention = torch.zeros((len(batch), longest), dtype=torch.long, device=device)
        labels = torch.full((len(batch), longest), -100, dtype=torch.long, device=device)
        for row, seg in enumerate(batch):
            length = len(seg.ids)
            input_ids[row, :length] = torch.tensor(seg.ids, device=device)
            attention[row, :length] = 1
            labels[row, seg.score_from : length] = input_ids[row, seg.score_from : length]
        # targets[t] is the token that position t predicts (no shifted copy of anything)
        targets = torch.full_like(labels, -100)
        targets[:, :-1] = labels[:, 1:]
        body, head = _body_and_head(model)
        if body is not None:
            # the vocabulary projection only for the scored positions of the whole batch (no padding), LOGIT_CHUNK
            # rows at a time: a 262k-token vocabulary made a 4 x 256 batch's logits 1 GiB
            hidden = body(input_ids=input_ids, attention_mask=attention, use_cache=False).last_hidden_state
            cap = getattr(model.config, "final_logit_softcapping", None)
            scored = targets != -100
            picked, wanted = hidden[scored], targets[scored]
            losses = torch.empty(len(wanted), dtype=torch.float32, device=device)
            for start in range(0, len(wanted), LOGIT_CHUNK):
                logits = head(picked[start : start + LOGIT_CHUNK]).float()
                if cap is not None:
                    logits = torch.tanh(logits / cap) * cap
                losses[start : start + LOGIT_CHUNK] = torch.nn.functional.cross_entropy(
                    logits, wanted[start : start + LOGIT_CHUNK], reduction="none"
                )
            per_row = torch.zeros(len(batch), dtype=torch.float64, device=device).index_add_(
                0, scored.nonzero()[:, 0], losses.double()
            )
            for row, seg in enumerate(batch):
                self._add(seg.text_index, float(per_row[row]), int(scored[row].sum()), nll, count, hook)
            del hidden, picked
        else:  # a model whose body and head are not exposed: whole logits, one row's loss at a time
            logits = model(input_ids=input_ids, attention_mask=attention, use_cache=False).logits
            for row, seg in enumerate(batch):
                row_logits = logits[row] if logits.dtype == torch.float32 else logits[row].float()
                loss_t = torch.nn.functional.cross_entropy(row_logits, targets[row], reduction="sum")
                self._add(seg.text_index, float(loss_t), int((targets[row] != -100).sum()), nll, count, hook)
            del logits
        self.tokens_forwarded += int(attention.sum())

    def _add(
        self, index: int, loss: float, scored: int, nll: np.ndarray, count: np.ndarray, hook: ProgressHook
    ) -> None:
        nll[index] += loss
        count[index] += scored
        self.tokens_scored += scored
        hook.advance(scored)

    def score(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> PerplexityResult:
        """Perplexity per text; ``progress`` is told the total tokens, then each batch's."""
        import torch

        lm = self.lm()
        tokenizer = lm.tokenizer
        window = self._effective_window(lm)
        stride = min(self.stride, window - 1)
        n = len(texts)
        nll = np.zeros(n)
        count = np.zeros(n, dtype=int)
        reason: list[str | None] = [None] * n
        encoded = tokenizer(list(texts), add_special_tokens=True)["input_ids"] if n else []
        bos = getattr(tokenizer, "bos_token_id", None)

        store, keys, found = self._stored(lm, texts, window, stride)
        for index, value in found.items():
            nll[index], count[index] = value
        segments = self._segments(texts, encoded, found, bos, window, stride, reason)
        segments.sort(key=lambda s: len(s.ids), reverse=True)
        hook = progress or NullProgress()
        hook.start(f"perplexity ({lm.model_id})", sum(len(s.ids) - s.score_from for s in segments))
        pad_id = tokenizer.pad_token_id
        if pad_id is None:
            pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        start = 0
        with torch.inference_mode():
            while start < len(segments):
                size = max(1, self.token_budget // len(segments[start].ids))  # longest first: the batch's width
                batch = segments[start : start + size]
                start += len(batch)
                self._forward(lm.model, batch, pad_id, nll, count, hook)

        if store is not None:
            store.put_many(
                [
                    (keys[i], "perplexity", [float(nll[i]), int(count[i])])
                    for i in keys
                    if i not in found and count[i] > 0
                ]
            )
        ppl = np.full(n, math.nan)
        ok = count > 0
        ppl[ok] = np.exp(nll[ok] / count[ok])
        nll[~ok] = math.nan
        return PerplexityResult(perplexity=ppl, nll=nll, n_tokens=count, reason=reason)


class PerplexityWorker:
    """Builds a perplexity scorer once (per process or Ray actor) and scores batches of texts (``evaluate``'s
    perplexity stage: the card's :class:`~counterfair.metrics.cards.ModelScoring`)."""

    def __init__(self, model: str, window: int, stride: int, max_tokens: int, token_budget: int, dtype: str) -> None:
        self.scorer = PerplexityScorer(
            model, window=window, stride=stride, max_tokens=max_tokens, token_budget=token_budget, dtype=dtype
        )

    def __call__(self, texts: list[str], progress: ProgressHook | None = None) -> tuple[PerplexityResult, JSONObject]:
        return self.scorer.score(texts, progress=progress), self.scorer.signature()
