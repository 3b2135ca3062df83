"""Automatic filters and ranking of candidate counterfactuals (paper 000 §3.3, App. A.1, A.3, B.3).

Rule filters: no text inside braces, punctuation or emoji only (no letter or digit), a verbatim repeat of the input,
prompt regurgitation ("here is some text", "rewrite it", ...). Score filters: BLEU >= 0.5 and BERTScore F1 >= 0.5
against the original, attribute-reference probability < 0.5. Survivors are ranked by mean(BLEU, BERTScore F1).
Every candidate keeps every reason it failed, so a user can see why it was dropped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..detectors import AttributeDetector
from ..metrics.bertscore import BERTScoreScorer
from ..metrics.functional import sentence_bleu

REGURGITATION = ("here is some text", "rewrite it", "here is a rewrite", "rewritten text", "here's a rewrite")


@dataclass(frozen=True)
class FilterConfig:
    min_bleu: float = 0.5
    min_bertscore: float = 0.5
    max_attribute_prob: float = 0.5
    regurgitation: tuple[str, ...] = REGURGITATION


@dataclass
class Verdict:
    reasons: list[str] = field(default_factory=list)
    bleu: float = math.nan
    bertscore_f1: float = math.nan
    attribute_prob: float = math.nan

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def rank_score(self) -> float:
        """mean(BLEU, BERTScore F1): the ranking of paper 000 App. B.3."""
        return (self.bleu + self.bertscore_f1) / 2.0

    @property
    def status(self) -> str:
        return "ok" if self.passed else "filtered:" + "+".join(self.reasons)

    def nearness(self, config: FilterConfig) -> float:
        """How near the candidate came to passing every filter, 0 to 1: the smallest of BLEU over its minimum,
        BERTScore over its minimum and (1 - attribute probability) over (1 - its maximum), each capped at 1; 1 when it
        passed, 0 when a rule rejected it (no braced text, a verbatim repeat, ...) or it still names the attribute
        without a probability. Generation samples a text again only while one of its candidates came near
        (``GenerateOptions.retry_nearness``)."""
        if self.passed:
            return 1.0
        score_reasons = ("bleu_below", "bertscore_below", "references_attribute", "attribute_unknown")
        if any(not r.startswith(score_reasons) for r in self.reasons):
            return 0.0
        parts = [1.0]
        if not math.isnan(self.bleu) and config.min_bleu > 0:
            parts.append(self.bleu / config.min_bleu)
        if not math.isnan(self.bertscore_f1) and config.min_bertscore > 0:
            parts.append(self.bertscore_f1 / config.min_bertscore)
        if not math.isnan(self.attribute_prob) and config.max_attribute_prob < 1:
            parts.append((1 - self.attribute_prob) / (1 - config.max_attribute_prob))
        elif "references_attribute" in self.reasons:
            parts.append(0.0)
        return max(0.0, min(parts))


_WORD = re.compile(r"[^\W\d_]{2,}|\d")


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def rule_reasons(source: str, candidate: str | None, *, config: FilterConfig = FilterConfig()) -> list[str]:
    """The rule filters' reasons for rejecting ``candidate`` (empty when it passes)."""
    if candidate is None:
        return ["no_braced_text"]
    if not candidate.strip():
        return ["empty"]
    reasons = []
    if not _WORD.search(candidate):  # no word of two letters or a number: "...", "🙂", a kaomoji like ¯\\_(ツ)_/¯
        reasons.append("punctuation_or_emoji_only")
    if _normal(candidate) == _normal(source):
        reasons.append("verbatim_repeat")
    low = candidate.lower()
    if any(pattern in low for pattern in config.regurgitation):
        reasons.append("prompt_regurgitation")
    return reasons


