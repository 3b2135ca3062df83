"""``counterfair audit``: the end-to-end fairness audit of a text classifier.

texts -> editors (word lists, identity swaps, LLM rewriting) -> filters -> classifier under test -> metrics -> report.

For every attribute that the texts reference, the attribute methods (``ablation``, ``substitution``, ``llm``)
make one counterfactual per text; ``swap`` makes every identity-swap variant of every text with an identity term.
The classifier scores each distinct text once. The audit then reports, per method and attribute, how the score
moves from original to counterfactual (mean change with a bootstrap CI, as paper 000 Table 5), how many
predictions flip at a threshold, and for swaps the CTF gap per identity group and per (source -> target)
direction.

Run directory (``DIR``)::

    run.json            options, input hash and the classifier's identity (a rerun with the same DIR resumes)
    generate/<name>/    the generate runs (candidates, counterfactuals, checkpoints)
    scores.jsonl        classifier probabilities per distinct text (the cache that makes a rerun resume)
    pairs.csv           one row per (original, counterfactual) pair with both scores
    slots.csv           every identity slot with each identity term and placebo word in it, scored (analysis/slots)
    summary.json        every aggregate, the signatures, the options
    report.html         the report (one self-contained file), report.md, plots/*.png and *.svg
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ...analysis.families import TermSlots, gender_context, slot_writer
from ...analysis.gate import tallied_metrics
from ...analysis.placebo import load_placebo, placebo_editor, swapped_matches
from ...analysis.slots import (
    SLOT_COLUMNS,
    SlotScores,
    family_scores,
    scored_slots,
    slot_effects,
)
from ...classifiers import CachedClassifier
from ...editors.registry import (
    resolve_detector,
    swap_methods,
    swaps_identities,
)
from ...errors import InputError
from ...jsontypes import JSONObject
from ...labels import checked_positive_index, positive_index
from ...lexicons.attributes import GenderSet, IdentitySet, is_swap_attribute
from ...metrics.fairness import with_scores
from ...progress import ProgressHook, resolve_progress
from ...records import make_options, options_signature
from ...spill import ObjectLog, Scratch
from ...summaries import (
    AuditInput,
    BiasSummary,
    ComparisonSummary,
    GapReport,
    GateMetrics,
    PlaceboWords,
    Validity,
)
from ...writing import missing_as_nan, nan_to_none
from ..ctf.core import CTFTally
from ..generate.core import generate_frame
from ..generate.options import GenerateOptions
from .options import (
    AuditOptions,
    attribute_matcher,
    identity_set_of,
    in_language,
    plan_frame,
    read_input,
    swap_methods_of,
)
from .result import AuditResult
from .summary import (
    EXAMPLE_COLUMNS,
    audit_summary,
    coverage_of,
    joined_frames,
)
from .tallies import FlipTally, GapTally, MethodTally


@options_signature(AuditOptions, skip=("classifier",))
def audit(
    texts: Any,
    classifier: Any = "profanity-check",
    *,
    progress: ProgressHook | bool | None = None,
    **options: Any,
) -> AuditResult:
    """The audit in memory: ``texts`` (a list of strings, a DataFrame with a ``text`` column, a dict of columns, a
    ``datasets.Dataset`` or a file) against ``classifier`` (anything :func:`as_classifier` takes). ``options`` are
    :class:`AuditOptions`'s fields (``attributes``, ``methods``, ``threshold``, ``identities``, ``seed``, ...)."""
    from ...classifiers import as_classifier
    from ...classifiers.base import relabel
    from ...needs import require, require_in_memory

    require_in_memory(AuditOptions, options, classifier=classifier)  # a missing extra is named before any work
    clf = as_classifier(classifier)
    opts = make_options(AuditOptions, {"classifier": clf.spec, **options})
    clf = relabel(clf, opts.labels)
    from ...classifiers.remote import on_engine

    on_engine(clf, opts.engine, opts.address)
    hook = resolve_progress(progress)
    started = time.perf_counter()
    frame, origin = read_input(texts, opts)
    opts = in_language(opts, frame)  # language="auto": read from the texts
    require(opts, classifier=clf)  # the language read may need its extra
    kept: list[tuple[pd.DataFrame, pd.DataFrame]] = []
    summary = audit_core(
        frame,
        opts,
        clf,
        plan_=plan_frame(frame, opts, origin),
        origin="in memory" if origin == "DataFrame" else origin,
        generate=lambda name, subset, o: generate_frame(subset, o, progress=hook),
        score=lambda all_texts: _predict(clf, all_texts),
        started=started,
        sink=lambda pairs, slots: kept.append((pairs, slots)),
    ).summary
    return AuditResult(joined_frames([p for p, _ in kept]), summary, joined_frames([s for _, s in kept]))


