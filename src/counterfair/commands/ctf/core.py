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

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
import pandas as pd

from ... import vocabulary
from ...labels import binary_labels, positive_index
from ...metrics.fairness import group_rows
from ...metrics.functional import bootstrap_ci
from ...progress import ProgressHook
from ...records import option, options_signature
from ...spill import ArrayLog, Piece, Scratch
from ...summaries import ClassifierInfo, CTFSummary, DirectionGap, GapReport
from ...text import MAX_TEXT_CHARS
from ...writing import missing_as_nan

if TYPE_CHECKING:
    from .result import CTFResult

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


def ctf_report(pairs: pd.DataFrame, *, seed: int = 0, n_resamples: int = 2000, min_pairs: int = 1) -> GapReport:
    """CTF gap overall and broken down, from a pairs table with :data:`PAIR_COLUMNS`.

    ``label`` is 1 for toxic texts, 0 for non-toxic, NaN if unknown.
    """
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"pairs table lacks columns {missing}")
    tally = CTFTally()
    tally.add(pairs)
    return tally.report(seed=seed, n_resamples=n_resamples, min_pairs=min_pairs)


#: the breakdowns of the CTF gap other than per term: (split both terms are in, label of the text); None: any
_PARTS = {
    "all": (None, None),
    "nontoxic": (None, 0),
    "toxic": (None, 1),
    "train": ("train", None),
    "train:nontoxic": ("train", 0),
    "train:toxic": ("train", 1),
    "heldout": ("heldout", None),
    "heldout:nontoxic": ("heldout", 0),
    "heldout:toxic": ("heldout", 1),
}


class CTFTally:
    """The CTF gap's statistics gathered block by block (#47: a ctf of 200,000 texts in flat memory): per breakdown
    each text's gap as its block is added (texts in order of first appearance, a text's pairs all in one block) and
    the signed changes of its pairs; per source term also each pair's target term as a number (the directions). With a
    :class:`~counterfair.spill.Scratch` these wait on disk; :meth:`report` reads one breakdown at a time and gives what
    :func:`ctf_report` of the whole table gives, value for value."""

    def __init__(self, scratch: Scratch | None = None) -> None:
        self.scratch = scratch  # where the logs keep their pieces (on disk) while the blocks go by; None: in memory
        self.gaps: dict[str, ArrayLog] = {name: ArrayLog(scratch) for name in _PARTS}
        self.changes: dict[str, ArrayLog] = {name: ArrayLog(scratch) for name in _PARTS}
        self.term_gaps: dict[str, ArrayLog] = {}
        self.term_changes: dict[str, ArrayLog] = {}
        self.term_targets: dict[str, ArrayLog] = {}  # each pair's target term's number in ``terms``; -1: none
        self.terms: dict[str, int] = {}

    def add(self, pairs: pd.DataFrame, diff: Piece | None = None) -> None:
        """One block of pairs (:data:`PAIR_COLUMNS`; rows without both scores already left out); ``diff``: their
        ``diff`` column as an array another tally holds already (kept once, not written again)."""
        from ...metrics.fairness import text_gap_values

        if pairs.empty:
            return
        label = pairs["label"].to_numpy(dtype=float)
        label_code = np.where(label == 0, 0, np.where(label == 1, 1, -1)).astype(np.int8)
        sources, targets = pairs["source_split"].to_numpy(object), pairs["target_split"].to_numpy(object)
        split = np.zeros(len(pairs), dtype=np.int8)
        split[(sources == "train") & (targets == "train")] = 1
        split[(sources == "heldout") & (targets == "heldout")] = 2
        change = pairs["diff"].to_numpy(dtype=float)
        every: np.ndarray | None = None  # the block's gaps over all its pairs: taken once for every part that is all
        for name in _PARTS:
            mask = _part_mask(name, split, label_code)
            if mask.all():
                every = text_gap_values(pairs) if every is None else every
                self.gaps[name].append(every)
                self.changes[name].append(change.copy() if diff is None else diff)
            elif mask.any():
                self.gaps[name].append(text_gap_values(pairs.take(np.flatnonzero(mask))))
                self.changes[name].append(change[mask])
        for name in pd.unique(pairs["source_term"].dropna()):
            self.terms.setdefault(str(name), len(self.terms))
        target = self._numbers(pairs["target_term"])
        order, bounds = group_rows(pairs, "source_term", sort=True)
        for rows in np.split(order, bounds):
            if len(rows):  # a sub-table of a term's rows at a time (in their order), its name read once
                term = str(pairs["source_term"].iat[rows[0]])
                self.term_gaps.setdefault(term, ArrayLog(self.scratch)).append(text_gap_values(pairs.take(rows)))
                self.term_changes.setdefault(term, ArrayLog(self.scratch)).append(change[rows])
                self.term_targets.setdefault(term, ArrayLog(self.scratch)).append(target[rows])

    def _numbers(self, terms: pd.Series) -> np.ndarray:
        """Each term's number in :attr:`terms` (numbered as first met; 2 bytes while there are few), -1 for none."""
        codes, names = pd.factorize(terms)
        numbers = np.array([self.terms.setdefault(str(name), len(self.terms)) for name in names], dtype=np.int32)
        kind = np.int16 if len(self.terms) < np.iinfo(np.int16).max else np.int32
        known = np.full(len(codes), -1, dtype=kind)
        known[codes >= 0] = numbers[codes[codes >= 0]]
        return known

    def report(self, *, seed: int = 0, n_resamples: int = 2000, min_pairs: int = 1) -> GapReport:
        """The CTF gap overall, by label, by split (and label), by source term and by direction."""
        from ...metrics.fairness import gap_entry

        def entry(per_text: ArrayLog, changes: ArrayLog) -> GapReport:
            values = changes.concatenate()
            mean = float(pd.Series(values, copy=False).mean()) if values.size else math.nan
            return gap_entry(per_text.concatenate(np.empty(0)), values.size, mean, seed=seed, n_resamples=n_resamples)

        parts = {name: entry(self.gaps[name], self.changes[name]) for name in _PARTS}
        names = sorted(self.terms)  # by the terms' names, as grouping by the strings orders them
        rank = np.empty(len(names), dtype=np.int64)
        rank[[self.terms[n] for n in names]] = np.arange(len(names))
        return replace(
            parts["all"],
            by_label={"nontoxic": parts["nontoxic"], "toxic": parts["toxic"]},
            by_split={
                split: replace(
                    parts[split], by_label={"nontoxic": parts[f"{split}:nontoxic"], "toxic": parts[f"{split}:toxic"]}
                )
                for split in ("train", "heldout")
            },
            by_source_term={
                term: entry(self.term_gaps[term], self.term_changes[term]) for term in names if term in self.term_gaps
            },
            by_direction=tuple(
                direction
                for term in names
                if term in self.term_changes
                for direction in _by_direction(
                    term,
                    self.term_changes[term].concatenate(),
                    self.term_targets[term].concatenate(np.empty(0, np.int16)),
                    names,
                    rank,
                    min_pairs=min_pairs,
                    seed=seed,
                    n_resamples=n_resamples,
                )
            ),
        )