class CandidateFilter:
    """Scores candidates (BLEU, BERTScore, attribute reference) and gives each a :class:`Verdict`."""

    def __init__(
        self,
        config: FilterConfig | None = None,
        *,
        detector: AttributeDetector | None = None,
        bertscore: BERTScoreScorer | None = None,
    ) -> None:
        self.config = config or FilterConfig()
        self.detector = detector
        self.bertscore = bertscore or BERTScoreScorer()

    @property
    def note_detector(self) -> AttributeDetector | None:
        """The detector of :meth:`attribute_verdicts` (methods the filters do not judge) and the first tier of
        :meth:`judge`: ``keyword+llm``'s word list (its LLM is asked only where its answer can decide a verdict), else
        the filter's own."""
        return getattr(self.detector, "keyword", self.detector)

    @property
    def tiered(self) -> bool:
        """Whether the detector has a cheaper first tier (:attr:`note_detector`) that :meth:`judge` asks first."""
        return self.detector is not None and self.note_detector is not self.detector

    def attribute_verdicts(self, candidates: Sequence[str | None]) -> list[Verdict]:
        """Verdicts that filter nothing but carry the attribute probability of :attr:`note_detector` (no BLEU or
        BERTScore)."""
        verdicts = [Verdict() for _ in candidates]
        scored = [i for i, c in enumerate(candidates) if c is not None and c.strip()]
        detector = self.note_detector
        if detector is not None and scored:
            probs = detector.reference_proba([candidates[i] or "" for i in scored])
            for k, i in enumerate(scored):
                verdicts[i].attribute_prob = float(probs[k])
        return verdicts

    def judge(self, sources: Sequence[str], candidates: Sequence[str | None]) -> list[Verdict]:
        if len(sources) != len(candidates):
            raise ValueError("sources and candidates differ in length")
        cfg = self.config
        verdicts = [Verdict(rule_reasons(s, c, config=cfg)) for s, c in zip(sources, candidates, strict=True)]
        scored = [i for i, c in enumerate(candidates) if c is not None and c.strip()]
        if not scored:
            return verdicts
        cand = [candidates[i] or "" for i in scored]
        src = [sources[i] for i in scored]
        bleu = sentence_bleu(cand, src)
        f1 = self.bertscore.score(cand, src).f1
        open_ = [
            not verdicts[i].reasons and bleu[k] >= cfg.min_bleu and f1[k] >= cfg.min_bertscore
            for k, i in enumerate(scored)
        ]
        attr = self._attribute(cand, open_)
        for k, i in enumerate(scored):
            verdict = verdicts[i]
            verdict.bleu, verdict.bertscore_f1, verdict.attribute_prob = float(bleu[k]), float(f1[k]), float(attr[k])
            if verdict.bleu < cfg.min_bleu:
                verdict.reasons.append(f"bleu_below_{cfg.min_bleu:g}")
            if verdict.bertscore_f1 < cfg.min_bertscore:
                verdict.reasons.append(f"bertscore_below_{cfg.min_bertscore:g}")
            if self.detector is not None:
                if math.isnan(verdict.attribute_prob):
                    if open_[k] or not self.tiered:  # a tiered detector leaves unasked what is rejected anyway
                        verdict.reasons.append("attribute_unknown")
                elif verdict.attribute_prob >= cfg.max_attribute_prob:
                    verdict.reasons.append("references_attribute")
        return verdicts

    def _attribute(self, texts: list[str], open_: list[bool]) -> np.ndarray:
        """The attribute probability of each text. A detector with a cheaper part (keyword+llm's word list) asks its
        costly part only about the texts every other filter passed (``open_``) and the word list did not flag: the
        others are rejected whatever it would say. A text the word list flags gets its 1 (what the whole detector
        gives); one nobody asked gets NaN (not asked, written empty), never a guessed 0."""
        if self.detector is None:
            return np.full(len(texts), math.nan)
        if not self.tiered:
            return self.detector.reference_proba(texts)
        assert self.note_detector is not None
        flagged = self.note_detector.reference_proba(texts)
        attr = np.where(flagged >= self.config.max_attribute_prob, flagged, math.nan)
        ask = [k for k, is_open in enumerate(open_) if is_open and math.isnan(attr[k])]
        if ask:
            attr[ask] = self.detector.reference_proba([texts[k] for k in ask])
        return attr


def best(verdicts: Sequence[Verdict]) -> int | None:
    """Index of the passing candidate with the highest mean(BLEU, BERTScore F1), or ``None``."""
    passing = [i for i, v in enumerate(verdicts) if v.passed]
    return max(passing, key=lambda i: (verdicts[i].rank_score, -i)) if passing else None
