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
from dataclasses import MISSING, asdict, dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple, NotRequired, TypedDict

import numpy as np
import pandas as pd

from ... import __version__, vocabulary
from ...analysis.compare import Comparison
from ...analysis.families import TermSlots, gender_context, slot_writer
from ...analysis.gate import tallied_metrics
from ...analysis.placebo import load_placebo, placebo_editor, swapped_matches
from ...analysis.slots import (
    SLOT_COLUMNS,
    Section,
    SlotScores,
    family_scores,
    scored_slots,
    slot_effects,
)
from ...classifiers import CachedClassifier
from ...editors.registry import (
    IDENTITY_SWAP,
    default_editors,
    editor_spec,
    resolve_detector,
    swap_methods,
    swaps_identities,
)
from ...errors import ConfigError, InputError
from ...io import (
    missing_as_nan,
    nan_to_none,
    read_texts,
    text_frame,
)
from ...labels import binary_labels, checked_positive_index, positive_index
from ...lexicons.attributes import GenderSet, IdentitySet, is_swap_attribute, known_attributes, load_attribute
from ...metrics.fairness import GapEntry, with_scores
from ...progress import ProgressHook, resolve_progress
from ...records import knob, make_options, option, options_signature
from ...spill import ObjectLog, Scratch
from ...summaries import DEMO_FILE, AuditSummary, GateMetrics, MeanData, ScoredRun
from ...text import MAX_TEXT_CHARS
from ..bias.core import BiasMetrics, check_bootstrap_cap
from ..ctf.core import CTFTally, Direction
from ..generate.core import generate_frame
from ..generate.options import RETRY_NEARNESS, GenerateOptions, is_sampled, normalize_methods, uses_sampled_method
from .result import AuditResult
from .tallies import FlipTally, GapTally, MethodTally

SECONDS_FIXED = 25.0  # loading spaCy, MiniLM and the classifier


def demo_path() -> Path:
    """The built-in demo texts: non-toxic, identity-referencing sentences written for counterfair."""
    return Path(str(resources.files("counterfair") / "resources" / DEMO_FILE))


