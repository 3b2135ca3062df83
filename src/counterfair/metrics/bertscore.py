"""BERTScore with the packaged all-MiniLM-L6-v2 encoder, one scorer per configuration per process.

BERTScore (Zhang et al., 2020) matches each token embedding of the candidate to its most similar token of
the reference (precision) and vice versa (recall), F1 their harmonic mean. We use the bert-score package
with MiniLM's 6th (last) layer, no idf weighting and no baseline rescaling (bert-score has no baseline file
for this encoder), so values are raw cosine similarities, mostly between 0.5 and 1.

The encoder reads at most 512 wordpieces: longer texts are scored on their first 512, and such pairs are
flagged in ``truncated`` so that the caller can say so.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..jsontypes import JSONObject
from ..language_registry import get_language
from ..models import get_model_info, package_version, quiet_loading, torch_device
from ..progress import NullProgress, ProgressHook

DEFAULT_ENCODER = "all-minilm-l6-v2"

_SCORERS: dict[tuple[str, int, bool], Any] = {}
_LOCK = threading.Lock()


@dataclass
class BERTScoreResult:
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    truncated: np.ndarray

    def row_failures(self) -> list[str | None]:
        return [None] * len(self.f1)

    def row_notes(self) -> list[str | None]:
        """A pair longer than the encoder reads: scored on its beginning, said on its row."""
        return ["bertscore: longer than the encoder's 512 wordpieces, truncated" if t else None for t in self.truncated]

    def notice(self) -> str | None:
        cut = int(self.truncated.sum())
        return f"bertscore: {cut} pairs exceed 512 wordpieces and were scored on their first 512" if cut else None


def _model_path(model: str) -> tuple[str, str | None]:
    from pathlib import Path

    candidate = Path(model).expanduser()
    if candidate.exists():
        return str(candidate), None
    info = get_model_info(model)
    return str(info.path()), info.name


class BERTScoreScorer:
    """BERTScore P/R/F1 of candidates against references; the encoder loads once and is reused."""

    def __init__(
        self,
        model: str = DEFAULT_ENCODER,
        *,
        num_layers: int = 6,
        batch_size: int = 64,
        idf: bool = False,
    ) -> None:
        self.model = model
        self.num_layers = num_layers
        self.batch_size = batch_size
        self.idf = idf
        self.language = "en"
        self.covers_language = True
        self.note: str | None = None  # why the encoder does not cover the language, when it does not

    @classmethod
    def for_language(cls, language: str | None, **kwargs: Any) -> BERTScoreScorer:
        """The scorer with the encoder for ``language`` (:func:`counterfair.language_registry.bertscore_encoder`): the
        packaged MiniLM for English; for French and German a multilingual encoder found offline, else MiniLM with
        ``covers_language`` False and a ``note`` saying so."""
        from ..language_registry import bertscore_encoder, get_language

        choice = bertscore_encoder(language)
        scorer = cls(choice.model, num_layers=choice.num_layers, **kwargs)
        scorer.language = get_language(language).code
        scorer.covers_language, scorer.note = choice.covers_language, choice.note
        return scorer

    def scorer(self) -> Any:
        path, _ = _model_path(self.model)
        key = (path, self.num_layers, self.idf)
        with _LOCK:
            if key not in _SCORERS:
                import warnings

                from bert_score import BERTScorer

                with warnings.catch_warnings(), quiet_loading():
                    warnings.simplefilter("ignore")
                    _SCORERS[key] = BERTScorer(
                        model_type=path,
                        num_layers=self.num_layers,
                        idf=self.idf,
                        batch_size=self.batch_size,
                        device=torch_device(),
                        lang="en",
                    )
            return _SCORERS[key]

    def signature(self) -> JSONObject:
        path, name = _model_path(self.model)
        signature: JSONObject = {
            "metric": "bertscore",
            "model": name or path,
            "num_layers": self.num_layers,
            "idf": self.idf,
            "rescale_with_baseline": False,
            "max_wordpieces": int(self.scorer()._tokenizer.model_max_length),
            "bert_score": package_version("bert-score"),
        }
        if not get_language(self.language).default:
            signature |= {"language": self.language, "encoder_covers_language": self.covers_language}
        return signature

    def score(
        self, candidates: Sequence[str], references: Sequence[str], *, progress: ProgressHook | None = None
    ) -> BERTScoreResult:
        if len(candidates) != len(references):
            raise ValueError("candidates and references differ in length")
        hook = progress or NullProgress()
        n = len(candidates)
        if n == 0:
            empty = np.zeros(0)
            return BERTScoreResult(empty, empty, empty, np.zeros(0, dtype=bool))
        scorer = self.scorer()
        tokenizer = scorer._tokenizer
        limit = int(tokenizer.model_max_length)
        lengths_c = [len(ids) for ids in tokenizer(list(candidates), add_special_tokens=True)["input_ids"]]
        lengths_r = [len(ids) for ids in tokenizer(list(references), add_special_tokens=True)["input_ids"]]
        truncated = np.array([a > limit or b > limit for a, b in zip(lengths_c, lengths_r, strict=True)])
        out = np.full((n, 3), np.nan)
        store, keys = self._store_keys(candidates, references)

        def three_scores(v: Any) -> bool:
            return isinstance(v, list) and len(v) == 3 and all(isinstance(x, int | float) for x in v)

        found = store.get_many(list(keys.values()), valid=three_scores) if store is not None else {}
        todo = [i for i in range(n) if keys.get(i) not in found]
        for i in range(n):
            if keys.get(i) in found:
                out[i] = found[keys[i]]
        hook.start("bertscore", len(todo))
        chunk = max(self.batch_size * 4, 1)
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            p, r, f = scorer.score(
                [candidates[i] for i in part], [references[i] for i in part], batch_size=self.batch_size
            )
            out[part] = np.stack([p.numpy(), r.numpy(), f.numpy()], axis=1)
            if store is not None:
                store.put_many([(keys[i], "bertscore", out[i].tolist()) for i in part])
            hook.advance(len(part))
        return BERTScoreResult(out[:, 0].astype(float), out[:, 1].astype(float), out[:, 2].astype(float), truncated)

    def _store_keys(self, candidates: Sequence[str], references: Sequence[str]) -> tuple[Any, dict[int, str]]:
        from ..store import content_key, default_store

        store = default_store()
        _, name = _model_path(self.model)
        if store is None or name is None:  # a model given by path has no pinned identity: not stored
            return None, {}
        model = {"id": name, "sha256": get_model_info(name).sha256}
        params = {"num_layers": self.num_layers, "idf": self.idf}
        return store, {
            i: content_key("bertscore", params, model, f"{c}\x00{r}")
            for i, (c, r) in enumerate(zip(candidates, references, strict=True))
        }


class BERTScoreWorker:
    """Builds a BERTScore scorer once (per process or Ray actor) and scores batches of (candidate, reference) pairs
    (``evaluate``'s bertscore stage: the card's :class:`~counterfair.metrics.cards.ModelScoring`)."""

    def __init__(self, model: str, batch_size: int) -> None:
        self.scorer = BERTScoreScorer(model, batch_size=batch_size)

    def __call__(
        self, pairs: list[tuple[str, str]], progress: ProgressHook | None = None
    ) -> tuple[BERTScoreResult, JSONObject]:
        result = self.scorer.score([c for c, _ in pairs], [r for _, r in pairs], progress=progress)
        return result, self.scorer.signature()
