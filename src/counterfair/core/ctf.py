"""Counterfactual token fairness (paper 001 §3.2): the CTF gap and its breakdowns.

For a text x with identity-swap counterfactuals Φ_A(x), its gap is the mean over x' in Φ_A(x) of |f(x) - f(x')|;
the CTF gap of a data set is the mean of the per-text gaps. The paper's worked example: f("Some people are
straight") = 0.03 and its counterfactuals score 0.99, 0.47 and 0.02, so the gap is (0.96 + 0.44 + 0.01) / 3 = 0.47.

Breakdowns: toxic and non-toxic texts (asymmetric counterfactuals such as "black power" / "white power" make the
toxic ones less meaningful); training and held-out terms (pairs whose source and target both belong to that
split, as in the paper's Figures 2-3); per source term; per (source -> target) pair, so that results can be read
by direction. Every figure carries a bootstrap confidence interval over texts (or pairs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..classifiers.labels import binary_labels, positive_index
from ..io import missing_as_nan
from ..metrics.fairness import gap_summary, group_rows
from ..metrics.functional import bootstrap_ci
from ..progress import ProgressHook
from ..records import options_signature
from ..text import MAX_TEXT_CHARS

if TYPE_CHECKING:
    from ..results import CTFResult

PAIR_COLUMNS = [
    "input_id",
    "label",
    "source_term",
    "target_term",
    "source_split",
    "target_split",
    "score_orig",
    "score_cf",
    "diff",
    "abs_diff",
]
#: pairs.csv's columns, in the order a whole-input run wrote them: the statistics' columns, the two texts before diff
PAIR_FILE_COLUMNS = [*PAIR_COLUMNS[:8], "source_text", "cf_text", *PAIR_COLUMNS[8:]]
CTF_BLOCK = 2000  # texts swapped and scored at a time (about 100,000 scored texts with 48 swaps each)


def ctf_report(pairs: pd.DataFrame, *, seed: int = 0, n_resamples: int = 2000, min_pairs: int = 1) -> dict[str, Any]:
    """CTF gap overall and broken down, from a pairs table with :data:`PAIR_COLUMNS`.

    ``label`` is 1 for toxic texts, 0 for non-toxic, NaN if unknown.
    """
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"pairs table lacks columns {missing}")
    report: dict[str, Any] = gap_summary(pairs, seed=seed, n_resamples=n_resamples)
    labels = pairs["label"]
    report["by_label"] = {
        "nontoxic": gap_summary(pairs[labels == 0], seed=seed, n_resamples=n_resamples),
        "toxic": gap_summary(pairs[labels == 1], seed=seed, n_resamples=n_resamples),
    }
    report["by_split"] = {}
    for split in ("train", "heldout"):
        within = pairs[(pairs["source_split"] == split) & (pairs["target_split"] == split)]
        entry = gap_summary(within, seed=seed, n_resamples=n_resamples)
        entry["by_label"] = {
            "nontoxic": gap_summary(within[within["label"] == 0], seed=seed, n_resamples=n_resamples),
            "toxic": gap_summary(within[within["label"] == 1], seed=seed, n_resamples=n_resamples),
        }
        report["by_split"][split] = entry
    per_term = {}
    for term, group in pairs.groupby("source_term", sort=True):
        per_term[str(term)] = gap_summary(group, seed=seed, n_resamples=n_resamples)
    report["by_source_term"] = per_term
    per_pair = []
    order, bounds = group_rows(pairs, ["source_term", "target_term"], sort=True)
    sources = np.split(pairs["source_term"].to_numpy(object)[order], bounds)
    targets = np.split(pairs["target_term"].to_numpy(object)[order], bounds)
    for source, target, values in zip(
        sources, targets, np.split(pairs["diff"].to_numpy(dtype=float)[order], bounds), strict=True
    ):
        if len(values) == 0 or len(values) < min_pairs:
            continue
        low, high = bootstrap_ci(np.abs(values), n_resamples=n_resamples, seed=seed)
        per_pair.append(
            {
                "source": str(source[0]),
                "target": str(target[0]),
                "pairs": len(values),
                "mean_abs_diff": float(np.abs(values).mean()),
                "mean_diff": float(values.mean()),
                "ci_low": low,
                "ci_high": high,
            }
        )
    report["by_direction"] = per_pair
    return report


# --------------------------------------------------------------------------------------------- the command


@dataclass
class CTFOptions:
    """The options of :func:`ctf_core` (the keyword arguments of :func:`ctf` and :func:`run_ctf`) as the run's
    identity; in alphabetical order, as ``run.json`` has always listed them."""

    encoding: str = "utf-8"
    grammar: bool = True
    guard: str | None = "spacy"
    id_column: str | None = None
    identities: Any = None
    label_column: str | None = None
    # en | fr | de: the default identity set (identity-fr, identity-de: swapped with agreement); later: English runs
    # keep their identity
    language: str = field(default="en", metadata={"later": True})
    max_text_chars: int = MAX_TEXT_CHARS
    n_resamples: int = 2000
    positive_label: str | None = None
    seed: int = 0
    text_column: str = "text"


@options_signature(CTFOptions)
def ctf(
    texts: Any, classifier: Any = "profanity-check", *, progress: ProgressHook | bool | None = None, **options: Any
) -> CTFResult:
    """Counterfactual token fairness in memory: swap identity terms in ``texts`` (a list, a DataFrame, a dict of
    columns, a ``datasets.Dataset``), score with ``classifier`` (anything :func:`as_classifier` takes); ``options``
    as :func:`ctf_core` (``identities``, ``label_column``, ``guard``, ``seed``, ...)."""
    from ..classifiers import as_classifier
    from ..progress import resolve_progress
    from ..results import CTFResult
    from .needs import require_in_memory

    # an unknown option is named, with a "did you mean"; a missing extra before any work
    require_in_memory(CTFOptions, options, classifier=classifier)
    pairs, summary = ctf_core(texts, as_classifier(classifier), progress=resolve_progress(progress), **options)
    return CTFResult(pairs, summary)


def swap_described(grammar: bool, guard: str | None, language: str = "en") -> str:
    """Which swap ran, in words (the console, the summary and the report say it)."""
    if language != "en":
        from ..languages import get_language

        return (
            f"{get_language(language).name} swaps with agreement of articles and adjectives (ambiguous terms only "
            "next to a person noun)"
        )
    kind = "grammatical swaps (nouns, plurals, articles)" if grammar else "token-for-token swaps (paper 001's Φ_A)"
    guarded = f"with the identity guard ({guard})" if guard else "without the identity guard"
    hint = "; --tokens-only --no-guard gives paper 001's token swap" if grammar or guard else ""
    return f"{kind} {guarded}{hint}"


def ctf_core(
    source: Any,
    clf: Any,
    *,
    identities: Any = None,
    text_column: str = "text",
    id_column: str | None = None,
    label_column: str | None = None,
    positive_label: str | None = None,
    guard: str | None = "spacy",
    grammar: bool = True,
    max_text_chars: int = MAX_TEXT_CHARS,
    seed: int = 0,
    n_resamples: int = 2000,
    encoding: str = "utf-8",
    language: str = "en",
    progress: Any = None,
    origin: str | None = None,
    write_pairs: Callable[[pd.DataFrame], None] | None = None,
    block: int = CTF_BLOCK,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Swap identity terms in every text, score each block of texts (``block`` at a time); the pairs table and the
    summary. With ``write_pairs`` each block's pairs go to it, with their texts, as they are made, and the returned
    table keeps only :data:`PAIR_COLUMNS` (what the statistics read: a few numbers and names per pair), and the
    classifier's per-text cache is emptied after each block: memory stays about flat whatever the input's size (#47).

    The swap is the audit's (``grammar=True``: nouns and plurals matched, target forms of the same number, proper
    capitals, "a"/"an" agreement; see :class:`~counterfair.editors.swap.IdentitySwapEditor`). ``grammar=False`` is
    paper 001's Φ_A exactly, token for token: use it to check that a blinded model's gap on training terms is exactly
    0 (with "a"/"an" corrected it sees "a identity" and "an identity", which differ). ``language`` ``fr`` or ``de``
    (or a French or German set): the swap with agreement of :class:`~counterfair.editors.inflected.InflectedSwapEditor`.
    """
    from ..editors.registry import identity_editor
    from ..io import nan_to_none
    from ..progress import NullProgress

    hook = progress or NullProgress()
    origin = origin or (str(source) if isinstance(source, str | Path) else "DataFrame")
    data = _ctf_input(source, origin, text_column, id_column, label_column, encoding, max_text_chars)
    identity_set, overlaps = _swap_set(identities, language)
    editor: Any = identity_editor(identity_set, guard=guard, grammar=grammar)
    pairs, with_terms, index = _swap_and_score(data, editor, clf, positive_label, hook, write_pairs, block)
    if pairs is None:
        from ..errors import InputError

        shown = ", ".join(identity_set.terms[:12]) + (" ..." if len(identity_set.terms) > 12 else "")
        raise InputError(
            f"{origin}: none of the {len(data.texts)} texts contains an identity term of the set "
            f"{identity_set.name!r} used as an identity ({shown}); there is nothing to swap, so no CTF gap (not a gap "
            "of 0)"
        )
    unscored = pairs[["score_orig", "score_cf"]].isna().any(axis=1)
    report = ctf_report(pairs[~unscored] if unscored.any() else pairs, seed=seed, n_resamples=n_resamples)
    from .. import __version__

    summary = {
        "counterfair_version": __version__,
        "command": "ctf",
        "input": _input_summary(data, origin, with_terms, max_text_chars),
        "ctf_gap": report.pop("ctf_gap"),
        **report,
        "pairs_without_score": int(unscored.sum()),
        # texts whose gap is a mean over only some of their counterfactuals: flagged, the gap is not complete
        "incomplete_texts": {
            "texts": int(pairs.loc[unscored, "input_id"].nunique()),
            "ids": [str(i) for i in pairs.loc[unscored, "input_id"].drop_duplicates().head(50)],
        },
        "complete": not bool(unscored.any()),
        "identities": {
            "name": identity_set.name,
            "train": list(identity_set.train),
            "heldout": list(identity_set.heldout),
            "overlapping_terms": [f"{a!r} is part of {b!r} (the longer match wins)" for a, b in overlaps],
        },
        "guard": {"mode": guard, "occurrences": editor.found, "blocked": editor.blocked},
        "swap": {
            "grammar": grammar,
            "guard": guard,
            "described": swap_described(grammar, guard, identity_set.language),
        },
        "classifier": clf.signature(),
        "positive_label": clf.labels[index],
    }
    return (pairs if write_pairs is not None else missing_as_nan(pairs)), nan_to_none(summary)


