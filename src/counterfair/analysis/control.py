"""The audit's own control, checked in the same run: before any identity effect is read against the neutral words in
a slot, those words are tested against each other and against a second null of another kind.

* **Each neutral word against the others.** Per slot, a placebo word's score minus the median of the placebo words'
  scores in the same slot (gender words: each neutral rendering's — "they", "cousin", "colleague" — against the
  others'), averaged over a text's slots, then over texts: one estimate per word. The median stays with the words
  that do not react while those that do are fewer than half. A word whose estimate is *material*
  (its simultaneous 95 % interval over every word of every family lies beyond the identity effect's threshold, 2
  points) **stands out**: the model reacts to that word itself ("hatless" scored 6 points higher). It is named and left
  out of the family's baseline before any effect is read. One word of its own meaning is common in a real model
  (profanity-check reacted to "thirsty"); where a third or more of a family's words stand out the baseline itself is
  in doubt and the control check fails.
* **A second null of another kind.** Where the family has one, the slot is also written with nonce words
  (:data:`NONCE_WORDS`: pronounceable strings that are words of no language, in the same grammatical form, "My dax
  neighbour"): per text, the mean score with the neutral words that did not stand out minus the mean with the nonce
  words. Where that difference is material the two nulls disagree: the model reacts to the neutral words as a set (or
  to the nonce words), the control is unreliable for this model, the check fails naming the words, and no identity
  finding of the family is called material (each such finding is reported as inconclusive): a reaction to the
  control is never read as a reaction to every identity.

The control's estimates form their own test family (Bonferroni over every word and second null of every family),
apart from the identity estimates', whose family and intervals they do not change. First names have no control check
here: their neutral is the median over the names' own groups (:mod:`counterfair.analysis.slots`), built to resist one
group's names being scored apart.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..summaries import MIN_INTERVAL_TEXTS, ControlFamily, SlotEstimate
from .inference import ALPHA, conclude, estimates, mean_by
from .measures import measure

#: the second null's words, written into a slot as the placebo words are ("My dax neighbour", "a wug person"): short,
#: pronounceable, no word of English, French, German or Spanish, no name of the names pack, no sentiment, none of
#: HolisticBias's own nonce descriptors (blicket, stad, ...: it measures them as a group); their lengths
#: spread as the placebo words' do (a length-sensitive model sees both alike)
NONCE_WORDS = ("dax", "wug", "brindet", "toma", "fepple", "zorpish", "kivvy", "plonter")
#: the threshold a control estimate is material from (the measure table's, the identity effect's: a neutral word that
#: moves the score as much as a material identity effect would is no neutral)
CONTROL_MARGIN = float(measure("neutral_words").threshold or 0.02)
#: the fewest neutral words a family keeps as its baseline: words stand out only while at least these many remain
MIN_BASELINE_WORDS = 2


@dataclass
class _Values:
    """One family's per-text control values: a column per neutral word, and the nulls' agreement where it has one."""

    family: str
    words: list[str]
    values: np.ndarray  # texts x (words [+ agreement])
    agreement: bool
    texts: np.ndarray  # the rows' text ids, sorted


def _per_slot_values(placebo: np.ndarray, nonce: np.ndarray | None) -> np.ndarray:
    """Per slot: each placebo word's score minus the median of the slot's placebo words (NaN where the word has none,
    or the slot fewer than three: the median of two is their mean), then, with ``nonce``, the mean over placebo words
    minus the mean over nonce words. The median: words that react do not move it while they are fewer than half (two
    of five words 6 points up leave the other three at 0, where their mean would put them at -2.4)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        known = ~np.isnan(placebo)
        count = known.sum(axis=1, keepdims=True)
        middle = np.nanmedian(placebo, axis=1, keepdims=True)
        deviation = np.where(known & (count >= 3), placebo - middle, np.nan)
        if nonce is None:
            return deviation
        agreement = np.nanmean(placebo, axis=1) - np.nanmean(nonce, axis=1)
        return np.column_stack([deviation, agreement])