@dataclass
class AuditOptions:
    classifier: str = knob("profanity-check")  # the classifier's own identity joins the run's (claim_run_dir)
    attributes: list[str] | None = option(
        None,
        help=(
            "Comma-separated attributes or packs (default: every paper-000 attribute the texts "
            "reference); gender, names and nationality add their swaps; `counterfair attributes list` "
            "shows them all."
        ),
    )
    methods: list[str] = field(default_factory=lambda: list(default_editors("audit")))
    text_column: str = option("text", help="Column with the texts.")
    id_column: str | None = option(None, help="Column with unique ids.")
    threshold: float = option(0.5, help="Score threshold for flips.")
    positive_label: str | None = option(None, help="Classifier label whose probability is the score.")
    identities: str | None = option(None, help="Identity terms for swaps (default: Dixon et al.'s 50).")
    guard: bool = option(True, help="Skip non-identity uses of ambiguous terms ('a black car').")
    llm: str = option("llamacpp:qwen2.5-coder-1.5b-instruct", help="LLM for the llm method.")
    samples: int = option(16, help="LLM samples per input and attempt.")
    max_attempts: int = option(5, help="LLM attempts per text when no sample passes the filters.")
    # an LLM rewrite is sampled again only while a candidate came this near to passing the filters (GenerateOptions)
    retry_nearness: float = field(
        default=RETRY_NEARNESS,
        metadata={"applies": uses_sampled_method, "before": 0.0, "help": vocabulary.RETRY_NEARNESS},
    )
    llm_parallel: int | None = knob(None, help=vocabulary.LLM_PARALLEL)
    llm_concurrency: int | None = knob(None, help=vocabulary.LLM_CONCURRENCY)
    engine: str = knob("local", help=vocabulary.ENGINE)
    address: str | None = knob(None, help=vocabulary.ADDRESS)  # a Ray cluster (None: start a local Ray)
    detector: str = option(
        "auto",
        help=(
            "Attribute detector of the llm method's filter: auto (keyword+llm, which also sees allusions "
            "such as 'during Eid'), keyword, keyword+llm, mlp:DIR[#LABEL] or llm."
        ),
    )
    seed: int = option(0, help="Seed.")
    # not part of the run's identity, as before
    bootstrap: int = knob(2000, help="Bootstrap resamples of every interval.")
    top_examples: int = knob(12, help="Pairs with the largest score change that the summary and report list.")
    only_good: str | None = option(
        None, help="A consolidated rating project: audit only the pairs its raters judged good."
    )
    # matched non-identity swaps (counterfair.analysis.placebo): "default" (the built-in words of ``language``, and
    # what the run records), "en", "fr", "de", a file, or None
    placebo: str | None = option(
        "default",
        help=(
            "Placebo words matched to each identity swap: default (the built-in ones of the audit's "
            "--language), en, fr or de, a YAML file, or none."
        ),
    )
    max_text_chars: int = option(MAX_TEXT_CHARS, help=vocabulary.MAX_TEXT_CHARS)
    encoding: str = option("utf-8", help=vocabulary.ENCODING)  # of the input file (a byte-order mark overrides it)
    # gold labels (1/0, true/false, toxic/non-toxic): adds the labelled-data bias metrics
    # (counterfair.commands.bias.core) of the originals' scores, per identity group, beside the counterfactual results
    # (later: old runs keep their identity)
    label_column: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": (
                "Column with gold labels (1/0, toxic/non-toxic): adds the bias AUCs per group (as counterfair bias)."
            ),
        },
    )
    # a consolidated rating project: each rated pair marked good or poor in pairs.csv's ``rating`` column (every pair
    # stays; the report plots the two kinds apart, paper 000 Fig. 3)
    ratings: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": (
                "A consolidated rating project: mark each rated pair good or poor (pairs.csv's rating "
                "column); the report plots the two kinds apart."
            ),
        },
    )
    # en | fr | de: the word lists, the default identity set (identity-fr, identity-de, swapped with agreement), the
    # placebo words and the tokenizer (counterfair.languages); an English audit keeps the identity it had before
    language: str = field(default="en", metadata={"later": True, "help": vocabulary.LANGUAGE})

    def __post_init__(self) -> None:
        from ...languages import get_language

        self.language = get_language(self.language).code
        if self.language != "en":
            self.identities = self.identities or get_language(self.language).identity_set
        if self.placebo in ("default", "builtin"):
            self.placebo = self.language  # an English run records "en", as it always did
        self.methods = normalize_methods(self.methods, "audit")
        self.detector = resolve_detector(self.detector, self.methods)
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"threshold must be in (0, 1), got {self.threshold}")
        check_bootstrap_cap(self.bootstrap)


def estimate_seconds(counts: dict[str, int], identity_texts: int, methods: list[str]) -> float:
    """A rough up-front estimate of the audit's wall time on 2 CPU cores, from each editor's seconds per text
    (:class:`~counterfair.editors.registry.EditorSpec`)."""
    total = SECONDS_FIXED
    for method in methods:
        spec = editor_spec(method)
        total += spec.seconds_per_text * (identity_texts if spec.identity_texts else sum(counts.values()))
    return total


def read_input(source: Any, opts: AuditOptions) -> tuple[pd.DataFrame, str]:
    """The audit's input (:func:`~counterfair.io.read_texts`) as a table of ids and texts, and its origin."""
    labels = {opts.label_column: "--label-column"} if opts.label_column else {}
    read = read_texts(
        source, text_column=opts.text_column, id_column=opts.id_column, columns=labels, encoding=opts.encoding
    )
    frame = text_frame({"id": read.ids, "text": read.filled()})
    if opts.label_column:
        frame["label"] = binary_labels(read.frame, opts.label_column, read.origin)
    return frame, read.origin