def _swap_and_score(
    data: _CTFInput,
    editor: Any,
    clf: Any,
    positive_label: str | None,
    hook: Any,
    write_pairs: Callable[[pd.DataFrame], None] | None,
    block: int,
) -> tuple[pd.DataFrame | None, int, int]:
    """Every text's swaps and scores, ``block`` texts at a time: the pairs (only the statistics' columns when each
    block goes to ``write_pairs`` as it is made; None when no text has an identity term), how many texts had one, and
    the scored label's index (known once the classifier has answered: a Python function's labels come with it)."""
    whole: list[pd.DataFrame] = []  # in memory: every block's pairs as they are
    compact: list[dict[str, Any]] = []  # written as they are made: only what the statistics read
    with_terms = index = 0
    hook.start(f"swap and classifier ({clf.spec})", len(data.texts))
    for start in range(0, len(data.texts), block):
        part = data.rows(start, start + block)
        variants = editor.edit(["" if i in part.reasons else t for i, t in enumerate(part.texts)])
        with_terms += sum(1 for v in variants if v)
        if any(variants):
            pairs_block, index = _scored_pairs(part, variants, clf, positive_label)
            if write_pairs is not None:
                write_pairs(missing_as_nan(pairs_block))
                compact.append(_compact(pairs_block))
                clf.forget()
            else:
                whole.append(pairs_block)
        hook.advance(len(part.texts))
    if not (whole or compact):
        return None, with_terms, index
    return (_combined(compact) if compact else pd.concat(whole, ignore_index=True)), with_terms, index