def _predict(clf: CachedClassifier, texts: list[str]) -> dict[str, list[float]]:
    unique = list(dict.fromkeys(texts))
    proba = clf.predict_proba(unique)
    return {t: [float(x) for x in row] for t, row in zip(unique, proba, strict=True)}


BIAS_BOOTSTRAP = 1000  # the labelled-data intervals resample far more rows than the swaps: at most this many


def labelled_bias(frame: pd.DataFrame, orig_scores: dict[str, float], opts: AuditOptions) -> BiasSummary:
    """The bias metrics of :mod:`counterfair.commands.bias.core` on the originals' gold labels and scores, groups from
    the audit's identity set (with its guard)."""
    from ..bias.core import BiasOptions, bias_core, memberships

    bias_opts = BiasOptions(
        identities=opts.identities,
        guard=opts.guard,
        threshold=opts.threshold,
        bootstrap=min(opts.bootstrap, BIAS_BOOTSTRAP),
        seed=opts.seed,
    )
    texts = frame["text"].tolist()
    members = memberships(frame, texts, bias_opts, "audit input")
    scores = np.array([orig_scores[t] for t in texts], dtype=float)
    metrics = bias_core(frame["label"].to_numpy(), scores, members, bias_opts)
    return replace(metrics, label_column=opts.label_column, threshold=opts.threshold)


def compared(
    pairs: pd.DataFrame,
    opts: AuditOptions,
    *,
    baseline: str,
    spec: str,
    slots: pd.DataFrame | None = None,
) -> ComparisonSummary:
    """The comparison of the audit's ``pairs`` with ``baseline`` (another audit's run directory or pairs.csv, or a
    classifier spec that scores these pairs), for the summary; ``slots``: this audit's scored slot table (the
    comparison's in-slot measures)."""
    from ...analysis.compare import compare_pairs, rescore_pairs
    from ...analysis.slots import read_slots, rescore_slots

    path = Path(baseline)
    if path.is_dir() or path.suffix.lower() == ".csv":
        before: Any = path
        their_slots = read_slots(path)
    else:
        before = rescore_pairs(pairs, baseline, threshold=opts.threshold, positive_label=opts.positive_label)
        their_slots = rescore_slots(slots, baseline, positive_label=opts.positive_label) if slots is not None else None
    return compare_pairs(
        before,
        pairs,
        names=(str(baseline), spec),
        seed=opts.seed,
        n_resamples=opts.bootstrap,
        slots=(their_slots, slots),
        threshold=opts.threshold,
    )


class Audited(NamedTuple):
    """What :func:`audit_core` gives the shell: the summary, and the gate's metrics of the identity swaps (from the
    tallies its statistics were computed from: no table of pairs is kept) with why a run has none."""

    summary: JSONObject  # an AuditSummary as summary.json holds it
    gate_metrics: GateMetrics
    unscored: str | None


