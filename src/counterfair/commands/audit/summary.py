"""The audit's ``summary.json`` as the core builds it from what it tallied: the per-method entries
(:class:`GroupEntry`), the CTF gap of the identity swaps (:class:`SwapCTF`), coverage (which inputs a method reached,
and why not), the originals' scores, the command that reproduces the run, and the declared shape of each section."""

from __future__ import annotations

from dataclasses import MISSING, asdict, fields
from typing import Any, NotRequired, Protocol, TypedDict

import numpy as np
import pandas as pd

from ... import __version__
from ...analysis.slots import (
    Section,
)
from ...classifiers import CachedClassifier
from ...editors.registry import (
    resolve_detector,
)
from ...jsontypes import JSONObject
from ...language_registry import get_language
from ...summaries import GapReport, GateOutcome, MeanData
from ..generate.options import is_sampled, uses_sampled_method
from .options import AuditOptions, AuditPlan, attribute_matcher, identity_set_of, swap_methods_of, uses_llm
from .tallies import MethodTally


class Tallied(Protocol):
    """What the summary reads of the audit's tallies (:class:`~counterfair.commands.audit.core.AuditTallies`)."""

    methods: dict[tuple[str, str], MethodTally]
    ctf: dict[str, Any]
    unscored: int

    def swap_ctf(self, attribute: str) -> GapReport: ...

    def top_examples(self) -> list[dict[Any, Any]]: ...


class Validity(TypedDict):
    """How many candidate pairs count: identity occurrences the guard kept, rated pairs the raters kept."""

    identity_occurrences: int
    guard_blocked: int
    guard_kept_share: float | None
    rated_pairs: int | None
    raters_kept_share: float | None


def joined_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)] or frames[:1]  # an empty block (no slots without a placebo) adds nothing
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _mean_ci(values: np.ndarray, tally: MethodTally, opts: AuditOptions) -> MeanData:
    """The mean change over pairs with its interval over texts (a text's pairs are not independent draws)."""
    if values.size == 0:
        return {"n": 0, "mean": None, "ci_low": None, "ci_high": None}
    low, high = tally.change_interval(n_resamples=opts.bootstrap, seed=opts.seed)
    return {"n": int(values.size), "mean": float(values.mean()), "ci_low": low, "ci_high": high}


class ScoredRun(TypedDict):
    """What the audit's summary starts with, as the core builds it: the version and command, the classifier's
    signature and the label scored, the decision threshold, the options, and the gate once it ran."""

    counterfair_version: str
    command: str
    classifier: JSONObject
    positive_label: str
    threshold: float
    options: dict[str, Any]
    gate: NotRequired[GateOutcome]


class AuditInput(AuditPlan):
    source: str


class AuditSummaryData(ScoredRun):
    """The audit's summary.json as :func:`audit_core` builds it (:class:`~counterfair.summaries.AuditSummary` reads
    it); the sections after ``reproduce`` are added as the run reaches them."""

    input: AuditInput
    originals: Originals
    pairs_without_score: int
    groups: list[GroupEntry]
    ctf: JSONObject | None  # a GapReport: the identity swaps' gap, by group, source term and direction
    ctf_by_attribute: dict[str, JSONObject]
    top_examples: list[dict[Any, Any]]
    signatures: dict[str, Any]
    reproduce: str
    validity: NotRequired[Validity]
    placebo: NotRequired[dict[str, Any]]  # the placebo words the slots were filled with ({"set": ...})
    effects: NotRequired[Section | None]  # the in-slot measures (analysis.slots.slot_effects)
    coverage: NotRequired[Coverage]
    bias: NotRequired[JSONObject]  # a BiasSummary with the label column
    timing_s: NotRequired[dict[str, float]]
    comparison: NotRequired[JSONObject]  # a ComparisonSummary: with --baseline


def audit_summary(
    opts: AuditOptions,
    the_plan: AuditPlan,
    generated: dict[str, Any],
    made: Tallied,
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
    ctf_by_attribute = {name: made.swap_ctf(name).to_dict() for name in sorted(made.ctf)}
    ctf = ctf_by_attribute.get("identity")
    signatures = {name: r.typed_summary.signatures for name, r in generated.items()}
    return {
        "counterfair_version": __version__,
        "command": "audit",
        "input": {"source": origin, **the_plan},
        "classifier": clf.summary_info(),
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


EXAMPLE_COLUMNS = [
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


def coverage_of(
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
    entry = get_language(opts.language)
    names = "names" in entry.packs  # the language's audit measures first names (English)
    pack_names = set(load_swap_set("names").terms) if names else set()
    causes = {
        "gender_words": _count(attribute_matcher(entry.gender_pack), texts) if entry.gender_pack else 0,
        "first_names": _count(
            TermMatcher([n for n in first_names() if n not in pack_names], case_sensitive=True), texts
        )
        if names
        else 0,
        "identity_words": sum(1 for t in texts if any(TermMatcher(w).contains(t) for w in UNCOVERED_GROUPS.values())),
        "guard": _count(TermMatcher(written_forms(identity_set_of(opts))), texts) if swap_methods_of(opts) else 0,
    }
    tested = attributes or {}
    every = [t for t in frame["text"] if isinstance(t, str)]
    gender = entry.gender_pack
    gender_untested = _count(attribute_matcher(gender), every) if gender and gender not in tested else 0
    names_untested = _count(attribute_matcher("names"), every) if names and "names" not in tested else 0
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


def _demo_of(language: str) -> str | None:
    entry = get_language(language)
    return str(entry.path(entry.demo)) if entry.demo else None


def _reproduce_command(opts: AuditOptions, origin: str, clf: CachedClassifier) -> str:
    if not clf.cli_spec:
        return (
            f"the classifier was a Python object ({clf.spec}); rerun counterfair.audit() with it and these options "
            "(no command line can rebuild it)"
        )
    parts = [
        "counterfair audit",
        "--demo" if origin == _demo_of(opts.language) else origin,
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
    if uses_llm(opts):
        parts.append(f"--llm {opts.llm}")
    return " ".join(parts + _other_options(opts)) + " --out DIR"


_SHOWN = {"classifier", "methods", "threshold", "seed", "attributes", "id_column", "text_column", "llm"}
_LLM_OPTIONS = ("samples", "detector", "llm_parallel", "llm_concurrency")  # named with the llm only
_NOT_ON_THE_CLI = {"max_attempts", "bootstrap", "top_examples"}


def _other_options(opts: AuditOptions) -> list[str]:
    """The command-line flags of every other option that differs from its default (the language's own identity set
    and placebo words are what ``--language`` gives, so they are not repeated)."""
    import shlex

    from ...language_registry import get_language

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
        if (f.name in _LLM_OPTIONS and not uses_llm(opts)) or (
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