_NAMES = ("source_term", "target_term", "source_split", "target_split")  # few distinct values: categorical


def _compact(block: pd.DataFrame) -> dict[str, Any]:
    """A block's pairs as the statistics need them (:data:`PAIR_COLUMNS`), the names as categoricals: a fraction of
    the table with its texts."""
    out: dict[str, Any] = {}
    for column in PAIR_COLUMNS:
        values = block[column]
        if column in _NAMES:
            out[column] = pd.Categorical(values)
        else:
            out[column] = values if column == "input_id" else values.to_numpy()
    return out


def _combined(parts: list[dict[str, Any]]) -> pd.DataFrame:
    """The blocks' compact columns as one table, column by column (each block's column is let go once combined, so the
    peak is the table and one column, not two tables); the names' categories sorted, so grouping by them orders the
    groups as grouping by the strings does."""
    from pandas.api.types import union_categoricals

    columns: dict[str, Any] = {}
    for column in PAIR_COLUMNS:
        pieces = [part.pop(column) for part in parts]
        if column in _NAMES:
            columns[column] = union_categoricals(pieces, sort_categories=True)
        elif column == "input_id":
            columns[column] = pd.concat(pieces, ignore_index=True)
        else:
            columns[column] = np.concatenate(pieces)
        del pieces
    return pd.DataFrame(columns)