def audit_core(
    frame: pd.DataFrame,
    opts: AuditOptions,
    clf: CachedClassifier,
    *,
    plan_: AuditInput,
    origin: str,
    generate: Callable[[str, pd.DataFrame, GenerateOptions], Any],
    score: Callable[[list[str]], dict[str, list[float]]],
    started: float,
    sink: Callable[[pd.DataFrame, pd.DataFrame], None],
    scratch_dir: Path | None = None,
) -> Audited:
    """The audit: counterfactuals by ``generate(name, texts, options)`` (in memory, or the shell's resumable runs),
    probabilities by ``score(texts)``; the pairs table and the scored slot table (:mod:`counterfair.analysis.slots`:
    every identity slot with each term and placebo word) go to ``sink(pairs, slots)`` a block of inputs at a time
    (the shell writes them as they come: a large input's tables are never held whole), the statistics are tallied (their
    pieces in an anonymous scratch file in ``scratch_dir``, the run directory, or the system's temporary folder)."""
    checked_positive_index(clf, frame["text"].iloc[0], opts.positive_label)  # before any generation
    generated, timing = _generate_all(frame, opts, plan_, generate)
    identity_set = identity_set_of(opts)
    with Scratch(scratch_dir) as scratch:  # closed (its disk space given back) however the tallies end
        made = AuditTallies(opts, identity_set, load_placebo(opts.placebo, identity_set), timing, sink, scratch)
        texts = frame["text"].tolist()
        t0 = time.perf_counter()
        scores = score(texts)
        timing["classifier"] = round(time.perf_counter() - t0, 2)
        index = positive_index(clf.labels, opts.positive_label)
        orig_scores = {t: scores[t][index] for t in texts}
        rated, kept = _edit_rows(generated, opts)
        for name, result in generated.items():
            if name not in kept:  # identity swaps or a swap pack: every variant, a block of inputs at a time
                for block in _swap_rows(name, result):
                    made.add(block, score, orig_scores, index)
                    clf.forget()  # the classifier's per-text cache: memory about flat whatever the input's size
            elif kept[name]:
                made.add(kept[name], score, orig_scores, index)
        _probe(frame, opts, plan_, made, score, index)
        made.finish()
        placebo = made.placebo
        summary = audit_summary(opts, plan_, generated, made, orig_scores, clf, index, origin)
        summary = replace(summary, validity=_validity(generated, rated, sum(len(r) for r in kept.values()), opts))
        if placebo is not None:
            t0 = time.perf_counter()
            found = (
                slot_effects(made.slots, threshold=opts.threshold, seed=opts.seed, n_resamples=opts.bootstrap)
                if made.slots
                else None
            )
            summary = replace(  # the words the slots were filled with, and what they measured
                summary,
                placebo=PlaceboWords(set=placebo.to_dict()),
                effects=found,
            )
            timing["effects"] = round(time.perf_counter() - t0, 2)
        summary = replace(summary, coverage=coverage_of(frame, made.reached, plan_.attributes, opts))
    if opts.label_column:
        t0 = time.perf_counter()
        summary = replace(summary, bias=labelled_bias(frame, orig_scores, opts))
        timing["bias"] = round(time.perf_counter() - t0, 2)
    summary = replace(summary, timing_s={**timing, "total": round(time.perf_counter() - started, 2)})
    gate = tallied_metrics(summary.ctf, made.flips.flips, summary.effects, summary.ctf_by_attribute)
    return Audited(nan_to_none(summary.to_dict()), gate, made.flips.unscored())  # NaN written None, as summary.json