def attribute_matcher(name: str, language: str = "en") -> Any:
    """A matcher of every word that makes a text reference the attribute or swap pack ``name`` (a built-in word
    list in ``language``)."""
    if not is_swap_attribute(name):
        return load_attribute(name, language).matcher()
    from ...editors.swap import written_forms
    from ...lexicons.attributes import IdentitySet, load_swap_set
    from ...text import TermMatcher

    found = load_swap_set(name)
    if isinstance(found, IdentitySet):
        return TermMatcher(written_forms(found), case_sensitive=found.case_sensitive)
    from ...editors.gender import gender_matcher

    return gender_matcher(found)


#: the swap packs every English audit tests besides the identity terms (the attributes users are asked about first)
DEFAULT_PACKS = ("gender", "names")


def default_attributes(language: str = "en", *, swaps: bool = True) -> list[str]:
    """What an audit without ``--attributes`` tests: the language's word-list attributes (paper 000's) and, when it
    swaps identities, the gender words and first names (English)."""
    packs = list(DEFAULT_PACKS) if swaps and language == "en" else []
    return known_attributes(language) + packs


def _attribute_counts(texts: list[str], names: list[str], language: str = "en") -> dict[str, int]:
    counts = {}
    for name in names:
        matcher = attribute_matcher(name, language)  # built once per attribute, not per text
        counts[name] = sum(1 for t in texts if matcher.contains(t))
    return counts


def identity_set_of(opts: AuditOptions) -> Any:
    """The audit's identity set, which must be in the audit's language (its placebo words and word lists are)."""
    from ...lexicons.attributes import identity_set_in

    return identity_set_in(opts.identities, opts.language)


class AuditPlan(TypedDict):
    """What an audit will do: texts per attribute, those with an identity term, the methods, the estimated time."""

    texts: int
    attributes: dict[str, int]
    attributes_without_texts: list[str]
    identity_texts: int
    methods: list[str]
    estimated_seconds: float


def plan(source: Any, options: AuditOptions | None = None) -> AuditPlan:
    """What an audit would do (texts per attribute, identity texts) and how long it should take; no models run."""
    opts = options or AuditOptions()
    frame, origin = read_input(source, opts)
    return plan_frame(frame, opts, origin)


def plan_frame(frame: pd.DataFrame, opts: AuditOptions, origin: str) -> AuditPlan:
    """:func:`plan` of texts already read (columns ``id``, ``text``, whatever the input called them)."""
    texts = frame["text"].tolist()
    requested = opts.attributes or default_attributes(opts.language, swaps=bool(_swaps(opts)))
    counts = _attribute_counts(texts, requested, opts.language)
    attr_methods = [m for m in opts.methods if not swaps_identities(m)]
    if not _swaps(opts):
        swaps = [a for a in requested if is_swap_attribute(a)]
        if swaps:
            raise ConfigError(f"--attributes {', '.join(swaps)} are swapped: add {IDENTITY_SWAP} to --methods")
    occurring = {a: n for a, n in counts.items() if n}
    missing = [a for a, n in counts.items() if n == 0]
    from ...editors.swap import written_forms
    from ...text import TermMatcher

    identity_matcher = TermMatcher(written_forms(identity_set_of(opts)))
    identity_texts = sum(1 for t in texts if identity_matcher.contains(t)) if _swaps(opts) else 0
    if opts.attributes and not occurring and not identity_texts:
        others = _attribute_counts(
            texts, [a for a in default_attributes(opts.language) if a not in requested], opts.language
        )
        found = ", ".join(f"{a} ({n} texts)" for a, n in others.items() if n) or "none of the built-in ones"
        raise InputError(f"{origin}: no text references {', '.join(requested)}; attributes that do occur: {found}")
    return {
        "texts": len(texts),
        "attributes": occurring,
        "attributes_without_texts": missing,
        "identity_texts": identity_texts,
        "methods": opts.methods,
        "estimated_seconds": round(
            estimate_seconds(
                {a: n for a, n in occurring.items() if not is_swap_attribute(a)} if attr_methods else {},
                identity_texts + sum(n for a, n in occurring.items() if is_swap_attribute(a)),
                opts.methods,
            ),
            0,
        ),
    }


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
    from ...needs import require_in_memory

    require_in_memory(AuditOptions, options, classifier=classifier)  # a missing extra is named before any work
    clf = as_classifier(classifier)
    opts = make_options(AuditOptions, {"classifier": clf.spec, **options})
    from ...classifiers.remote import on_engine

    on_engine(clf, opts.engine, opts.address)
    hook = resolve_progress(progress)
    started = time.perf_counter()
    frame, origin = read_input(texts, opts)
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
    return AuditResult(_joined([p for p, _ in kept]), summary, _joined([s for _, s in kept]))