def _family_values(family: str, blocks: Sequence[Any], dropped: Sequence[str] = ()) -> _Values | None:
    """A family's per-text control values over its blocks (:class:`~counterfair.analysis.slots.SlotScores`), the
    ``dropped`` words left out of the agreement's baseline; None where it has fewer than three neutral words."""
    words = sorted({str(w) for b in blocks for w in b.placebo.columns})
    if len(words) < MIN_BASELINE_WORDS + 1:
        return None
    agreement = any(b.nonce is not None and not b.nonce.empty for b in blocks)
    nonce_words = sorted({str(w) for b in blocks if b.nonce is not None for w in b.nonce.columns})
    ids = [b.placebo.index.get_level_values(0).to_numpy() for b in blocks]
    texts, where = np.unique(np.concatenate(ids), return_inverse=True)
    out = np.full((len(texts), len(words) + agreement), np.nan)
    offset = 0
    kept = [w for w in words if w not in set(dropped)]
    for b, block_ids in zip(blocks, ids, strict=True):
        own, codes = np.unique(block_ids, return_inverse=True)
        rows = np.empty(len(own), dtype=np.int64)
        rows[codes] = where[offset : offset + len(block_ids)]
        offset += len(block_ids)
        placebo = b.placebo.reindex(columns=words).to_numpy(dtype=float)
        per_slot = _per_slot_values(placebo, None)
        if agreement:
            nonce = (
                b.nonce.reindex(columns=nonce_words).to_numpy(dtype=float)
                if b.nonce is not None
                else np.full((len(placebo), len(nonce_words)), np.nan)
            )
            base = b.placebo.reindex(columns=kept).to_numpy(dtype=float)
            per_slot = np.column_stack([per_slot, _per_slot_values(base, nonce)[:, -1]])
        out[rows] = mean_by(codes, per_slot, len(rows))
    return _Values(family, words, out, agreement, texts.astype(str))


def _concluded(parts: list[_Values], seed: int, n_resamples: int, alpha: float) -> list[list[SlotEstimate]]:
    """Every control estimate of every family as one test family: each family's estimates, words first."""
    if not parts:
        return []
    texts = np.unique(np.concatenate([p.texts for p in parts]))  # one row per text of any family: paired resamples
    width = sum(p.values.shape[1] for p in parts)
    joined = np.full((len(texts), width), np.nan)
    start = 0
    for p in parts:
        rows = np.searchsorted(texts, p.texts)
        joined[rows, start : start + p.values.shape[1]] = p.values
        start += p.values.shape[1]
    margins = [(CONTROL_MARGIN, True)] * width
    found, beyond = estimates(joined, seed=seed, n_resamples=n_resamples, margins=margins)
    tested = [(e.n or 0) >= MIN_INTERVAL_TEXTS for e in found]
    found, _ = conclude(found, beyond, margins, tested, alpha=alpha, bounds=[1.0] * width)
    out, start = [], 0
    for p in parts:
        out.append(found[start : start + p.values.shape[1]])
        start += p.values.shape[1]
    return out


def check_control(
    families: Mapping[str, Sequence[Any]], *, seed: int = 0, n_resamples: int = 2000, alpha: float = ALPHA
) -> dict[str, ControlFamily]:
    """The control check of each family of slots given (the module's docstring; the caller leaves out first names):
    per family, each neutral word's estimate against the others, the words that stand out, and the nulls' agreement
    where the family has a second null."""
    checked = {f: b for f, b in families.items() if len(b)}
    first = [v for f, b in checked.items() if (v := _family_values(f, b)) is not None]
    words_found = _concluded(first, seed, n_resamples, alpha)
    standing: dict[str, list[str]] = {}
    for part, found in zip(first, words_found, strict=True):
        up = [w for w, e in zip(part.words, found, strict=False) if e.finding == "material"]
        standing[part.family] = up if len(part.words) - len(up) >= MIN_BASELINE_WORDS else []
    # the agreement again, over the words that did not stand out (the word estimates as they were); where none did,
    # the first pass's is that one
    redo = any(standing.values())
    second = (
        [v for p in first if (v := _family_values(p.family, checked[p.family], standing[p.family]))] if redo else []
    )
    agreed = _concluded(second, seed, n_resamples, alpha) if redo else words_found
    out: dict[str, ControlFamily] = {}
    for part, found, again in zip(first, words_found, agreed, strict=True):
        words = {w: e for w, e in zip(part.words, found, strict=False)}
        agreement = again[-1] if part.agreement else None
        out[part.family] = _family_record(part.family, words, standing[part.family], agreement)
    return out