def _probe(
    frame: pd.DataFrame,
    opts: AuditOptions,
    plan_: AuditInput,
    made: AuditTallies,
    score: Callable[[list[str]], dict[str, list[float]]],
    index: int,
) -> None:
    """The probe slots (:mod:`counterfair.analysis.probes`), where the run swaps identities and its natural slots of
    a family are thin (``--probes``): first names written beside the persons the texts name (where it measures first
    names), identity terms written before them (English)."""
    from ...analysis.probes import DescriptorProbes, probe_blocks, probes_wanted
    from ...editors.registry import swaps_identities
    from ...language_registry import get_language

    if made.placebo is None or not any(swaps_identities(m) for m in opts.methods):
        return
    packs = opts.attributes if opts.attributes is not None else list(get_language(opts.language).packs)
    names = "names" in packs and probes_wanted(opts.probes, int(plan_.attributes.get("names", 0)))
    english = get_language(opts.language).code == "en" and made.identity_set.language == "en"
    writers = (
        [DescriptorProbes(made.identity_set, made.placebo, context=made.context, max_chars=opts.max_text_chars)]
        if english and probes_wanted(opts.probes, plan_.identity_texts)
        else []
    )
    if not names and not writers:
        return
    from ...lexicons.attributes import load_identity_set

    t0 = time.perf_counter()
    found = probe_blocks(
        frame, load_identity_set("names") if names else None, max_chars=opts.max_text_chars, writers=writers
    )
    for block in found:
        made.add_slots(block, score, index)
    made.timing["probes"] = round(time.perf_counter() - t0, 2)


def _only_good(rows: list[dict[str, Any]], directory: Any) -> list[dict[str, Any]]:
    """The pairs the raters judged good (identity swaps are not rated and all stay); a rating project none of whose
    pairs is one of this audit's is an error, not an audit of nothing."""
    from ...rating.consolidate import good_pair_ids
    from ...rating.store import pair_id

    good = good_pair_ids(directory)
    rated = [r for r in rows if not swaps_identities(r["method"])]
    ids = [pair_id(r["method"], r["attribute"], r["input_id"]) for r in rated]
    keep = good & set(ids)
    if rated and not keep:
        raise InputError(
            f"--only-good {directory}: none of its {len(good)} good pairs is a pair of this audit (e.g. "
            f"{sorted(good)[:2]} vs this audit's {ids[:2]}); was the rating project made from this audit's pairs?"
        )
    return [
        r for r in rows if swaps_identities(r["method"]) or pair_id(r["method"], r["attribute"], r["input_id"]) in keep
    ]


def _mark_ratings(rows: list[dict[str, Any]], directory: Any) -> None:
    """Each word-list or LLM pair's ``rating`` (good, poor or unrated) from a consolidated rating project; a project
    none of whose rated pairs is one of this audit's is an error, not a plot of nothing."""
    from ...rating.consolidate import pair_ratings
    from ...rating.store import pair_id

    verdicts = pair_ratings(directory)
    if not verdicts:
        raise InputError(
            f"--ratings {directory}: no pair has a verdict yet (rate pairs, then run counterfair rate consolidate "
            f"{directory})"
        )
    for row in rows:
        rated = not swaps_identities(row["method"])
        row["rating"] = (
            verdicts.get(pair_id(row["method"], row["attribute"], row["input_id"]), "unrated") if rated else None
        )
    if not any(r["rating"] in ("good", "poor") for r in rows):
        raise InputError(
            f"--ratings {directory}: none of its {len(verdicts)} rated pairs is a pair of this audit (e.g. "
            f"{sorted(verdicts)[:2]}); was the rating project made from this audit's pairs?"
        )