def _predict(clf: CachedClassifier, texts: list[str]) -> dict[str, list[float]]:
    unique = list(dict.fromkeys(texts))
    proba = clf.predict_proba(unique)
    return {t: [float(x) for x in row] for t, row in zip(unique, proba, strict=True)}


BIAS_BOOTSTRAP = 1000  # the labelled-data intervals resample far more rows than the swaps: at most this many


class LabelledBias(BiasMetrics):
    """The audit's ``bias`` section: :func:`~counterfair.commands.bias.core.bias_core` on the originals' labels."""

    label_column: str | None
    threshold: float


def labelled_bias(frame: pd.DataFrame, orig_scores: dict[str, float], opts: AuditOptions) -> LabelledBias:
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
    return {"label_column": opts.label_column, "threshold": opts.threshold, **metrics}  # these two keys first


def compared(
    pairs: pd.DataFrame,
    opts: AuditOptions,
    *,
    baseline: str,
    spec: str,
    slots: pd.DataFrame | None = None,
) -> Comparison:
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

    summary: AuditSummaryData
    gate_metrics: GateMetrics
    unscored: str | None


def audit_core(
    frame: pd.DataFrame,
    opts: AuditOptions,
    clf: CachedClassifier,
    *,
    plan_: AuditPlan,
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
        made = _Made(opts, identity_set, load_placebo(opts.placebo, identity_set), timing, sink, scratch)
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
        made.finish()
        placebo = made.placebo
        summary = _summary(opts, plan_, generated, made, orig_scores, clf, index, origin)
        summary["validity"] = _validity(generated, rated, sum(len(rows) for rows in kept.values()), opts)
        if placebo is not None:
            summary["placebo"] = {"set": placebo.to_dict()}  # the words the slots were filled with
            t0 = time.perf_counter()
            found = (
                slot_effects(made.slots, threshold=opts.threshold, seed=opts.seed, n_resamples=opts.bootstrap)
                if made.slots
                else None
            )
            summary["effects"] = found
            timing["effects"] = round(time.perf_counter() - t0, 2)
        summary["coverage"] = _coverage(frame, made.reached, plan_["attributes"], opts)
    if opts.label_column:
        t0 = time.perf_counter()
        summary["bias"] = labelled_bias(frame, orig_scores, opts)
        timing["bias"] = round(time.perf_counter() - t0, 2)
    summary["timing_s"] = {**timing, "total": round(time.perf_counter() - started, 2)}
    summary = nan_to_none(summary)  # the same record, its NaNs None
    typed = AuditSummary.from_dict(summary)
    in_slot = typed.effects.to_dict() if typed.effects is not None else None
    gate = tallied_metrics(typed.ctf, made.flips.flips, in_slot, typed.ctf_by_attribute)
    return Audited(summary, gate, made.flips.unscored())


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
    frame: pd.DataFrame, opts: AuditOptions, plan_: AuditPlan, generate: Callable[..., Any]
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
    for attribute in plan_["attributes"]:
        swapped = is_swap_attribute(attribute)
        if not (attr_methods or swapped):
            continue
        matcher = attribute_matcher(attribute, opts.language)
        subset = frame[[matcher.contains(t) for t in texts]].reset_index(drop=True)
        t0 = time.perf_counter()
        folder = checkpoint_name(attribute)
        if swapped:  # a swap pack: its swap variants, like the identity swaps
            pack = GenerateOptions(methods=_swaps(opts), score_methods=[], **{**common, "identities": attribute})
            generated[attribute] = generate(folder, subset, pack)
        else:
            options = GenerateOptions(attribute=attribute, methods=attr_methods, **common)
            generated[attribute] = generate(folder, subset, options)
        timing[f"generate:{attribute}"] = round(time.perf_counter() - t0, 2)
    if _swaps(opts) and plan_["identity_texts"]:
        t0 = time.perf_counter()
        generated["identity"] = generate(
            "identity", frame, GenerateOptions(methods=_swaps(opts), score_methods=[], **common)
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


class Validity(TypedDict):
    """How many candidate pairs count: identity occurrences the guard kept, rated pairs the raters kept."""

    identity_occurrences: int
    guard_blocked: int
    guard_kept_share: float | None
    rated_pairs: int | None
    raters_kept_share: float | None


def _validity(generated: dict[str, Any], rated: int, kept_rated: int, opts: AuditOptions) -> Validity:
    """How many of the candidate pairs count: identity occurrences the guard kept, rated pairs the raters kept."""
    signatures = generated["identity"].typed_summary.signatures if "identity" in generated else {}
    swaps = [signatures.get(m) or {} for m in _swaps(opts)]
    found = sum(int(swap.get("identity_occurrences", 0)) for swap in swaps)
    blocked = sum(int(swap.get("guard_blocked", 0)) for swap in swaps)
    return {
        "identity_occurrences": found,
        "guard_blocked": blocked,
        "guard_kept_share": (found - blocked) / found if found else None,
        "rated_pairs": rated if opts.only_good else None,
        "raters_kept_share": kept_rated / rated if opts.only_good and rated else None,
    }


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


def _swaps(opts: AuditOptions) -> list[str]:
    """The audit's identity swaps among its methods (the built-in ``swap``, or a plugin's)."""
    return [m for m in opts.methods if swaps_identities(m)]


def _uses_llm(opts: AuditOptions) -> bool:
    """Whether a method calls the audit's ``--llm`` (which the reproduce command then names)."""
    return any(editor_spec(m).needs_llm for m in opts.methods)


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


class _Made:
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
            top = ok[_EXAMPLE_COLUMNS].take(largest)
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
        return self._largest(self.top)[_EXAMPLE_COLUMNS].to_dict("records")

    def _largest(self, tops: list[pd.DataFrame]) -> pd.DataFrame:
        """The largest changes of these blocks' (in order; ties in the order of the pairs): the largest of the blocks
        so far and of a new block are the largest of all of them, so one frame of them is all a run keeps."""
        top = pd.concat(tops, ignore_index=True) if len(tops) > 1 else tops[0]
        return top.sort_values("abs_diff", ascending=False, kind="stable").head(self.opts.top_examples)

    def swap_ctf(self, attribute: str) -> SwapCTF:
        """The CTF gap of one attribute's swap pairs: overall, per group of the source term, per term and direction."""
        opts = self.opts
        report = self.ctf[attribute].report(seed=opts.seed, n_resamples=opts.bootstrap)
        by_group = {
            group: _gap_only(tally.report(seed=opts.seed, n_resamples=opts.bootstrap))
            for (name, group), tally in sorted(self.ctf_groups.items())
            if name == attribute
        }
        return {
            **_gap_only(report),
            "by_group": by_group,
            "by_source_term": report["by_source_term"],
            "by_direction": report["by_direction"],
        }


class GapOnly(TypedDict):
    ctf_gap: float | None
    texts: int
    pairs: int
    ci_low: float | None
    ci_high: float | None


class SwapCTF(GapOnly):
    """An attribute's CTF gap in the audit's summary (``ctf``, ``ctf_by_attribute``)."""

    by_group: dict[str, GapOnly]
    by_source_term: dict[str, GapEntry]
    by_direction: list[Direction]


def _gap_only(entry: GapEntry) -> GapOnly:
    """The gap, its counts and interval (not its mean signed change)."""
    return {
        "ctf_gap": entry["ctf_gap"],
        "texts": entry["texts"],
        "pairs": entry["pairs"],
        "ci_low": entry["ci_low"],
        "ci_high": entry["ci_high"],
    }


def _joined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)] or frames[:1]  # an empty block (no slots without a placebo) adds nothing
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _mean_ci(values: np.ndarray, tally: MethodTally, opts: AuditOptions) -> MeanData:
    """The mean change over pairs with its interval over texts (a text's pairs are not independent draws)."""
    if values.size == 0:
        return {"n": 0, "mean": None, "ci_low": None, "ci_high": None}
    low, high = tally.change_interval(n_resamples=opts.bootstrap, seed=opts.seed)
    return {"n": int(values.size), "mean": float(values.mean()), "ci_low": low, "ci_high": high}


