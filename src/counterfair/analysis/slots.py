"""In-slot identity effects: each identity occurrence scored with every term of the set and every placebo word put in
its place, so that a term is compared with a neutral word *in the same sentence, at the same spot*.

A **slot** is one identity term's occurrences in one text ("My gay neighbour brought dinner." has the slot of
``gay``). The audit's identity swaps already write the slot with every other term of the set; the placebo words
(:mod:`counterfair.analysis.placebo`'s built-in set, or ``--placebo FILE``) are written into the same occurrences, in
the same grammatical form ("My tall neighbour brought dinner."). With ``f`` the classifier's probability of the
positive label, ``x[w]`` the slot filled with ``w``, ``T`` the identity terms and ``P`` the placebo words:

1. **identity effect** of a term ``t`` (signed): ``f(x[t]) − mean_p f(x[p])``. Positive: naming the group raises the
   score compared with a neutral word. A group's effect is the mean over its terms, the overall effect the mean over
   every term. The source term counts as any other: ``f(x[source])`` is the original's score. A model that penalises
   every identity mention has an effect on every term; one that penalises the source term cannot cancel it.
2. **disparity beyond placebo**: how much the score varies among identity terms in the slot, the mean
   ``|f(x[t]) − f(x[t'])|`` over pairs of terms (per group: the pairs with one of its terms), minus the same mean over
   pairs of placebo words (placebo-to-placebo swaps: what any edit of that slot does). The paper-001 CTF gap is the
   first half without the second.
3. **flip excess**: the share of pairs of identity terms in a slot whose decisions at the threshold differ, minus the
   share of pairs of placebo words that do.

Each is averaged over a text's slots, then over texts. Intervals: the paired percentile bootstrap over texts (one set
of resamples for every estimate, so a text keeps its terms and placebo words together). Tests: one-sample t-tests over
texts, Holm-corrected over the whole family (every term, group and overall estimate of the three measures) — one
family for "differs from 0", one for "exceeds the materiality threshold".

A **finding** is ``material`` when the data show the estimate *exceeds* the measure's :data:`MATERIAL` threshold (2
probability points for effects and disparity, 5 points of flips; either direction for effects, above the placebo for
disparity and flips): the Holm-adjusted one-sided p-value ``p_material`` is below :data:`ALPHA`. It is ``small`` when
the data show it differs from 0 (``p_adjusted`` below :data:`ALPHA`) but not that it reaches the threshold, and ``not
detected`` otherwise. A model with no identity effect (every true estimate 0, below any threshold) has a material
finding in at most 5 % of audits. ``counterfair audit --fail-if default`` fails on every material finding.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ..editors.registry import swaps_identities
from ..spill import ObjectLog
from ..summaries import MIN_INTERVAL_TEXTS, GateEntry, GateMetric, GateMetrics

ALPHA = 0.05  # the family-wise error rate of the Holm-corrected tests
#: the size from which a detected estimate is material (probability points of the positive label; share of pairs)
MATERIAL = {"identity_effect": 0.02, "disparity": 0.02, "flip_excess": 0.05, "dissimilarity_excess": 0.02}
MEASURES = ("identity_effect", "disparity", "flip_excess")
SIGNED = {"identity_effect"}  # material in either direction; the others only above the placebo
SLOT_COLUMNS = ["input_id", "source_term", "kind", "word", "group", "text", "score"]
_CHUNK = 256  # slots per block of the pairwise differences (a block holds CHUNK x terms x terms values)


# ------------------------------------------------------------------------------------------------ the slot texts


def slot_texts(
    rows: Sequence[Mapping[str, Any]],
    identities: Any,
    placebo: Any,
    *,
    editor: Any = None,
    matches: Mapping[Any, list[Any]] | None = None,
) -> pd.DataFrame:
    """The texts of every slot (columns :data:`SLOT_COLUMNS` but ``score``): for each identity swap's (input, source
    term), the original (``kind`` identity, ``word`` the source term), each identity swap's text (its target term;
    not a term the text names elsewhere, whose swap exchanges the two occurrences and so keeps the source term in the
    text), and each placebo word written into the occurrences the swaps replaced (``kind`` placebo). ``rows``: the
    audit's pair rows (``method``, ``attribute``, ``input_id``, ``source_text``, ``cf_text``, ``source_term``,
    ``target_term``, ``edits``). ``editor`` and ``matches``: as :func:`~counterfair.analysis.placebo.placebo_texts`
    takes them."""
    from ..editors.swap import SwapRefused
    from .placebo import placebo_editor, swapped_matches

    editor = editor if editor is not None else placebo_editor(identities, placebo)
    matches = matches if matches is not None else swapped_matches(rows, editor, identities)
    out: list[SlotRow] = []
    seen: set[tuple[Any, str]] = set()
    for row in rows:
        if not _is_identity_swap(row):
            continue
        key, source = row["input_id"], str(row["source_term"])
        slot = (key, source.lower())
        if slot not in seen:
            seen.add(slot)
            text = row["source_text"]
            out.append(slot_row(key, source, "identity", source, identities.group_of(source), text))
            for word in placebo.words:
                try:
                    new, _ = editor.swap(text, matches.get(key, []), source, word)
                except SwapRefused:  # French/German: an occurrence the word cannot be written into
                    continue
                if new != text:
                    out.append(slot_row(key, source, "placebo", word, None, new))
        target = str(row["target_term"])
        if target.lower() in {m.term.lower() for m in matches.get(key, [])}:
            continue  # a term the text names elsewhere: the swap exchanges the two, so the slot would keep the source
        out.append(slot_row(key, source, "identity", target, identities.group_of(target), row["cf_text"]))
    return pd.DataFrame(out, columns=SLOT_COLUMNS[:-1])


def _is_identity_swap(row: Mapping[str, Any]) -> bool:
    attribute = row.get("attribute", "identity")
    return swaps_identities(row["method"]) and bool(row.get("source_term")) and attribute in (None, "identity")


class SlotRow(TypedDict):
    """One slot text (:data:`SLOT_COLUMNS` but ``score``): the input and the source term whose place it fills, an
    identity term or a placebo word written there, the term's group (None for a placebo word), the text."""

    input_id: Any
    source_term: str
    kind: str
    word: str
    group: str | None
    text: str