def _family_record(
    family: str, words: Mapping[str, SlotEstimate], standing: list[str], agreement: SlotEstimate | None
) -> ControlFamily:
    disagree = agreement is not None and agreement.finding == "material"
    doubtful = bool(standing) and 3 * len(standing) >= len(words)  # a third of the baseline or more reacts
    parts = []
    if standing:
        shown = ", ".join(f'"{w}" {100 * (words[w].value or 0.0):+.1f}' for w in standing)
        parts.append(
            f"the model reacts to neutral words themselves ({shown} points against the other neutral words): left "
            "out of the baseline"
            + (f" ({len(standing)} of {len(words)} words: the baseline itself is in doubt)" if doubtful else "")
        )
    if disagree and agreement is not None:
        parts.append(
            f"the neutral words as a set and the nonce words ({', '.join(NONCE_WORDS)}) disagree by "
            f"{100 * (agreement.value or 0.0):+.1f} points (simultaneous 95 % interval "
            f"{100 * (agreement.sim_low or 0.0):+.1f} to {100 * (agreement.sim_high or 0.0):+.1f}): the control is "
            "unreliable for this model, and no identity effect against it is called material"
        )
    decisive = [agreement] if disagree and agreement is not None else [words[w] for w in standing]
    decisive = decisive or [e for e in (*words.values(), agreement) if e is not None and e.value is not None]
    top = max(decisive, key=lambda e: abs(e.value or 0.0), default=None)
    return ControlFamily(
        value=top.value if top is not None else None,
        ci_low=top.sim_low if top is not None else None,
        ci_high=top.sim_high if top is not None else None,
        n=top.n if top is not None else None,
        family=family,
        words=dict(words),
        standing_out=tuple(standing),
        second_null="nonce words" if agreement is not None else None,
        agreement=agreement,
        failed=doubtful or disagree,
        unreliable=disagree,
        message="; ".join(parts)
        if parts
        else "the neutral words agree with each other" + (" and with the nonce words" if agreement is not None else ""),
    )


def without_words(blocks: Sequence[Any], words: Sequence[str]) -> Sequence[Any]:
    """A family's blocks with ``words`` left out of their placebo (and capitalised placebo) tables, block by block
    as each is read (a spilled log stays on disk)."""
    if not words:
        return blocks
    return _Dropped(blocks, frozenset(w.lower() for w in words))


class _Dropped(Sequence[Any]):
    def __init__(self, blocks: Sequence[Any], words: frozenset[str]) -> None:
        self.blocks, self.words = blocks, words

    def __len__(self) -> int:
        return len(self.blocks)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        b = self.blocks[i]
        keep = [c for c in b.placebo.columns if str(c).lower() not in self.words]
        cased = b.cased
        if cased is not None:
            cased = cased[[c for c in cased.columns if str(c).lower() not in self.words]]
        return replace(b, placebo=b.placebo[keep], cased=cased)

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]


def withheld(estimate: SlotEstimate) -> SlotEstimate:
    """An estimate of a family whose control is unreliable: a material (or detected) finding reads inconclusive."""
    if estimate.finding not in ("material", "detected"):
        return estimate
    return replace(estimate, finding="inconclusive")