class AuditInput(AuditPlan):
    source: str


class AuditSummaryData(ScoredRun):
    """The audit's summary.json as :func:`audit_core` builds it (:class:`~counterfair.summaries.AuditSummary` reads
    it); the sections after ``reproduce`` are added as the run reaches them."""

    input: AuditInput
    originals: Originals
    pairs_without_score: int
    groups: list[GroupEntry]
    ctf: SwapCTF | None
    ctf_by_attribute: dict[str, SwapCTF]
    top_examples: list[dict[Any, Any]]
    signatures: dict[str, Any]
    reproduce: str
    validity: NotRequired[Validity]
    placebo: NotRequired[dict[str, Any]]  # the placebo words the slots were filled with ({"set": ...})
    effects: NotRequired[Section | None]  # the in-slot measures (analysis.slots.slot_effects)
    coverage: NotRequired[Coverage]
    bias: NotRequired[LabelledBias]
    timing_s: NotRequired[dict[str, float]]
    comparison: NotRequired[Comparison]  # with --baseline


def _summary(
    opts: AuditOptions,
    the_plan: AuditPlan,
    generated: dict[str, Any],
    made: _Made,
    orig_scores: dict[str, float],
    clf: CachedClassifier,
    index: int,
    origin: str,
) -> AuditSummaryData:
    groups = [
        _group_entry(name, str(method), result, made.methods.get((str(method), name), MethodTally()), opts)
        for name, result in generated.items()
        for method in result.counterfactuals["method"].unique()
    ]
    ctf_by_attribute = {name: made.swap_ctf(name) for name in sorted(made.ctf)}
    ctf = ctf_by_attribute.get("identity")
    signatures = {name: r.typed_summary.signatures for name, r in generated.items()}
    return {
        "counterfair_version": __version__,
        "command": "audit",
        "input": {"source": origin, **the_plan},
        "classifier": clf.signature(),
        "positive_label": clf.labels[index],
        "threshold": opts.threshold,
        "originals": _originals(orig_scores, opts.threshold),
        "pairs_without_score": made.unscored,
        "groups": groups,
        "ctf": ctf,
        "ctf_by_attribute": ctf_by_attribute,
        "top_examples": made.top_examples(),
        "signatures": signatures,
        "options": {**asdict(opts), "classifier": clf.spec},
        "reproduce": _reproduce_command(opts, origin, clf),
    }