def _part_mask(name: str, split: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Which pairs a breakdown of :data:`_PARTS` holds, from their split codes (1 train, 2 held out) and labels."""
    part, labelled = _PARTS[name]
    mask = np.ones(split.size, dtype=bool) if part is None else split == (1 if part == "train" else 2)
    return mask if labelled is None else mask & (label == labelled)


def _by_direction(
    source: str,
    diff: np.ndarray,
    target: np.ndarray,
    names: list[str],
    rank: np.ndarray,
    *,
    min_pairs: int,
    seed: int,
    n_resamples: int,
) -> list[DirectionGap]:
    """The CTF gap per direction from ``source`` with at least ``min_pairs`` pairs, in the order of the target names,
    from its pairs' changes and target numbers (-1: no term; ``rank``: a number's place among the sorted ``names``)."""
    per_pair: list[DirectionGap] = []
    named = target >= 0
    if not named.any():
        return per_pair
    change, place = (diff, rank[target]) if named.all() else (diff[named], rank[target[named]])
    order = np.argsort(place, kind="stable")  # each direction's pairs in their order
    bounds = np.flatnonzero(np.diff(place[order])) + 1
    for rows in np.split(order, bounds):
        if len(rows) < max(1, min_pairs):
            continue
        values = change[rows]
        low, high = bootstrap_ci(np.abs(values), n_resamples=n_resamples, seed=seed)
        per_pair.append(
            DirectionGap(
                source=source,
                target=names[int(place[rows[0]])],
                pairs=len(values),
                mean_abs_diff=float(np.abs(values).mean()),
                mean_diff=float(values.mean()),
                ci_low=low,
                ci_high=high,
            )
        )
    return per_pair


@dataclass
class CTFOptions:
    """The options of :func:`ctf_core` (the keyword arguments of :func:`ctf` and :func:`run_ctf`) as the run's
    identity; in alphabetical order, as ``run.json`` has always listed them."""

    encoding: str = option("utf-8", help=vocabulary.ENCODING)
    grammar: bool = option(True, help="Fix the article and agreement around a swapped term; False: tokens only.")
    guard: str | None = option("spacy", help="Skip non-identity uses of ambiguous terms ('a black car').")
    id_column: str | None = option(None, help="Column with unique ids (default: row number).")
    identities: Any = option(None, help="Identity terms: t1,t2,... (default: the 50 Dixon et al. terms).")
    label_column: str | None = option(None, help="Column with toxic (1) / non-toxic (0) labels.")
    # en | fr | de: the default identity set (identity-fr, identity-de: swapped with agreement); later: English runs
    # keep their identity
    language: str = field(default="en", metadata={"later": True, "help": vocabulary.LANGUAGE})
    max_text_chars: int = option(MAX_TEXT_CHARS, help=vocabulary.MAX_TEXT_CHARS)
    n_resamples: int = option(2000, help="Bootstrap resamples of the gap's intervals.")
    positive_label: str | None = option(
        None, help="Classifier label whose probability is compared (default: the second)."
    )
    seed: int = option(0, help="Seed of the bootstrap.")
    text_column: str = option("text", help="Column with the texts.")


@options_signature(CTFOptions)
def ctf(
    texts: Any, classifier: Any = "profanity-check", *, progress: ProgressHook | bool | None = None, **options: Any
) -> CTFResult:
    """Counterfactual token fairness in memory: swap identity terms in ``texts`` (a list, a DataFrame, a dict of
    columns, a ``datasets.Dataset``), score with ``classifier`` (anything :func:`as_classifier` takes); ``options``
    as :func:`ctf_core` (``identities``, ``label_column``, ``guard``, ``seed``, ...)."""
    from ...classifiers import as_classifier
    from ...needs import require_in_memory
    from ...progress import resolve_progress
    from .result import CTFResult

    # an unknown option is named, with a "did you mean"; a missing extra before any work
    require_in_memory(CTFOptions, options, classifier=classifier)
    pairs, summary = ctf_core(texts, as_classifier(classifier), progress=resolve_progress(progress), **options)
    return CTFResult(pairs, summary)


def swap_described(grammar: bool, guard: str | None, language: str = "en") -> str:
    """Which swap ran, in words (the console, the summary and the report say it)."""
    from ...language_registry import get_language

    if get_language(language).inflected:
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
    scratch_dir: Path | None = None,
) -> tuple[pd.DataFrame, CTFSummary]:
    """Swap identity terms in every text, score each block of texts (``block`` at a time); the pairs table and the
    summary. With ``write_pairs`` each block's pairs go to it, with their texts, as they are made, and the returned
    table keeps only :data:`PAIR_COLUMNS` (what the statistics read: a few numbers and names per pair), and the
    classifier's per-text cache is emptied after each block: memory stays about flat whatever the input's size (#47).
    The statistics' per-pair numbers wait in an anonymous scratch file in ``scratch_dir`` (the run directory) or the
    system's temporary folder.

    The swap is the audit's (``grammar=True``: nouns and plurals matched, target forms of the same number, proper
    capitals, "a"/"an" agreement; see :class:`~counterfair.editors.swap.IdentitySwapEditor`). ``grammar=False`` is
    paper 001's Φ_A exactly, token for token: use it to check that a blinded model's gap on training terms is exactly
    0 (with "a"/"an" corrected it sees "a identity" and "an identity", which differ). ``language`` ``fr`` or ``de``
    (or a French or German set): the swap with agreement of :class:`~counterfair.editors.inflected.InflectedSwapEditor`.
    """
    from ...editors.registry import identity_editor
    from ...progress import NullProgress

    hook = progress or NullProgress()
    origin = origin or (str(source) if isinstance(source, str | Path) else "DataFrame")
    data = _ctf_input(source, origin, text_column, id_column, label_column, encoding, max_text_chars)
    identity_set, overlaps = _swap_set(identities, language)
    editor: Any = identity_editor(identity_set, guard=guard, grammar=grammar)
    with Scratch(scratch_dir) as scratch:  # the tallies' per-pair numbers on disk while the blocks go by (#47)
        tally, unscored = CTFTally(scratch), _Unscored()
        pairs, with_terms, index = _swap_and_score(
            data, editor, clf, positive_label, hook, write_pairs, block, tally, unscored
        )
        if with_terms == 0:
            from ...errors import InputError

            shown = ", ".join(identity_set.terms[:12]) + (" ..." if len(identity_set.terms) > 12 else "")
            raise InputError(
                f"{origin}: none of the {len(data.texts)} texts contains an identity term of the set "
                f"{identity_set.name!r} used as an identity ({shown}); there is nothing to swap, so no CTF gap "
                "(not a gap of 0)"
            )
        report = tally.report(seed=seed, n_resamples=n_resamples)
    from ... import __version__

    summary = CTFSummary(
        counterfair_version=__version__,
        command="ctf",
        input=_input_summary(data, origin, with_terms, max_text_chars),
        **{f.name: getattr(report, f.name) for f in fields(GapReport) if f.name not in ("extra", "keys")},
        pairs_without_score=unscored.pairs,
        # texts whose gap is a mean over only some of their counterfactuals: flagged, the gap is not complete
        incomplete_texts={"texts": len(unscored.texts), "ids": [str(i) for i in list(unscored.texts)[:50]]},
        complete=unscored.pairs == 0,
        identities={
            "name": identity_set.name,
            "train": list(identity_set.train),
            "heldout": list(identity_set.heldout),
            "overlapping_terms": [f"{a!r} is part of {b!r} (the longer match wins)" for a, b in overlaps],
        },
        guard={"mode": guard, "occurrences": editor.found, "blocked": editor.blocked},
        swap={"grammar": grammar, "guard": guard, "described": swap_described(grammar, guard, identity_set.language)},
        classifier=ClassifierInfo.from_dict(clf.summary_info()),
        positive_label=clf.labels[index],
    )
    return missing_as_nan(pairs), summary


class _Unscored:
    """The pairs without both scores (left out of the statistics): how many, and their texts' ids in order."""

    def __init__(self) -> None:
        self.pairs = 0
        self.texts: dict[Any, None] = {}

    def split(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """Count a block's unscored pairs; the scored ones."""
        missing = pairs[["score_orig", "score_cf"]].isna().any(axis=1).to_numpy()
        if not missing.any():
            return pairs
        self.pairs += int(missing.sum())
        self.texts.update(dict.fromkeys(pairs["input_id"].to_numpy(object)[missing]))
        return pairs[~missing]


def _swap_and_score(
    data: _CTFInput,
    editor: Any,
    clf: Any,
    positive_label: str | None,
    hook: Any,
    write_pairs: Callable[[pd.DataFrame], None] | None,
    block: int,
    tally: CTFTally,
    unscored: _Unscored,
) -> tuple[pd.DataFrame, int, int]:
    """Every text's swaps and scores, ``block`` texts at a time, each block's statistics into ``tally`` (its pairs
    without both scores counted in ``unscored`` instead): the pairs (when each block goes to ``write_pairs`` as it is
    made, none are kept: an empty table), how many texts had a term, and the scored label's index (known once the
    classifier has answered: a Python function's labels come with it)."""
    whole: list[pd.DataFrame] = []  # in memory: every block's pairs as they are
    with_terms = index = 0
    hook.start(f"swap and classifier ({clf.spec})", len(data.texts))
    for start in range(0, len(data.texts), block):
        part = data.rows(start, start + block)
        variants = editor.edit(["" if i in part.reasons else t for i, t in enumerate(part.texts)])
        with_terms += sum(1 for v in variants if v)
        if any(variants):
            pairs_block, index = _scored_pairs(part, variants, clf, positive_label)
            tally.add(unscored.split(pairs_block))
            if write_pairs is not None:
                write_pairs(missing_as_nan(pairs_block))
                clf.forget()  # the classifier's per-text cache: memory about flat whatever the input's size
            else:
                whole.append(pairs_block)
        hook.advance(len(part.texts))
    kept = pd.concat(whole, ignore_index=True) if whole else pd.DataFrame(columns=PAIR_FILE_COLUMNS)
    return kept, with_terms, index


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
    from ...io import read_texts
    from ...text import skip_reason

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
    from ...lexicons.attributes import identity_set_in

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


class CTFInputSummary(TypedDict):
    """The ctf input: where from, its texts, those with an identity term, and the texts skipped (with their ids)."""

    source: str
    texts: int
    texts_with_identity_terms: int
    skipped_too_long: dict[str, Any]
    skipped_control_characters: dict[str, Any]


def _input_summary(data: _CTFInput, origin: str, with_terms: int, max_text_chars: int) -> CTFInputSummary:
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
