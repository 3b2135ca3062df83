"""Two classifiers on one frozen set of counterfactual pairs: paired differences per group, with CIs and a test.

The pairs of two audits (or one audit's pairs scored again by a second classifier, :func:`rescore_pairs`) are
matched on (method, attribute, input id, counterfactual text). For each unit — the identity swaps overall, each
identity group (of the source term, as the CTF gap), each (method, attribute) of the other methods — every text gets
its gap under A and under B (the mean |score change| over its pairs in that unit); the difference B - A is averaged
over texts, with a percentile bootstrap CI over texts and a paired permutation test (A and B swapped within texts).
Verdict per unit: ``better`` (B's gap is smaller: the CI lies below 0 and the test's p < 0.05), ``worse`` (above 0,
p < 0.05), ``no evidence``.

Where both audits have their slot tables (run directories, ``AuditResult``s, or a classifier rescoring this audit's
slots), the comparison also holds each one's in-slot measures (``effects``: the identity effect per term and group,
disparity and flip excess with their findings, :mod:`counterfair.analysis.slots`) and the paired B − A of the
disparity beyond placebo per group (metric ``disparity``), tested as above.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..editors.registry import swap_methods, swaps_identities
from ..errors import InputError
from ..metrics.fairness import with_scores
from ..metrics.functional import bootstrap_ci
from ..summaries import ComparedMetrics, ComparisonSummary, PairedDifference, SlotEffects, typed

KEYS = ["method", "attribute", "input_id", "cf_text"]
ALPHA = 0.05


def read_pairs(source: Any) -> pd.DataFrame:
    """An audit's pairs: a run directory (its ``pairs.csv``), a ``pairs.csv`` path, an ``AuditResult`` or a
    DataFrame."""
    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(getattr(source, "raw_pairs", None), pd.DataFrame):  # an AuditResult: the table as saved
        return source.raw_pairs  # type: ignore[no-any-return]
    if hasattr(source, "pairs") and isinstance(source.pairs, pd.DataFrame):
        return source.pairs
    path = Path(source)
    if path.is_dir():
        path = path / "pairs.csv"
    if not path.exists():
        raise InputError(f"{source}: no pairs.csv (give an audit run directory or its pairs.csv)")
    frame = pd.read_csv(path, dtype={"input_id": str}, keep_default_na=True).drop(
        columns=list(RETIRED), errors="ignore"
    )
    missing = [c for c in [*KEYS, "source_text", "score_orig", "score_cf", "status"] if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: not an audit's pairs table (no column {', '.join(missing)})")
    return checked_pairs(frame, path)


SCORES = ("score_orig", "score_cf")  # probabilities: in [0, 1]
CHANGES = ("diff",)  # differences of two probabilities: in [-1, 1]
#: the pairs.csv columns of the statistic the in-slot measures replaced (runs before 2026-11-28): not read
RETIRED = ("placebo_term", "placebo_text", "score_placebo", "diff_placebo")


def checked_pairs(frame: pd.DataFrame, where: Any, first_row: int = 0) -> pd.DataFrame:
    """A pairs table read from a file with its score columns as numbers: a cell that is not a number, or a
    probability outside [0, 1] (a change outside [-1, 1]), is refused naming the file's line and column — a damaged
    or hand-edited pairs.csv, which would otherwise crash the report or move the CTF gap in silence. ``first_row``:
    the table's first row in the file (a block of it)."""
    out = frame.copy()
    for column in (*SCORES, *CHANGES):
        if column not in out.columns:
            continue
        raw = out[column]
        numbers = pd.to_numeric(raw, errors="coerce")
        given = raw.notna() & (raw.astype(str).str.strip() != "")
        low, high = (0.0, 1.0) if column in SCORES else (-1.0, 1.0)
        bad = (given & numbers.isna()) | (numbers < low) | (numbers > high)
        if bad.any():
            row = int(bad.to_numpy().argmax())
            value = numbers.iloc[row]
            shown = repr(raw.iloc[row]) if pd.isna(value) else f"{float(value):g}"
            why = "is not a number" if pd.isna(value) else f"is outside [{low:g}, {high:g}]"
            raise InputError(
                f"{where}: row {first_row + row + 1}, column {column}: {shown} {why} ({int(bad.sum())} such cells); "
                "the pairs table is damaged or edited by hand: rerun the audit to rebuild it"
            )
        out[column] = numbers.astype(float)
    return out


def rescore_pairs(
    pairs: pd.DataFrame, classifier: Any, *, threshold: float = 0.5, positive_label: str | None = None
) -> pd.DataFrame:
    """The same pairs (counterfactual texts unchanged) with ``classifier``'s scores."""
    from ..classifiers import as_classifier
    from ..labels import positive_index

    clf = as_classifier(classifier)
    index = positive_index(clf.labels, positive_label)
    texts = list(dict.fromkeys([*pairs["source_text"], *pairs["cf_text"]]))
    proba = clf.predict_proba(texts)
    kept = pairs.drop(columns=list(RETIRED), errors="ignore")
    return with_scores(kept, {t: float(p[index]) for t, p in zip(texts, proba, strict=True)}, threshold)