_EXAMPLE_COLUMNS = [
    "method",
    "attribute",
    "input_id",
    "source_text",
    "cf_text",
    "edits",
    "score_orig",
    "score_cf",
    "diff",
    "source_term",
    "target_term",
]


class GroupEntry(TypedDict):
    """One method on one attribute in the audit's ``groups``."""

    method: str
    attribute: str
    inputs: int
    with_counterfactual: int
    status: dict[str, int]
    pairs: int
    pairs_without_score: int
    filter_pass_rate: float | None
    score_change: MeanData
    mean_abs_change: float | None
    flips: int
    flip_rate: float | None
    mean_score_orig: float | None


def _group_entry(name: str, method: str, result: Any, tally: MethodTally, opts: AuditOptions) -> GroupEntry:
    """One method on one attribute: inputs and statuses, the filter pass rate, the score change with its CI, flips."""
    cfs = result.counterfactuals
    mine = cfs[cfs["method"] == method]
    cands = None
    if is_sampled(method) and not result.candidates.empty:  # an identity swap's candidates are not read again
        cands = result.candidates[result.candidates["method"] == method]
    diff, scored = tally.changes(), tally.scored
    return {
        "method": method,
        "attribute": name,
        "inputs": len(mine),
        "with_counterfactual": int((mine["status"] == "ok").sum()),
        "status": {str(k): int(v) for k, v in mine["status"].value_counts().items()},
        "pairs": scored,
        "pairs_without_score": tally.pairs - scored,
        "filter_pass_rate": (
            float(cands["passed"].mean()) if cands is not None and len(cands) and is_sampled(method) else None
        ),
        "score_change": _mean_ci(diff, tally, opts),
        # in place: the changes are not read again (a copy would be 76 MB at 9.5 million pairs; the same sum)
        "mean_abs_change": float(np.abs(diff, out=diff).mean()) if diff.size else None,
        "flips": tally.flips,
        "flip_rate": tally.flips / scored if scored else None,
        "mean_score_orig": float(pd.Series(tally.originals(), copy=False).mean()) if scored else None,
    }