def slot_row(key: Any, source: str, kind: str, word: str, group: str | None, text: str) -> SlotRow:
    return {"input_id": key, "source_term": source, "kind": kind, "word": word, "group": group, "text": text}


def scored_slots(slots: pd.DataFrame, score: Mapping[str, float]) -> pd.DataFrame:
    """``slots`` with each text's ``score`` (NaN where the classifier gave none)."""
    out = slots.copy()
    out["score"] = pd.Series([score.get(t, np.nan) for t in out["text"]], index=out.index, dtype=float)
    return out


def rescore_slots(slots: pd.DataFrame, classifier: Any, *, positive_label: str | None = None) -> pd.DataFrame:
    """The same slot texts with ``classifier``'s scores (a frozen slot set scored by another model)."""
    from ..classifiers import as_classifier
    from ..classifiers.labels import positive_index

    clf = as_classifier(classifier)
    index = positive_index(clf.labels, positive_label)
    texts = list(dict.fromkeys(t for t in slots["text"] if isinstance(t, str)))
    proba = clf.predict_proba(texts)
    return scored_slots(slots, {t: float(p[index]) for t, p in zip(texts, proba, strict=True)})


# ------------------------------------------------------------------------------------------------ the estimates


def slot_effects(
    slots: SlotTables,
    *,
    threshold: float = 0.5,
    seed: int = 0,
    n_resamples: int = 2000,
    alpha: float = ALPHA,
    material: Mapping[str, float] | None = None,
) -> dict[str, Any] | None:
    """The three in-slot measures (see the module's docstring) from a scored slot table (:data:`SLOT_COLUMNS`):
    ``{measure: {"overall": entry, "by_group": {...}, "by_term": {...}}}`` (``by_term`` for the identity effect
    only), each entry ``value``, ``ci_low``, ``ci_high``, ``n`` (texts), ``p_value``, ``p_adjusted`` (Holm, against
    0), ``p_material`` (Holm, one-sided, beyond the threshold) and ``finding``;
    a term's entry also ``score`` and ``placebo_score`` (the mean scores it compares). ``None`` when no slot has both
    an identity and a placebo score."""
    found = joint_slot_effects(
        {"": slots}, threshold=threshold, seed=seed, n_resamples=n_resamples, alpha=alpha, material=material
    )
    return found[""]