def _generate_all(
    frame: pd.DataFrame, opts: AuditOptions, plan_: AuditInput, generate: Callable[..., Any]
) -> tuple[dict[str, Any], dict[str, float]]:
    """One generation per referenced attribute (its texts only) and one of identity swaps over every text."""
    texts = frame["text"].tolist()
    attr_methods = [m for m in opts.methods if not swaps_identities(m)]
    common: dict[str, Any] = {
        "id_column": "id",
        "guard": "spacy" if opts.guard else None,
        "llm": opts.llm,
        "samples": opts.samples,
        "max_attempts": opts.max_attempts,
        "retry_nearness": opts.retry_nearness,
        "llm_parallel": opts.llm_parallel,
        "llm_concurrency": opts.llm_concurrency,
        # auto where the audit's detector is auto's: each generation resolves it by its own methods (the swap-only ones
        # record keyword, the llm one keyword+llm)
        "detector": "auto" if opts.detector == resolve_detector("auto", opts.methods) else opts.detector,
        "seed": opts.seed,
        "identities": opts.identities,
        "max_text_chars": opts.max_text_chars,
        "language": opts.language,
    }
    generated: dict[str, Any] = {}
    timing: dict[str, float] = {}
    for attribute in plan_.attributes:
        swapped = is_swap_attribute(attribute)
        if not (attr_methods or swapped):
            continue
        matcher = attribute_matcher(attribute, opts.language)
        subset = frame[[matcher.contains(t) for t in texts]].reset_index(drop=True)
        t0 = time.perf_counter()
        folder = checkpoint_name(attribute)
        if swapped:  # a swap pack: its swap variants, like the identity swaps
            pack = GenerateOptions(
                methods=swap_methods_of(opts), score_methods=[], **{**common, "identities": attribute}
            )
            generated[attribute] = generate(folder, subset, pack)
        else:
            options = GenerateOptions(attribute=attribute, methods=attr_methods, **common)
            generated[attribute] = generate(folder, subset, options)
        timing[f"generate:{attribute}"] = round(time.perf_counter() - t0, 2)
    if swap_methods_of(opts) and plan_.identity_texts:
        t0 = time.perf_counter()
        generated["identity"] = generate(
            "identity", frame, GenerateOptions(methods=swap_methods_of(opts), score_methods=[], **common)
        )
        timing["generate:identity"] = round(time.perf_counter() - t0, 2)
    return generated, timing


def _scored_pairs(
    rows: list[dict[str, Any]], probs: dict[str, float], opts: AuditOptions, identity_set: Any
) -> pd.DataFrame:
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS[:8])
    if opts.ratings:  # each edit's verdict; identity swaps are not rated
        pairs["rating"] = [r.get("rating") for r in rows]
    pairs = with_scores(pairs, probs, opts.threshold)
    sets = _swap_sets(set(pairs["attribute"]), identity_set)

    def group(attribute: str, term: Any) -> str | None:
        return sets[attribute].group_of(term) if isinstance(term, str) and attribute in sets else None

    pairs["group"] = [group(a, t) for a, t in zip(pairs["attribute"], pairs["source_term"], strict=True)]
    pairs["target_group"] = [group(a, t) for a, t in zip(pairs["attribute"], pairs["target_term"], strict=True)]
    return pairs[[c for c in PAIR_COLUMNS if c in pairs.columns]]


def checkpoint_name(attribute: str) -> str:
    """The folder of an attribute's generation under ``OUT/generate/``: a built-in pack's name, or for a pack given as
    a file its stem and a hash of its full path ("my_pack-1a2b3c4d"), so every write stays under ``--out`` and two
    files of one name do not share a checkpoint."""
    import hashlib

    path = Path(attribute).expanduser()
    if path.suffix.lower() not in (".yaml", ".yml", ".json") and "/" not in attribute and os.sep not in attribute:
        return attribute
    digest = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", path.stem) or "pack"
    return f"{stem}-{digest}"


def _swap_sets(attributes: set[str], identity_set: IdentitySet) -> dict[str, IdentitySet | GenderSet]:
    """The swap set behind each swap attribute of the pairs (``identity``: the audit's identity set)."""
    from ...lexicons.attributes import load_swap_set

    out: dict[str, IdentitySet | GenderSet] = {"identity": identity_set}
    out |= {a: load_swap_set(a) for a in attributes if a != "identity" and is_swap_attribute(a)}
    return out


def _validity(generated: dict[str, Any], rated: int, kept_rated: int, opts: AuditOptions) -> Validity:
    """How many of the candidate pairs count: identity occurrences the guard kept, rated pairs the raters kept."""
    signatures = generated["identity"].typed_summary.signatures if "identity" in generated else {}
    swaps = [signatures.get(m) or {} for m in swap_methods_of(opts)]
    found = sum(int(swap.get("identity_occurrences", 0)) for swap in swaps)
    blocked = sum(int(swap.get("guard_blocked", 0)) for swap in swaps)
    return Validity(
        identity_occurrences=found,
        guard_blocked=blocked,
        guard_kept_share=(found - blocked) / found if found else None,
        rated_pairs=rated if opts.only_good else None,
        raters_kept_share=kept_rated / rated if opts.only_good and rated else None,
    )