@dataclass
class _CTFInput:
    texts: list[str]
    ids: list[Any]
    labels: list[float]
    reasons: dict[int, str]  # row -> why it is not swapped (too long, control characters)

    def rows(self, start: int, end: int) -> _CTFInput:
        """Rows ``start`` to ``end`` (a block; ``reasons`` renumbered from 0)."""
        reasons = {i - start: r for i, r in self.reasons.items() if start <= i < end}
        return _CTFInput(self.texts[start:end], self.ids[start:end], self.labels[start:end], reasons)


def _ctf_input(
    source: Any,
    origin: str,
    text_column: str,
    id_column: str | None,
    label_column: str | None,
    encoding: str,
    max_text_chars: int,
) -> _CTFInput:
    from ..io import read_texts
    from ..text import skip_reason

    labels = {label_column: "--label-column"} if label_column else {}
    read = read_texts(
        source, text_column=text_column, id_column=id_column, columns=labels, encoding=encoding, origin=origin
    )
    texts = read.filled()
    reasons = {i: r for i, t in enumerate(texts) if (r := skip_reason(t, max_text_chars)) not in (None, "empty_text")}
    return _CTFInput(texts, read.ids, list(binary_labels(read.frame, label_column, origin)), reasons)


def _swap_set(identities: Any, language: str = "en") -> tuple[Any, list[tuple[str, str]]]:
    """The identity set (``language``'s own by default, and in that language) and its pairs of terms where one is
    part of the other."""
    from ..lexicons.attributes import identity_set_in

    identity_set = identity_set_in(identities, language)
    overlaps = sorted(
        {
            (a, b)
            for a in identity_set.terms
            for b in identity_set.terms
            if a != b and f" {a.lower()} " in f" {b.lower()} "
        }
    )
    return identity_set, overlaps


def _scored_pairs(
    data: _CTFInput, variants: list[list[Any]], clf: Any, positive_label: str | None
) -> tuple[pd.DataFrame, int]:
    """Every (text, swap) pair of a block of texts with both scores (each distinct text scored once) and the scored
    label's index (after the prediction: a 3-label Python function without --positive-label is refused here)."""
    unique = list(dict.fromkeys(data.texts + [c.text for v in variants for c in v]))
    proba = clf.predict_proba(unique)
    index = positive_index(clf.labels, positive_label)
    score = {t: float(p[index]) for t, p in zip(unique, proba, strict=True)}
    rows = [
        {
            "input_id": data.ids[i],
            "label": data.labels[i],
            **{key: cand.meta[key] for key in ("source_term", "target_term", "source_split", "target_split")},
            "score_orig": score[text],
            "score_cf": score[cand.text],
            "source_text": text,
            "cf_text": cand.text,
        }
        for i, (text, cands) in enumerate(zip(data.texts, variants, strict=True))
        for cand in cands
    ]
    pairs = pd.DataFrame(rows)
    pairs["diff"] = pairs["score_cf"] - pairs["score_orig"]
    pairs["abs_diff"] = pairs["diff"].abs()
    return pairs, index


def _input_summary(data: _CTFInput, origin: str, with_terms: int, max_text_chars: int) -> dict[str, Any]:
    def skipped(reason: str) -> list[Any]:
        return [data.ids[i] for i, r in data.reasons.items() if r == reason]

    return {
        "source": origin,
        "texts": len(data.texts),
        "texts_with_identity_terms": with_terms,
        "skipped_too_long": {
            "texts": len(skipped("too_long")),
            "max_text_chars": max_text_chars,
            "ids": skipped("too_long"),
        },
        "skipped_control_characters": {
            "texts": len(skipped("control_characters")),
            "ids": skipped("control_characters"),
        },
    }
