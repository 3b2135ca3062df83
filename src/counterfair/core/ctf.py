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

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..classifiers.labels import binary_labels, positive_index
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
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Swap identity terms in every text, score all texts once; the pairs table and the summary, in memory.

    The swap is the audit's (``grammar=True``: nouns and plurals matched, target forms of the same number, proper
    capitals, "a"/"an" agreement; see :class:`~counterfair.editors.swap.IdentitySwapEditor`). ``grammar=False`` is
    paper 001's Φ_A exactly, token for token: use it to check that a blinded model's gap on training terms is exactly
    0 (with "a"/"an" corrected it sees "a identity" and "an identity", which differ). ``language`` ``fr`` or ``de``
    (or a French or German set): the swap with agreement of :class:`~counterfair.editors.inflected.InflectedSwapEditor`.
    """
    from ..editors.registry import identity_editor
    from ..io import missing_as_nan, nan_to_none
    from ..progress import NullProgress

    hook = progress or NullProgress()
    origin = origin or (str(source) if isinstance(source, str | Path) else "DataFrame")
    data = _ctf_input(source, origin, text_column, id_column, label_column, encoding, max_text_chars)
    identity_set, overlaps = _swap_set(identities, language)
    editor: Any = identity_editor(identity_set, guard=guard, grammar=grammar)
    variants = editor.edit(["" if i in data.reasons else t for i, t in enumerate(data.texts)], progress=hook)
    if not any(variants):
        from ..errors import InputError

        shown = ", ".join(identity_set.terms[:12]) + (" ..." if len(identity_set.terms) > 12 else "")
        raise InputError(
            f"{origin}: none of the {len(data.texts)} texts contains an identity term of the set "
            f"{identity_set.name!r} used as an identity ({shown}); there is nothing to swap, so no CTF gap (not a gap "
            "of 0)"
        )
    pairs, index = _scored_pairs(data, variants, clf, positive_label, hook)
    unscored = pairs[["score_orig", "score_cf"]].isna().any(axis=1)
    report = ctf_report(pairs[~unscored], seed=seed, n_resamples=n_resamples)
    from .. import __version__

    summary = {
        "counterfair_version": __version__,
        "command": "ctf",
        "input": _input_summary(data, origin, variants, max_text_chars),
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
    return missing_as_nan(pairs), nan_to_none(summary)


@dataclass
class _CTFInput:
    texts: list[str]
    ids: list[Any]
    labels: list[float]
    reasons: dict[int, str]  # row -> why it is not swapped (too long, control characters)


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
    data: _CTFInput, variants: list[list[Any]], clf: Any, positive_label: str | None, hook: Any
) -> tuple[pd.DataFrame, int]:
    """Every (text, swap) pair with both scores (each distinct text scored once) and the scored label's index."""
    unique = list(dict.fromkeys(data.texts + [c.text for v in variants for c in v]))
    hook.start(f"classifier ({clf.spec})", len(unique))
    proba = clf.predict_proba(unique, on_batch=hook.advance)
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


def _input_summary(data: _CTFInput, origin: str, variants: list[list[Any]], max_text_chars: int) -> dict[str, Any]:
    def skipped(reason: str) -> list[Any]:
        return [data.ids[i] for i, r in data.reasons.items() if r == reason]

    return {
        "source": origin,
        "texts": len(data.texts),
        "texts_with_identity_terms": int(sum(1 for v in variants if v)),
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