def _paired(per_text: pd.DataFrame, *, seed: int, n_resamples: int) -> PairedDifference:
    a, b = per_text["a"].to_numpy(dtype=float), per_text["b"].to_numpy(dtype=float)
    d = b - a
    low, high = bootstrap_ci(d, n_resamples=n_resamples, seed=seed)
    p_value = None
    if d.size >= 2 and np.any(d != 0):
        from scipy.stats import permutation_test

        test = permutation_test(
            (b, a),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            n_resamples=min(n_resamples, 9999),
            random_state=seed,
            vectorized=True,
        )
        p_value = float(test.pvalue)
    if d.size and np.all(d == 0):
        low = high = 0.0
    ok = d.size >= 2 and np.isfinite(low) and np.isfinite(high)
    # evidence needs both: the interval away from 0 and the permutation test below 5 % (with two or three texts a
    # constant difference gives a zero-width interval but no test can tell it from chance)
    evidence = ok and p_value is not None and p_value < ALPHA
    verdict = "better" if evidence and high < 0 else "worse" if evidence and low > 0 else "no evidence"
    return PairedDifference(
        a=float(a.mean()) if a.size else None,
        b=float(b.mean()) if b.size else None,
        difference=float(d.mean()) if d.size else None,
        ci_low=float(low) if ok else None,
        ci_high=float(high) if ok else None,
        p_value=p_value,
        texts=int(d.size),
        verdict=verdict,
    )


def _units(merged: pd.DataFrame, group_column: str) -> list[tuple[str, pd.DataFrame]]:
    identity = merged["attribute"].fillna("identity") == "identity" if "attribute" in merged else True
    swaps = merged[merged["method"].isin(swap_methods()) & identity]
    units: list[tuple[str, pd.DataFrame]] = []
    if not swaps.empty:
        units.append(("identity swaps", swaps))
        if group_column in swaps.columns:
            units += [(f"swap:{g}", part) for g, part in swaps.groupby(group_column)]
    others = merged.drop(swaps.index)
    units += [
        (f"{a} swaps" if swaps_identities(m) else f"{m}:{a}", part)
        for (m, a), part in others.groupby(["method", "attribute"])
    ]
    return units


def compare_pairs(
    baseline: Any,
    candidate: Any,
    *,
    names: tuple[str, str] = ("A", "B"),
    seed: int = 0,
    n_resamples: int = 2000,
    slots: tuple[pd.DataFrame | None, pd.DataFrame | None] | None = None,
    threshold: float = 0.5,
    shared_only: bool = False,
) -> ComparisonSummary:
    """B (``candidate``) against A (``baseline``) on their common pairs; see the module's docstring. ``slots``: A's
    and B's scored slot tables (:mod:`counterfair.analysis.slots`; read from run directories when not given): the
    in-slot measures of each (``effects``) and the paired test of B − A on the disparity beyond placebo. Pairs whose
    original texts differ (audits of different inputs that share ids) are refused, naming the first, unless
    ``shared_only``: then only the pairs whose originals match are compared."""
    from .slots import read_slots

    if slots is None:
        slots = (_slots_of(baseline, read_slots), _slots_of(candidate, read_slots))
    a, b = read_pairs(baseline), read_pairs(candidate)
    a = a[a["status"] == "ok"].assign(input_id=lambda f: f["input_id"].astype(str))
    b = b[b["status"] == "ok"].assign(input_id=lambda f: f["input_id"].astype(str))
    a, b = _same_originals(a, b, names, shared_only)
    keep = [*KEYS, "diff"]
    merged = a.drop_duplicates(KEYS).merge(b[keep].drop_duplicates(KEYS), on=KEYS, suffixes=("_a", "_b"))
    if merged.empty:
        raise InputError(
            f"{names[0]} and {names[1]} share no scored pair (matched on method, attribute, input id and "
            f"counterfactual text): {_why_unmatched(a, b)}; compare audits of the same texts with the same "
            "counterfactuals"
        )
    value: Callable[[pd.DataFrame, str], pd.Series] = lambda f, s: f[f"diff_{s}"].abs()  # noqa: E731
    entries: dict[str, PairedDifference] = {}
    for unit, part in _units(merged, "group"):  # the CTF gap by the source term's group
        per_text = pd.DataFrame({"id": part["input_id"], "a": value(part, "a"), "b": value(part, "b")})
        per_text = per_text.groupby("id", sort=False)[["a", "b"]].mean()
        entries[unit] = _paired(per_text, seed=seed, n_resamples=n_resamples)
    out = ComparedMetrics(ctf_gap=entries)
    effects: dict[str, SlotEffects] = {}
    if slots[0] is not None and slots[1] is not None:
        disparity, effects = _in_slot(slots[0], slots[1], seed=seed, n_resamples=n_resamples, threshold=threshold)
        out = replace(out, disparity=disparity)
    return ComparisonSummary(
        a=names[0],
        b=names[1],
        matched_pairs=len(merged),
        pairs_only_in_a=len(a) - len(merged),
        pairs_only_in_b=len(b) - len(merged),
        metrics=out,
        effects=effects or None,
    )