PAIR_COLUMNS = [
    "method",
    "attribute",
    "input_id",
    "source_text",
    "cf_text",
    "source_term",
    "target_term",
    "edits",
    "score_orig",
    "score_cf",
    "diff",
    "flipped",
    "status",
    "group",
    "target_group",
    "rating",
]


def pair_columns(opts: AuditOptions) -> list[str]:
    """The columns of the audit's pairs table (``rating`` where ``--ratings`` gives the edits' verdicts)."""
    return [c for c in PAIR_COLUMNS if c != "rating" or opts.ratings]


def _swapped(result: Any) -> bool:
    """Whether a generation holds identity swaps or a swap pack's (every variant is a pair), not edits (one each)."""
    methods = set(result.counterfactuals["method"])
    return bool(methods) and all(swaps_identities(m) for m in methods)


#: a block of the identity swaps' pairs: about this many candidates (some 400 inputs' every variant) are paired,
#: given their placebo and slot texts and scored at a time
SWAP_BLOCK_ROWS = 20_000


def _swap_rows(name: str, result: Any) -> Iterator[list[dict[str, Any]]]:
    """The pair rows of a generation of identity swaps (or a swap pack's), every variant, a block of inputs at a time
    (the candidates are read block by block from the run's ``candidates.csv``)."""
    cfs = result.counterfactuals
    sources = dict(zip(cfs["input_id"], cfs["source_text"], strict=True))
    columns = ("method", "input_id", "text", "source_term", "target_term", "edits")
    for cands in result.candidate_blocks(columns, SWAP_BLOCK_ROWS):
        cands = cands[cands["method"].isin(swap_methods())]
        yield [
            {
                "method": c.method,
                "attribute": name,
                "input_id": c.input_id,
                "source_text": sources[c.input_id],
                "cf_text": c.text,
                "source_term": c.source_term,
                "target_term": c.target_term,
                "edits": c.edits,
            }
            for c in cands.itertuples()
        ]


def _edit_rows(generated: dict[str, Any], opts: AuditOptions) -> tuple[int, dict[str, list[dict[str, Any]]]]:
    """The pair rows of the word-list and LLM edits (one per input and method with a counterfactual), per generation,
    after ``--only-good`` and with ``--ratings``' verdicts; and how many there were before ``--only-good``."""
    kept: dict[str, list[dict[str, Any]]] = {}
    for name, result in generated.items():
        if _swapped(result):
            continue
        cfs = result.counterfactuals
        cands = result.candidates
        selected = cands[cands["selected"] == True] if not cands.empty else None  # noqa: E712
        edits = {} if selected is None else {(r.input_id, r.method): r.edits for r in selected.itertuples()}
        kept[name] = [
            {
                "method": c.method,
                "attribute": name,
                "input_id": c.input_id,
                "source_text": c.source_text,
                "cf_text": c.text,
                "source_term": None,
                "target_term": None,
                "edits": edits.get((c.input_id, c.method), ""),
            }
            for c in cfs[cfs["status"] == "ok"].itertuples()
        ]
    every = [r for rows in kept.values() for r in rows]
    rated = len(every)
    if opts.only_good:
        good = {id(r) for r in _only_good(every, opts.only_good)}
        kept = {name: [r for r in rows if id(r) in good] for name, rows in kept.items()}
    if opts.ratings:
        _mark_ratings([r for rows in kept.values() for r in rows], opts.ratings)
    return rated, kept