def joint_slot_effects(
    tables: Mapping[str, SlotTables],
    *,
    threshold: float = 0.5,
    seed: int = 0,
    n_resamples: int = 2000,
    alpha: float = ALPHA,
    material: Mapping[str, float] | None = None,
    extra: Mapping[str, pd.DataFrame] | None = None,
    within: bool = False,
) -> dict[str, dict[str, Any] | None]:
    """:func:`slot_effects` of several outcomes measured on the same texts (an LLM application's score, decision and
    refusal of each slot's responses), as one test family: one set of bootstrap resamples of the texts for every
    estimate of every outcome, Holm's correction over all of them (``tests`` counts the whole family), so the chance
    of a false material finding anywhere stays at ``alpha``. Per name of ``tables``: its measures, or ``None``.
    ``extra``: more estimates in the family, as :func:`per_text_values` gives them (one row per text id, columns
    ``(measure, level, name)`` with ``level`` overall or group; e.g. a response similarity's dissimilarity excess),
    reported under their name with the measures they hold. ``within``: a group's disparity and flip excess over the
    pairs of its own terms only, so that one group scored apart does not make every other group's disparity material
    (the pairs with one of its terms, as the classifier audit measures, include the pairs with that group's terms)."""
    thresholds = {**MATERIAL, **(material or {})}
    built = {name: _per_text(table, threshold, within) for name, table in tables.items()}
    for name, frame in (extra or {}).items():
        built[name] = _given(frame)
    present = {name: b for name, b in built.items() if b is not None}
    out: dict[str, dict[str, Any] | None] = {name: None for name in built}
    if not present:
        return out
    rows = sorted(set().union(*(b[2]["texts"] for b in present.values())))
    at = {t: i for i, t in enumerate(rows)}
    blocks, owners = [], []
    for name, (values, columns, info) in present.items():
        owners += [(name, column) for column in columns]
        if len(present) == 1 and info["texts"] == rows:  # one table over every text (the audit's): no copy (read
            blocks.append(values)  # after this for its shape only, it is rounded and filled in place by _estimates)
            break
        block = np.full((len(rows), values.shape[1]), np.nan)
        block[[at[t] for t in info["texts"]]] = values
        blocks.append(block)
    joined = blocks[0] if len(blocks) == 1 else np.hstack(blocks)
    del blocks
    margins = [(thresholds[measure], measure in SIGNED) for _, (measure, _, _) in owners]
    estimates = _estimates(joined, seed=seed, n_resamples=n_resamples, margins=margins)
    adjusted = holm([e["p_value"] for e in estimates])
    beyond = holm([e.pop("p_beyond") for e in estimates])
    tests = int(sum(p is not None for p in adjusted))
    for name, (values, columns, info) in present.items():
        measures = MEASURES if "slots" in info else tuple(dict.fromkeys(m for m, _, _ in columns))
        out[name] = {
            "alpha": alpha,
            "correction": "holm",
            "tests": tests,
            "material": {m: thresholds[m] for m in measures},
            "threshold": threshold,
            "texts": int(values.shape[0]),
            **({"slots": info["slots"], "placebo_words": info["placebo_words"]} if "slots" in info else {}),
            **{m: {"overall": None, "by_group": {}} for m in measures},
        }
        if "slots" in info:
            out[name]["identity_effect"]["by_term"] = {}  # type: ignore[index]
    for (name, (measure, level, key)), estimate, p_adj, p_material in zip(
        owners, estimates, adjusted, beyond, strict=True
    ):
        entry = {**estimate, "p_adjusted": p_adj, "p_material": p_material}
        _place(out[name], measure, level, key, entry, alpha, present[name][2])
    return out


def _given(frame: pd.DataFrame) -> tuple[np.ndarray, list[tuple[str, str, str]], dict[str, Any]] | None:
    """A table of per-text values (:func:`joint_slot_effects`' ``extra``) as :func:`_per_text` builds its own."""
    if frame.empty:
        return None
    ordered = frame.sort_index()
    columns = [(str(c[0]), str(c[1]), str(c[2])) for c in ordered.columns.tolist()]
    return ordered.to_numpy(dtype=float), columns, {"texts": [str(t) for t in ordered.index]}