class Coverage(TypedDict):
    """Which texts the audit reached, why the others were not, and which identity sets it did not measure."""

    texts: int
    reached: int
    unreached: int
    unreached_ids: list[str]
    unreached_mentioning: dict[str, int]
    unreached_by_cause: dict[str, int]
    gender_untested: int
    names_untested: int
    hint: str | None


#: why a text got no counterfactual pair, as the coverage counts it
CAUSES = {
    "gender_words": "name gender words no slot measured (both genders, or --attributes without gender)",
    "first_names": "name a first name the names pack lacks",
    "identity_words": "name identity words no pack has",
    "guard": "name identity terms the guard judged not about people (a black car, an old house)",
}


def _coverage(
    frame: pd.DataFrame, reached: set[str], attributes: dict[str, int] | None, opts: AuditOptions, shown: int = 50
) -> Coverage:
    """How many texts got at least one counterfactual pair; of those that got none, how many for each cause
    (:data:`CAUSES`) and how many mention each group no built-in set covers
    (:data:`~counterfair.lexicons.attributes.UNCOVERED_GROUPS`); how many texts name gender words ("women", "he") or a
    first name of the names pack that the run did not measure (the pack was not among its attributes)."""
    from ...editors.swap import written_forms
    from ...lexicons.attributes import UNCOVERED_GROUPS, first_names, load_swap_set
    from ...text import TermMatcher

    unreached = [(str(i), t) for i, t in zip(frame["id"], frame["text"], strict=True) if str(i) not in reached]
    texts = [t for _, t in unreached if isinstance(t, str)]
    mentions = {group: _count(TermMatcher(words), texts) for group, words in UNCOVERED_GROUPS.items()}
    english = opts.language == "en"
    pack_names = set(load_swap_set("names").terms) if english else set()
    causes = {
        "gender_words": _count(attribute_matcher("gender"), texts) if english else 0,
        "first_names": _count(
            TermMatcher([n for n in first_names() if n not in pack_names], case_sensitive=True), texts
        )
        if english
        else 0,
        "identity_words": sum(1 for t in texts if any(TermMatcher(w).contains(t) for w in UNCOVERED_GROUPS.values())),
        "guard": _count(TermMatcher(written_forms(identity_set_of(opts))), texts) if _swaps(opts) else 0,
    }
    tested = attributes or {}
    every = [t for t in frame["text"] if isinstance(t, str)]
    gender_untested = _count(attribute_matcher("gender"), every) if english and "gender" not in tested else 0
    names_untested = _count(attribute_matcher("names"), every) if english and "names" not in tested else 0
    said = [f"{n} {CAUSES[c]}" for c, n in causes.items() if n]
    named = [g for g, n in mentions.items() if n]
    hint = None
    if said:
        hint = f"of the {len(unreached)} unreached texts, " + "; ".join(said)
        if named:
            hint += f" ({', '.join(named)}): an identity set of your own (--identities FILE) reaches them"
    return {
        "texts": len(frame),
        "reached": len(frame) - len(unreached),
        "unreached": len(unreached),
        "unreached_ids": [i for i, _ in unreached[:shown]],
        "unreached_mentioning": mentions,
        "unreached_by_cause": causes,
        "gender_untested": gender_untested,
        "names_untested": names_untested,
        "hint": hint,
    }