def _why_unmatched(a: pd.DataFrame, b: pd.DataFrame) -> str:
    """Why two audits' scored pairs never match: the first of their keys they share nothing of."""
    if a.empty or b.empty:
        return f"{'A' if a.empty else 'B'} has no scored pair"
    ids = set(a["input_id"]) & set(b["input_id"])
    if not ids:
        return f"no input id is in both (A's first: {a['input_id'].iloc[0]!r}, B's: {b['input_id'].iloc[0]!r})"
    units = set(zip(a["method"], a["attribute"], strict=True)) & set(zip(b["method"], b["attribute"], strict=True))
    if not units:
        shown = sorted({str(m) for m in a["method"]}), sorted({str(m) for m in b["method"]})
        return f"no method and attribute is in both (A's methods: {', '.join(shown[0])}; B's: {', '.join(shown[1])})"
    key = sorted(ids)[0]
    one, other = (f[f["input_id"] == key]["cf_text"].astype(str) for f in (a, b))
    return (
        f"their counterfactual texts differ (another identity set, placebo, seed or counterfair version): input "
        f"{key!r} has {one.iloc[0][:60]!r} in A and {other.iloc[0][:60]!r} in B"
        if len(one) and len(other)
        else f"input {key!r} has pairs in one audit only"
    )


def _same_originals(
    a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str], shared_only: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A's and B's pairs of the inputs whose original text is the same in both; an input id with another original in
    each (audits of different inputs) is refused, naming the first, unless ``shared_only`` (then those inputs are left
    out of both)."""
    first_a = a.drop_duplicates("input_id").set_index("input_id")["source_text"].astype(str)
    first_b = b.drop_duplicates("input_id").set_index("input_id")["source_text"].astype(str)
    common = first_a.index.intersection(first_b.index)
    differs = [i for i in common if first_a[i] != first_b[i]]
    if differs and not shared_only:
        key = differs[0]
        raise InputError(
            f"{names[0]} and {names[1]} are audits of different texts: input {key!r} is {first_a[key][:60]!r} in A "
            f"and {first_b[key][:60]!r} in B ({len(differs)} of {len(common)} shared inputs differ); compare audits of "
            "the same input, or pass --shared-only (shared_only=True) to compare only the inputs whose originals match"
        )
    return a[~a["input_id"].isin(differs)], b[~b["input_id"].isin(differs)]


def _slots_of(source: Any, read: Callable[[Any], pd.DataFrame | None]) -> pd.DataFrame | None:
    if isinstance(source, pd.DataFrame):
        return None  # a bare pairs table has no slots
    try:
        return read(source)
    except (OSError, ValueError):
        return None


def _in_slot(
    slots_a: pd.DataFrame, slots_b: pd.DataFrame, *, seed: int, n_resamples: int, threshold: float
) -> tuple[dict[str, PairedDifference], dict[str, SlotEffects]]:
    """The disparity beyond placebo of A and B per text on their common slot texts, paired (B − A per unit), and each
    one's in-slot findings (:func:`counterfair.analysis.slots.slot_effects`)."""
    from .slots import per_text_values, slot_effects

    common = set(slots_a["text"]) & set(slots_b["text"])
    a = slots_a[slots_a["text"].isin(common)]
    b = slots_b[slots_b["text"].isin(common)]
    effects = {
        side: slot_effects(frame, threshold=threshold, seed=seed, n_resamples=n_resamples)
        for side, frame in (("a", a), ("b", b))
    }
    values_a, values_b = per_text_values(a, threshold), per_text_values(b, threshold)
    paired: dict[str, PairedDifference] = {}
    if values_a is None or values_b is None:
        return paired, {k: v for k, v in effects.items() if v is not None}
    for column in values_a.columns:
        measure, level, name = (str(part) for part in column)
        if measure != "disparity" or column not in values_b.columns:
            continue
        per_text = pd.DataFrame({"a": values_a[column], "b": values_b[column]}).dropna()
        unit = "identity swaps" if level == "overall" else f"swap:{name}"
        paired[unit] = _paired(per_text, seed=seed, n_resamples=n_resamples)
    return paired, {k: v for k, v in effects.items() if v is not None}


def comparison_table(comparison: Mapping[str, Any] | ComparisonSummary, metric: str = "ctf_gap") -> pd.DataFrame:
    """One row per unit: A's and B's gap, B - A with its CI, the p-value and the verdict."""
    found = typed(comparison, ComparisonSummary)
    rows = [{"unit": unit, **entry.to_dict()} for unit, entry in found.metrics.by_metric().get(metric, {}).items()]
    return pd.DataFrame(rows).set_index("unit") if rows else pd.DataFrame()