class AuditTallies:
    """The audit's pairs and slots as blocks of pair rows go by: each block's placebo texts, slot texts and
    classifier scores, then its scored pairs and slots tables."""

    def __init__(
        self,
        opts: AuditOptions,
        identity_set: Any,
        placebo: Any,
        timing: dict[str, float],
        sink: Callable[[pd.DataFrame, pd.DataFrame], None],
        scratch: Scratch,
    ) -> None:
        self.opts, self.identity_set, self.placebo, self.timing, self.sink = opts, identity_set, placebo, timing, sink
        self.scratch = scratch  # the tallies' pieces on disk as the blocks go by (#47: memory flat through them)
        self.methods: dict[tuple[str, str], MethodTally] = {}  # per (method, attribute)
        self.unscored = 0  # pairs without a score
        self.reached: set[str] = set()  # the input ids with a pair
        self.flips = FlipTally()  # the identity swaps' flips, for the gate
        self.slots: dict[str, ObjectLog[SlotScores]] = {}  # per family of slots (identity terms, gender words, names)
        self.seen_slots: dict[str, set[bytes]] = {}  # per family, the slots measured (one slot, one measurement)
        self.writers: dict[str, Any] = {}  # per swap pack: what writes its slots (analysis.families)
        self.context = gender_context(opts.language)  # the gender words a text names (the identity terms' cells)
        self.top: list[pd.DataFrame] = []  # the largest changes so far: one frame (top_examples rows)
        self.ctf: dict[str, CTFTally] = {}  # per swap attribute; per (attribute, group of the source term)
        self.ctf_groups: dict[tuple[str, str], GapTally] = {}
        self.editor: Any = None  # the placebo words' swap
        self.blocks = 0
        if placebo is not None:
            timing["placebo"] = 0.0

    def add(
        self,
        rows: list[dict[str, Any]],
        score: Callable[[list[str]], dict[str, list[float]]],
        orig_scores: dict[str, float],
        index: int,
    ) -> None:
        opts, identity_set, placebo = self.opts, self.identity_set, self.placebo
        slots = pd.DataFrame(columns=SLOT_COLUMNS[:-1])
        if placebo is not None and rows:
            t0 = time.perf_counter()
            slots = self._slot_texts(rows)
            self.timing["placebo"] = round(self.timing["placebo"] + time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        placebo_only = [t for t in slots["text"] if isinstance(t, str)]
        texts = [r["cf_text"] for r in rows] + placebo_only
        probs = {t: p[index] for t, p in score(texts).items()} | orig_scores
        self.timing["classifier"] = round(self.timing["classifier"] + time.perf_counter() - t0, 2)
        self.keep(missing_as_nan(_scored_pairs(rows, probs, opts, identity_set)), scored_slots(slots, probs))

    def add_slots(self, slots: pd.DataFrame, score: Callable[[list[str]], dict[str, list[float]]], index: int) -> None:
        """Slots without pairs (probes, :mod:`counterfair.analysis.probes`): scored, to the sink, tallied."""
        texts = list(dict.fromkeys(t for t in slots["text"] if isinstance(t, str)))
        probs = {t: p[index] for t, p in score(texts).items()}
        scored = scored_slots(slots, probs)
        self.sink(missing_as_nan(_scored_pairs([], {}, self.opts, self.identity_set)), scored)
        self.blocks += 1
        for family, found in family_scores(scored, self.seen_slots).items():
            self.slots.setdefault(family, ObjectLog(self.scratch)).append(found)

    def keep(self, pairs: pd.DataFrame, slots: pd.DataFrame) -> None:
        """One block's tables to the sink, and what the statistics need of them (tallies: never the pairs)."""
        self.sink(pairs, slots)
        self.blocks += 1
        if pairs.empty:
            return
        for (method, attribute), part in pairs.groupby(["method", "attribute"], sort=False):
            self.methods.setdefault((str(method), str(attribute)), MethodTally(self.scratch)).add(part)
        self.unscored += int((pairs["status"] != "ok").sum())
        self.reached.update(str(i) for i in pairs["input_id"].unique())
        if self.placebo is not None:
            for family, found in family_scores(slots, self.seen_slots).items():
                self.slots.setdefault(family, ObjectLog(self.scratch)).append(found)
        swaps = pairs[pairs["method"].isin(swap_methods()).to_numpy(dtype=bool)]
        self.flips.add(swaps[(swaps["attribute"] == "identity").to_numpy(dtype=bool)])
        ok = pairs[pairs["status"] == "ok"]
        if len(ok):  # the block's largest changes, taken row by row: a slice of a sorted copy would hold all its texts
            largest = np.argsort(-ok["diff"].abs().to_numpy(dtype=float), kind="stable")[: self.opts.top_examples]
            top = ok[EXAMPLE_COLUMNS].take(largest)
            self.top = [self._largest([*self.top, top.assign(abs_diff=top["diff"].abs())])]  # never more than that
        swap = ok[ok["method"].isin(swap_methods())]
        for attribute, part in swap.groupby("attribute", sort=False):
            table = part.assign(label=np.nan, source_split="all", target_split="all", abs_diff=part["diff"].abs())
            methods = part["method"].unique()  # one swap method: its tally holds these changes already
            shared = self.methods[(str(methods[0]), str(attribute))].diff.last if len(methods) == 1 else None
            self.ctf.setdefault(str(attribute), CTFTally(self.scratch)).add(table, diff=shared)
            for group, mine in table.groupby("group", sort=False):
                self.ctf_groups.setdefault((str(attribute), str(group)), GapTally(self.scratch)).add(mine)

    def _slot_texts(self, rows: list[dict[str, Any]]) -> pd.DataFrame:
        """A block's slot texts (one generation's pairs: the identity swaps, or a swap pack's)."""
        attribute = str(rows[0].get("attribute") or "identity")
        if attribute != "identity" and not is_swap_attribute(attribute):
            return pd.DataFrame(columns=SLOT_COLUMNS[:-1])  # word-list edits: no slot
        writer = self.writers.get(attribute)
        if writer is None:  # built once per pack, used by every block
            if attribute == "identity":
                self.editor = placebo_editor(self.identity_set, self.placebo)
                writer = TermSlots(self.identity_set, self.placebo, context=self.context, editor=self.editor)
            else:
                writer = slot_writer(attribute, _swap_sets({attribute}, self.identity_set)[attribute], self.placebo)
            self.writers[attribute] = writer
        if attribute != "identity":
            return writer.write(rows)  # type: ignore[no-any-return]
        return writer.write(rows, swapped_matches(rows, self.editor, self.identity_set))  # type: ignore[no-any-return]

    def finish(self) -> None:
        """With no pair at all: the tables' headers to the sink."""
        if not self.blocks:
            self.keep(
                missing_as_nan(_scored_pairs([], {}, self.opts, self.identity_set)),
                scored_slots(pd.DataFrame(columns=SLOT_COLUMNS[:-1]), {}),
            )

    def top_examples(self) -> list[dict[Any, Any]]:
        """The pairs with the largest score change, largest first (ties in the order of the pairs)."""
        if not self.top:
            return []
        return self._largest(self.top)[EXAMPLE_COLUMNS].to_dict("records")

    def _largest(self, tops: list[pd.DataFrame]) -> pd.DataFrame:
        """The largest changes of these blocks' (in order; ties in the order of the pairs): the largest of the blocks
        so far and of a new block are the largest of all of them, so one frame of them is all a run keeps."""
        top = pd.concat(tops, ignore_index=True) if len(tops) > 1 else tops[0]
        return top.sort_values("abs_diff", ascending=False, kind="stable").head(self.opts.top_examples)

    def swap_ctf(self, attribute: str) -> GapReport:
        """The CTF gap of one attribute's swap pairs: overall, per group of the source term, per term and direction."""
        opts = self.opts
        report = self.ctf[attribute].report(seed=opts.seed, n_resamples=opts.bootstrap)
        by_group = {
            group: tally.report(seed=opts.seed, n_resamples=opts.bootstrap).gap_only()
            for (name, group), tally in sorted(self.ctf_groups.items())
            if name == attribute
        }
        return replace(
            report.gap_only(),
            by_group=by_group,
            by_source_term=report.by_source_term,
            by_direction=report.by_direction,
        )