def _count(matcher: Any, texts: list[str]) -> int:
    return sum(1 for text in texts if matcher.contains(text))


class Originals(TypedDict):
    n: int
    without_score: int
    mean_score: float | None
    share_above_threshold: float | None


def _originals(orig_scores: dict[str, float], threshold: float) -> Originals:
    values = np.array(list(orig_scores.values()), dtype=float)
    finite = values[np.isfinite(values)]
    return {
        "n": int(values.size),
        "without_score": int(values.size - finite.size),
        "mean_score": float(finite.mean()) if finite.size else None,
        "share_above_threshold": float((finite >= threshold).mean()) if finite.size else None,
    }


def _reproduce_command(opts: AuditOptions, origin: str, clf: CachedClassifier) -> str:
    if not clf.cli_spec:
        return (
            f"the classifier was a Python object ({clf.spec}); rerun counterfair.audit() with it and these options "
            "(no command line can rebuild it)"
        )
    parts = [
        "counterfair audit",
        "--demo" if origin == str(demo_path()) else origin,
        f"--classifier {clf.spec}",
        f"--methods {','.join(opts.methods)}",
        f"--threshold {opts.threshold}",
        f"--seed {opts.seed}",
    ]
    if opts.attributes:
        parts.append(f"--attributes {','.join(opts.attributes)}")
    if opts.id_column:
        parts.append(f"--id-column {opts.id_column}")
    if opts.text_column != "text":
        parts.append(f"--text-column {opts.text_column}")
    if _uses_llm(opts):
        parts.append(f"--llm {opts.llm}")
    return " ".join(parts + _other_options(opts)) + " --out DIR"


_SHOWN = {"classifier", "methods", "threshold", "seed", "attributes", "id_column", "text_column", "llm"}
_LLM_OPTIONS = ("samples", "detector", "llm_parallel", "llm_concurrency")  # named with the llm only
_NOT_ON_THE_CLI = {"max_attempts", "bootstrap", "top_examples"}


def _other_options(opts: AuditOptions) -> list[str]:
    """The command-line flags of every other option that differs from its default (the language's own identity set
    and placebo words are what ``--language`` gives, so they are not repeated)."""
    import shlex

    from ...languages import get_language

    implied = {
        "identities": get_language(opts.language).identity_set,
        "placebo": opts.language,
        "detector": resolve_detector("auto", opts.methods),
    }
    out = []
    for f in fields(AuditOptions):
        value = getattr(opts, f.name)
        if f.name in _SHOWN | _NOT_ON_THE_CLI or value == _default_of(f) or value == implied.get(f.name, _UNSET):
            continue
        if (f.name in _LLM_OPTIONS and not _uses_llm(opts)) or (
            f.name == "retry_nearness" and not uses_sampled_method(opts)
        ):
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            out.append(flag if value else f"--no-{f.name.replace('_', '-')}")
        else:
            out.append(f"{flag} {shlex.quote('none' if value is None else str(value))}")
    return out


_UNSET = object()


def _default_of(f: Any) -> Any:
    return f.default_factory() if f.default_factory is not MISSING else f.default