def _place(
    out: Any, measure: str, level: str, name: str, entry: dict[str, Any], alpha: float, info: Mapping[str, Any]
) -> None:
    """One estimate into its measure's ``overall``, ``by_group`` or ``by_term`` with its finding."""
    entry["finding"] = finding(measure, entry, alpha)
    if level == "term":
        entry |= info["term_scores"][name]
        entry["group"] = info["groups"].get(name)
        out[measure]["by_term"][name] = entry
    elif level == "group":
        out[measure]["by_group"][name] = entry
    else:
        out[measure]["overall"] = entry


def finding(measure: str, entry: Mapping[str, Any], alpha: float = ALPHA) -> str:
    """``material`` (shown to exceed the measure's materiality threshold: the Holm-adjusted one-sided ``p_material``
    is below ``alpha``), ``small`` (shown to differ from 0 — for disparity and flips, to lie above it — by
    ``p_adjusted``, but not to exceed the threshold) or ``not detected``."""
    value = entry.get("value")
    if value is None:
        return "not detected"
    material, p = entry.get("p_material"), entry.get("p_adjusted")
    if material is not None and material < alpha:
        return "material"
    if p is not None and p < alpha and (measure in SIGNED or value > 0):
        return "small"
    return "not detected"


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of the p-values given (``None`` stays ``None`` and is not counted)."""
    known = [(p, i) for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    running, m = 0.0, len(known)
    for rank, (p, i) in enumerate(sorted(known)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


@dataclass
class SlotScores:
    """The slots' scores as the in-slot measures read them: the identity terms' and the placebo words' tables, rows
    (input_id, source_term) sorted, a column per word (lower case); and each identity word's group. Built from a
    scored slot table (:func:`slot_scores`), or from each block of one (an audit over a large input keeps these
    tables, not the slots' texts; the measures take a list of them, :data:`SlotTables`)."""

    identity: pd.DataFrame
    placebo: pd.DataFrame
    word_groups: dict[str, str]


def slot_scores(slots: pd.DataFrame) -> SlotScores | None:
    """The :class:`SlotScores` of a scored slot table; ``None`` when no slot has an identity and a placebo score."""
    ok = slots[np.isfinite(slots["score"].to_numpy(dtype=float))]
    if ok.empty:
        return None
    index = ["input_id", "source_term"]
    ok = ok.assign(input_id=ok["input_id"].astype(str), word=ok["word"].str.lower(), source_term=ok["source_term"])
    tables = [
        ok[ok["kind"] == kind].pivot_table(index=index, columns="word", values="score", aggfunc="mean")
        for kind in ("identity", "placebo")
    ]
    common = tables[0].index.intersection(tables[1].index)
    if common.empty:
        return None
    ident = slots[slots["kind"] == "identity"]
    groups = {
        str(w).lower(): (g if isinstance(g, str) and g else "other")
        for w, g in zip(ident["word"], ident["group"], strict=True)
    }
    return SlotScores(tables[0].loc[common], tables[1].loc[common], groups)


SlotTables = pd.DataFrame | SlotScores | Sequence[SlotScores]  # an ObjectLog of SlotScores is one


def _blocks(slots: SlotTables) -> Sequence[SlotScores]:
    """A scored slot table, one :class:`SlotScores` or blocks of them (an audit over a large input keeps each block's
    tables, not the slots' texts; a text's slots are all in one block) as a sequence of blocks, none empty; an
    :class:`~counterfair.spill.ObjectLog` of them as it is (each block read from disk when it is used)."""
    if isinstance(slots, pd.DataFrame):
        found = slot_scores(slots)
        return [found] if found is not None else []
    if isinstance(slots, SlotScores):
        return [slots]
    if isinstance(slots, ObjectLog):
        return slots
    return [b for b in slots if b is not None]


def _per_text(
    slots: SlotTables, threshold: float, within: bool = False
) -> tuple[np.ndarray, list[tuple[str, str, str]], dict[str, Any]] | None:
    """Each text's value of every estimate (a texts x estimates array, NaN where a text has none; texts sorted), the
    estimates' (measure, level, name), and what the summary reports besides. ``within``: a group's disparity and flip
    excess over the pairs of its own terms (else the pairs with one of its terms). Blocks are taken one at a time,
    each with every block's words as its columns: a text's values are those of the whole table, value for value."""
    blocks = _blocks(slots)
    if not len(blocks):
        return None
    found_terms: set[str] = set()
    found_words: set[str] = set()
    word_groups: dict[str, str] = {}
    ids, slot_count = [], 0
    for b in blocks:  # a pass for the columns and texts, then one for the terms' scores and one for the estimates
        found_terms |= {str(t) for t in b.identity.columns}
        found_words |= {str(w) for w in b.placebo.columns}
        word_groups |= b.word_groups
        ids.append(b.identity.index.get_level_values(0).to_numpy())
        slot_count += len(b.identity)
    terms, words = sorted(found_terms), sorted(found_words)
    groups = {t: word_groups.get(t, "other") for t in terms}
    group_names = sorted(set(groups.values()))
    members = {g: [i for i, t in enumerate(terms) if groups[t] == g] for g in group_names}
    names = _estimate_names(terms, group_names)
    texts, where = np.unique(np.concatenate(ids), return_inverse=True)  # a text is in one block only
    # the terms' mean scores first and their arrays let go, then the estimates: the two are never held at once
    # (at 200,000 texts and 50 terms each of the three arrays is 80 to 128 MB)
    term_scores = _term_scores(blocks, ids, where, terms, words, len(texts))
    values = np.full((len(texts), len(names)), np.nan)
    seen = 0
    for scores, placebo, codes, rows in _each_block(blocks, ids, where, terms, words):
        seen += len(rows)
        values[rows] = _mean_by(codes, _per_slot(scores, placebo, threshold, members, within)[0], len(rows))
    if seen != len(texts):  # a text's values are its slots' means: they must all be in one block
        raise ValueError(f"{seen - len(texts)} texts have slots in more than one block of slot scores")
    info = {
        "slots": slot_count,
        "placebo_words": len(words),
        "term_scores": term_scores,
        "groups": groups,
        "texts": [str(t) for t in texts],
    }
    return values, names, info


def _each_block(
    blocks: Sequence[SlotScores], ids: list[np.ndarray], where: np.ndarray, terms: list[str], words: list[str]
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per block: its identity and placebo scores with every block's words as columns, each slot's text as a code
    among the block's texts, and each of those texts' row among all texts (``where``: every block's slots' rows)."""
    offset = 0
    for block, block_ids in zip(blocks, ids, strict=True):
        scores = block.identity.reindex(columns=terms).to_numpy(dtype=float)
        placebo = block.placebo.reindex(columns=words).to_numpy(dtype=float)
        own, codes = np.unique(block_ids, return_inverse=True)
        rows = np.empty(len(own), dtype=np.int64)
        rows[codes] = where[offset : offset + len(block_ids)]  # each of the block's texts' row among all texts
        offset += len(block_ids)
        yield scores, placebo, codes, rows


def _term_scores(
    blocks: Sequence[SlotScores],
    ids: list[np.ndarray],
    where: np.ndarray,
    terms: list[str],
    words: list[str],
    texts: int,
) -> dict[str, dict[str, float | None]]:
    """Per term, the mean over texts of its score in the text's slots and of those slots' placebo scores."""
    per_term = np.full((texts, len(terms)), np.nan)
    per_term_neutral = np.full((texts, len(terms)), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a slot or a term without values gives NaN, as it should
        for scores, placebo, codes, rows in _each_block(blocks, ids, where, terms, words):
            neutral = np.nanmean(placebo, axis=1)  # as _per_slot takes it
            per_term[rows] = _mean_by(codes, scores, len(rows))
            per_term_neutral[rows] = _mean_by(codes, np.where(np.isnan(scores), np.nan, neutral[:, None]), len(rows))
        return {
            t: {"score": _mean_or_none(per_term[:, i]), "placebo_score": _mean_or_none(per_term_neutral[:, i])}
            for i, t in enumerate(terms)
        }


def _estimate_names(terms: list[str], group_names: list[str]) -> list[tuple[str, str, str]]:
    """The (measure, level, name) of each estimate, in the order :func:`_per_slot` gives their columns."""
    names: list[tuple[str, str, str]] = []
    for measure in MEASURES:
        names.append((measure, "overall", "overall"))
        names += [(measure, "group", g) for g in group_names]
        if measure == "identity_effect":
            names += [(measure, "term", t) for t in terms]
    return names


def _per_slot(
    scores: np.ndarray, placebo: np.ndarray, threshold: float, members: Mapping[str, list[int]], within: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Each slot's value of every estimate (slots x estimates, in :func:`_estimate_names`' order) and each slot's
    mean placebo score, from its identity terms' and placebo words' scores."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a slot or a term without values gives NaN, as it should
        neutral = np.nanmean(placebo, axis=1)
        effect = scores - neutral[:, None]
        spread, placebo_spread = _spread(scores), _spread(placebo)
        decisions = _decisions(scores, threshold)
        flips, placebo_flips = _spread(decisions), _spread(_decisions(placebo, threshold))
        columns: list[np.ndarray] = []

        def add(per_term: np.ndarray, baseline: np.ndarray | None, raw: np.ndarray | None = None) -> None:
            base = 0.0 if baseline is None else baseline
            columns.append(np.nanmean(per_term, axis=1) - base)
            for own in members.values():
                part = per_term[:, own] if raw is None else _spread(raw[:, own])
                columns.append(np.nanmean(part, axis=1) - base)

        add(effect, None)
        columns += [effect[:, i] for i in range(effect.shape[1])]
        add(spread, np.nanmean(placebo_spread, axis=1), scores if within else None)
        add(flips, np.nanmean(placebo_flips, axis=1), decisions if within else None)
    return np.column_stack(columns), neutral


def per_text_values(slots: pd.DataFrame, threshold: float = 0.5) -> pd.DataFrame | None:
    """Each text's value of every in-slot estimate: one row per text (its id), one column per (measure, level,
    name); ``None`` when no slot has both an identity and a placebo score."""
    built = _per_text(slots, threshold)
    if built is None:
        return None
    values, names, info = built
    return pd.DataFrame(values, index=info["texts"], columns=pd.MultiIndex.from_tuples(names))


def _decisions(matrix: np.ndarray, threshold: float) -> np.ndarray:
    """1 where a score is at or above the threshold, 0 below, NaN without a score."""
    return np.where(np.isnan(matrix), np.nan, (matrix >= threshold).astype(float))


def _spread(matrix: np.ndarray) -> np.ndarray:
    """Per row and column, the mean |m[r, c] − m[r, c']| over the row's other columns with a value (NaN where
    m[r, c] has none); computed in blocks of rows so that memory stays flat."""
    out = np.full(matrix.shape, np.nan)
    cols = matrix.shape[1]
    for start in range(0, matrix.shape[0], _CHUNK):
        block = matrix[start : start + _CHUNK].astype(float)
        diff = np.abs(block[:, :, None] - block[:, None, :])
        diff[:, np.arange(cols), np.arange(cols)] = np.nan
        out[start : start + _CHUNK] = np.nanmean(diff, axis=2)
    return out


def _mean_by(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per code (text), the mean of each column over its rows with a value (NaN where none has one)."""
    known = ~np.isnan(values)
    sums = np.zeros((n, values.shape[1]))
    counts = np.zeros((n, values.shape[1]))
    np.add.at(sums, codes, np.where(known, values, 0.0))
    np.add.at(counts, codes, known)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _mean_or_none(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def _estimates(
    values: np.ndarray, *, seed: int, n_resamples: int, margins: Sequence[tuple[float, bool]]
) -> list[dict[str, Any]]:
    """Per column of a texts x estimates array: the mean over texts with a value, its paired percentile bootstrap
    interval (the same resamples of texts for every column), a two-sided one-sample t-test's p-value against 0
    (``p_value``), and the one-sided t-test's p-value that it exceeds the column's margin (``p_beyond``; with
    ``margins``' (margin, signed): for a signed estimate its size exceeds the margin, else its value does)."""
    from scipy.stats import t as student

    # ``values`` is the caller's to give up: rounded and filled in place (at 200,000 texts each copy is 128 MB)
    np.round(values, 12, out=values)  # float residue (0.2 − mean(0.2, 0.2) = −2.8e-17) is no effect and no variance
    known = ~np.isnan(values)
    n = known.sum(axis=0)
    filled = values
    filled[~known] = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / n
        sd = np.sqrt(_squares(filled, known, mean) / np.maximum(n - 1, 1))
    low, high = _bootstrap(filled, known, seed=seed, n_resamples=n_resamples)
    out: list[dict[str, Any]] = []
    for c in range(values.shape[1]):
        if n[c] == 0:
            out.append({"value": None, "ci_low": None, "ci_high": None, "n": 0, "p_value": None, "p_beyond": None})
            continue
        p_value = p_beyond = None
        margin, signed = margins[c]
        size = abs(mean[c]) if signed else mean[c]
        if n[c] >= 2:
            if sd[c] == 0:  # every text the same: no doubt about the mean (0 is no effect; anything else is one)
                p_value = 1.0 if mean[c] == 0 else 0.0
                p_beyond = 0.0 if size > margin else 1.0
            else:
                se = sd[c] / math.sqrt(n[c])
                p_value = float(2 * student.sf(abs(mean[c]) / se, n[c] - 1))
                p_beyond = float(student.sf((size - margin) / se, n[c] - 1))
        bounded = bool(np.isfinite(low[c]) and np.isfinite(high[c]))  # none from too few texts (_bootstrap)
        out.append(
            {
                "value": float(mean[c]),
                "ci_low": float(low[c]) if bounded else None,
                "ci_high": float(high[c]) if bounded else None,
                "n": int(n[c]),
                "p_value": p_value,
                "p_beyond": p_beyond,
            }
        )
    return out


_ROWS = 65_536  # texts at a time in the squared deviations (two temporaries of a texts x estimates array otherwise)


def _squares(filled: np.ndarray, known: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Per column, the sum of the squared deviations from ``mean`` where ``known``, value for value what one
    expression over the whole array gives: numpy adds a many-column array's rows one after another, so each chunk's
    sum continues from the sum so far (the first row of the next reduction). One column: in one go (numpy sums a
    single contiguous column pairwise)."""
    if filled.shape[1] < 2 or filled.shape[0] <= _ROWS:
        return np.asarray(np.where(known, (filled - mean) ** 2, 0.0).sum(axis=0))
    total: np.ndarray | None = None
    for start in range(0, filled.shape[0], _ROWS):
        part = np.where(known[start : start + _ROWS], (filled[start : start + _ROWS] - mean) ** 2, 0.0)
        total = part.sum(axis=0) if total is None else np.vstack([total[None, :], part]).sum(axis=0)
    return np.asarray(total)


def _bootstrap(filled: np.ndarray, known: np.ndarray, *, seed: int, n_resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """Each column's 95 % interval from its mean over ``n_resamples`` resamples of the rows (texts), the same
    resamples for every column (a resample in which a column has no value is left out of that column's): the expanded
    percentile interval (Hesterberg 2015), whose percentiles are those of a normal quantile widened to Student's t
    with the column's texts − 1 degrees of freedom; none from fewer than :data:`MIN_INTERVAL_TEXTS` texts. The plain
    2.5/97.5 percentiles are too narrow over few texts: they held a planted effect 90 % of the time over 10 texts and
    93 % over 20; these 94–96 % from 8 texts up (``benchmarks/interval_coverage.py``)"""
    rng = np.random.default_rng(seed)
    rows = filled.shape[0]
    means: list[np.ndarray] = []
    for weights in _resample_weights(rng, rows, n_resamples):
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append((weights @ filled) / _counts(weights, known))
    stacked = np.vstack(means)
    n = known.sum(axis=0)
    low, high = np.full(n.shape, np.nan), np.full(n.shape, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for size in np.unique(n[n >= MIN_INTERVAL_TEXTS]):
            columns = n == size
            lower = expanded_tail(int(size))
            low[columns], high[columns] = np.nanpercentile(stacked[:, columns], [lower, 100 - lower], axis=0)
    return low, high


def expanded_tail(texts: int, confidence: float = 0.95) -> float:
    """The lower percentile (0–100) of the expanded percentile interval over ``texts`` texts: where a normal
    quantile of √(n/(n−1))·t(n−1) falls (2.03 over 40 texts, 0.86 over 10, 2.5 in the limit)."""
    from scipy.stats import norm
    from scipy.stats import t as student

    widened = math.sqrt(texts / (texts - 1)) * student.ppf(1 - (1 - confidence) / 2, texts - 1)
    return float(100 * norm.sf(widened))


_COLUMNS = 8  # columns of the known mask taken as numbers at a time (all of it: 128 MB at 200,000 texts)


def _counts(weights: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``weights @ known`` (how many drawn texts have each column's value, per resample), a few columns at a time: the
    products are whole numbers, so their sums are exact in any order and the result is the one product's."""
    out = np.empty((weights.shape[0], known.shape[1]))
    for start in range(0, known.shape[1], _COLUMNS):
        out[:, start : start + _COLUMNS] = weights @ known[:, start : start + _COLUMNS].astype(float)
    return out


#: resamples weighed at once: their weights are a 16 x texts array (26 MB at 200,000 texts; #47), and every block has
#: this shape whatever the number of texts, so a resample's means come out of the same product at any size
RESAMPLE_BLOCK = 16


def _resample_weights(rng: np.random.Generator, rows: int, n_resamples: int) -> Iterator[np.ndarray]:
    """How often each row is drawn in each resample, :data:`RESAMPLE_BLOCK` resamples at a time (a block x rows
    array). The draws are those of 64-bit integers, held as 32-bit ones, drawn one resample at a time."""
    kind = np.int32 if rows < 2**31 else np.int64
    for start in range(0, n_resamples, RESAMPLE_BLOCK):
        size = min(RESAMPLE_BLOCK, n_resamples - start)
        weights = np.empty((size, rows))
        for i in range(size):
            weights[i] = np.bincount(rng.integers(0, rows, size=rows, dtype=kind), minlength=rows)
        yield weights


# ------------------------------------------------------------------------------------------------ for the gate


def gate_entry(e: Mapping[str, Any] | None) -> GateEntry | None:
    """One in-slot estimate as the gate reads it."""
    if e is None:
        return None
    return {
        "value": e.get("value"),
        "ci_low": e.get("ci_low"),
        "ci_high": e.get("ci_high"),
        "n": e.get("n"),
        "p_adjusted": e.get("p_adjusted"),
        "p_material": e.get("p_material"),
        "finding": e.get("finding"),
    }


def effects_gate_metrics(effects: Mapping[str, Any] | None) -> GateMetrics:
    """The in-slot measures as the gate reads them: ``identity_effect`` (groups), ``term_effect`` (its "groups" are
    the terms; overall is the identity effect's), ``disparity`` and ``flip_excess`` (groups); each entry with
    ``value``, ``ci_low``, ``ci_high``, ``n``, ``p_adjusted`` and ``finding``."""
    if not effects or effects.get("identity_effect") is None:
        return {}
    out: GateMetrics = {measure: gate_metric(effects.get(measure) or {}) for measure in MEASURES}
    identity = out["identity_effect"]
    terms = effects["identity_effect"].get("by_term") or {}
    out["term_effect"] = {
        "overall": identity["overall"] if identity is not None else None,
        "by_group": _entries(terms),
    }
    return out


def gate_metric(part: Mapping[str, Any]) -> GateMetric:
    """One in-slot measure (``overall``, ``by_group``) as the gate reads it."""
    return {"overall": gate_entry(part.get("overall")), "by_group": _entries(part.get("by_group") or {})}


def _entries(found: Mapping[str, Any]) -> dict[str, GateEntry | None]:
    """Each group's (or term's) in-slot estimate (None: the group has none)."""
    return {g: gate_entry(e) for g, e in found.items()}


def read_slots(source: Any) -> pd.DataFrame | None:
    """An audit's slot table: a run directory's ``slots.csv`` (``None`` when it has none: a run made before
    counterfair measured in the slot), an ``AuditResult``'s ``slots``, or a DataFrame."""
    from pathlib import Path

    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(getattr(source, "slots", None), pd.DataFrame):
        return source.slots  # type: ignore[no-any-return]
    path = Path(source)
    if path.is_file():
        path = path.parent
    target = path / "slots.csv"
    if not target.exists():
        return None
    return pd.read_csv(target, dtype={"input_id": str, "source_term": str, "word": str}, keep_default_na=True)
