"""Typed summaries: frozen dataclasses of what every output reports, read and written as today's ``summary.json``.

Each record maps its attributes onto the JSON keys it is stored under (``Estimate.value`` is ``mean`` in a score
change, ``ctf_gap`` in a gap report, ``identity_effect`` in an identity effect), so the views (console, HTML and
Markdown report, notebook, MLflow, JUnit) read attributes, and a renamed key fails in one place, here, instead of
silently in a view. ``from_dict`` keeps what a record does not model (``extra``) and the order of the keys it read,
so ``Record.from_dict(d).to_dict() == d`` key for key and in order: a summary read, typed and written again is the
same file. A summary from an older counterfair (keys missing) reads with those attributes ``None``; one of another
``schema_version`` is refused by the JSON reader :func:`read_summary` uses, with a clear error.

The results keep the summary's dict as ``result.summary`` for users who read it; ``result.typed_summary`` is the
record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from .errors import InputError
from .summary_record import Record as Record
from .summary_record import record_field as record_field

R = TypeVar("R", bound="Record")
_key = record_field  # the short name inside this module


# ------------------------------------------------------------------------------------------------ estimates


@dataclass(frozen=True, kw_only=True)
class Estimate(Record):
    """A value with its 95 % interval and the count it rests on (the gate's metrics: ``{value, ci_low, ci_high,
    n}``)."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None

    def interval(self) -> tuple[float | None, float | None]:
        return (self.ci_low, self.ci_high)


@dataclass(frozen=True, kw_only=True)
class MeanEstimate(Estimate):
    """An aggregate stored as ``{n, mean, ci_low, ci_high, median, ...}`` (a score change, an evaluation metric)."""

    value: float | None = _key("mean")
    median: float | None = None


# ------------------------------------------------------------------------------------------------ audit, ctf


@dataclass(frozen=True, kw_only=True)
class GroupChange(Record):
    """One (method, attribute) of an audit: its inputs by status, its pairs, the filters' pass rate (a sampled
    method), the mean score change with its CI over texts, the mean |change|, the flips, the originals' mean score."""

    method: str = ""
    attribute: str = ""
    inputs: int = 0
    with_counterfactual: int = 0
    status: Mapping[str, int] = field(default_factory=dict)
    pairs: int = 0
    pairs_without_score: int = 0
    filter_pass_rate: float | None = None
    score_change: MeanEstimate = _key(of=MeanEstimate, default=MeanEstimate())
    mean_abs_change: float | None = None
    flips: int = 0
    flip_rate: float | None = None
    mean_score_orig: float | None = None


@dataclass(frozen=True, kw_only=True)
class DirectionGap(Record):
    """One swap direction (source → target term): its pairs and mean changes."""

    source: str = ""
    target: str = ""
    pairs: int = 0
    mean_abs_diff: float | None = None
    mean_diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


@dataclass(frozen=True, kw_only=True)
class GapReport(Record):
    """A CTF gap (paper 001): the mean over texts of each text's mean absolute score change, its 95 % interval over
    texts, the texts and pairs it rests on, the mean signed change (absent where there is no pair, and in the audit's
    gaps but per term), and the breakdowns where computed (by group in an audit; by label, split, source term and
    direction in ``counterfair ctf``)."""

    value: float | None = _key("ctf_gap")
    texts: int = 0
    pairs: int = 0
    ci_low: float | None = None
    ci_high: float | None = None
    mean_signed_change: float | None = _key(absent=True)
    by_group: dict[str, GapReport] | None = _key(of={"GapReport"}, absent=True)
    by_label: dict[str, GapReport] | None = _key(of={"GapReport"}, absent=True)  # nontoxic, toxic
    by_split: dict[str, GapReport] | None = _key(of={"GapReport"}, absent=True)  # train, heldout (each by label)
    by_source_term: dict[str, GapReport] | None = _key(of={"GapReport"}, absent=True)
    by_direction: tuple[DirectionGap, ...] | None = _key(of=[DirectionGap], absent=True)

    def estimate(self) -> Estimate:
        return Estimate(value=self.value, ci_low=self.ci_low, ci_high=self.ci_high, n=self.texts)

    def gap_only(self) -> GapReport:
        """The gap, its counts and interval: no mean signed change, no breakdown."""
        return GapReport(value=self.value, texts=self.texts, pairs=self.pairs, ci_low=self.ci_low, ci_high=self.ci_high)


@dataclass(frozen=True, kw_only=True)
class PlaceboWords(Record):
    """The audit's ``placebo`` section: the placebo words its identity slots were filled with (``set``: name, words,
    source; a language other than English). A run before 2026-11-28 also holds here an older statistic the in-slot
    measures replaced (identity swap |change| minus a placebo swap's): kept in ``extra``, read by nothing."""

    set: Mapping[str, Any] = field(default_factory=dict)


#: the fewest texts an interval is given from: with fewer, every text lies on one side of the true mean more than 5 %
#: of the time (2 / 2^n for a symmetric spread: 25 % over 3 texts, 6 % over 5), and a resample's mean never leaves
#: the texts' range, so no interval from their resamples holds 95 %
MIN_INTERVAL_TEXTS = 6


@dataclass(frozen=True, kw_only=True)
class Slot(Record):
    """One text's value of an in-slot estimate (the mean over its slots), by the input's id."""

    input_id: str = ""
    value: float | None = None


@dataclass(frozen=True, kw_only=True)
class Spread(Record):
    """Whether an estimate's effect differs from text to text by more than a neutral word's does
    (:mod:`counterfair.analysis.spread`): the ``excess`` spread (a standard deviation over texts beyond the placebo
    words', in probability), the F-test's one-sided p-value Bonferroni-adjusted over every estimate tested, ``varies``
    where that is below alpha, and the texts with the ``largest`` values."""

    excess: float | None = None
    p_adjusted: float | None = None
    varies: bool = False
    largest: tuple[Slot, ...] = _key(of=[Slot], factory=tuple)


@dataclass(frozen=True, kw_only=True)
class SlotEstimate(Estimate):
    """One in-slot estimate (:mod:`counterfair.analysis.slots`): the mean over texts with its 95 % paired bootstrap
    interval (the expanded percentile interval; none from fewer than :data:`MIN_INTERVAL_TEXTS` texts), its
    simultaneous interval over the whole test family (``sim_low``, ``sim_high``: the one its ``finding`` is read off),
    the t-test's p-value, Bonferroni's adjusted ones (against 0; beyond the materiality threshold), the smallest
    effect the data detect four times in five (``mde``) and the texts that would bring it to the threshold
    (``texts_needed``), and the ``finding`` (material, detected, small, not detected, inconclusive:
    :mod:`counterfair.analysis.inference`); a term's also its ``group``, ``score`` (mean P with the term) and
    ``placebo_score`` (with a neutral word)."""

    sd: float | None = None
    p_value: float | None = None
    sim_low: float | None = None
    sim_high: float | None = None
    mde: float | None = None
    texts_needed: int | None = None
    p_adjusted: float | None = None  # Bonferroni, two-sided, against 0
    p_material: float | None = None  # Bonferroni, beyond the materiality threshold
    finding: str | None = None
    # a term's: its mean score in its slots, the placebo words' in the same slots, its group (only a term's are written)
    score: float | None = _key(absent="group")
    placebo_score: float | None = _key(absent="group")
    group: str | None = _key(absent=True)
    spread: Spread | None = _key(of=Spread, absent=True)  # a group's or a term's (analysis.spread)

    @property
    def material(self) -> bool:
        return self.finding == "material"

    @property
    def detected(self) -> bool:
        """Shown to differ from 0 (material, detected or small)."""
        return self.finding in ("material", "detected", "small")

    @property
    def inconclusive(self) -> bool:
        """Neither an effect nor its absence shown: too few texts, or an interval reaching past the threshold."""
        return self.finding == "inconclusive"

    def simultaneous(self) -> tuple[float | None, float | None]:
        return (self.sim_low, self.sim_high)


@dataclass(frozen=True, kw_only=True)
class SlotMeasure(Record):
    """One in-slot measure: ``overall``, ``by_group`` and (the identity effect) ``by_term``, ``by_form`` (a term's or
    a group's effect over the slots written in one form: ``jewish@plural``) and ``by_cell`` (a group's over the slots
    whose text names gender words: ``race_ethnicity&female``)."""

    overall: SlotEstimate | None = _key(of=SlotEstimate)
    by_group: dict[str, SlotEstimate] | None = _key(of={SlotEstimate})
    by_term: dict[str, SlotEstimate] | None = _key(of={SlotEstimate})
    by_form: dict[str, SlotEstimate] | None = _key(of={SlotEstimate})
    by_cell: dict[str, SlotEstimate] | None = _key(of={SlotEstimate})


@dataclass(frozen=True, kw_only=True)
class SlotFamily(Record):
    """One family of slots the effects were measured over (the identity terms, gender words, first names, a pack):
    its texts and slots, its placebo words' number, its groups and how its null is formed (``neutral``)."""

    texts: int = 0
    slots: int = 0
    placebo_words: int = 0
    groups: tuple[str, ...] = ()
    neutral: str | None = None


@dataclass(frozen=True, kw_only=True)
class ControlFamily(Estimate):
    """The control check of one family of slots (:mod:`counterfair.analysis.control`): each neutral word's estimate
    against the family's other neutral words (``words``), the words that stood out (left out of the baseline), the
    second null (nonce words, where the family has one) and the two nulls' agreement, whether the check failed and
    whether the control is unreliable for this model (the nulls disagree: no identity finding of the family is called
    material), in words (``message``). As an estimate (the gate's ``control(neutral_words[FAMILY])``): the value,
    interval and texts of the estimate that decided it (the nulls' disagreement, else the word that stood out most,
    else the largest departure)."""

    family: str = ""
    words: dict[str, SlotEstimate] | None = _key(of={SlotEstimate})
    standing_out: tuple[str, ...] = ()
    second_null: str | None = None
    agreement: SlotEstimate | None = _key(of=SlotEstimate)
    failed: bool = False
    unreliable: bool = False
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class SlotEffects(Record):
    """The audit's ``effects`` section: the identity effect, disparity and flip excess measured in the slot against
    placebo words (:mod:`counterfair.analysis.slots`), every family's groups among the identity effect's, with the test
    family (its size, ``tests``; its correction; the power the minimum detectable effects are stated at) and the
    materiality thresholds."""

    alpha: float = 0.05
    correction: str | None = None
    tests: int = 0
    power: float | None = None
    material: Mapping[str, float] = field(default_factory=dict)
    threshold: float | None = None
    texts: int = 0
    slots: int = 0
    placebo_words: int = 0
    families: dict[str, SlotFamily] | None = _key(of={SlotFamily})
    identity_effect: SlotMeasure | None = _key(of=SlotMeasure)
    disparity: SlotMeasure | None = _key(of=SlotMeasure)
    flip_excess: SlotMeasure | None = _key(of=SlotMeasure)
    #: the control check of each family that has one (:mod:`counterfair.analysis.control`)
    control: dict[str, ControlFamily] | None = _key(of={ControlFamily}, absent=True)


@dataclass(frozen=True, kw_only=True)
class Coverage(Record):
    """Which texts the audit reached, the first unreached ids, how many of the others mention each group no built-in
    set covers and why each was not reached, and the texts naming gender words or first names the run did not swap."""

    texts: int = 0
    reached: int = 0
    unreached: int = 0
    unreached_ids: tuple[str, ...] = ()
    unreached_mentioning: Mapping[str, int] = field(default_factory=dict)
    unreached_by_cause: Mapping[str, int] = field(default_factory=dict)
    gender_untested: int = 0  # texts naming gender words ("women", "he") that the run did not swap
    names_untested: int = 0  # texts naming a first name of the names pack that the run did not swap
    names_unplaced: int = 0  # texts (of all, reached or not) naming a first name the names pack lacks: not measured
    names_unplaced_seen: tuple[str, ...] = ()  # those names, the most frequent first
    hint: str | None = None


@dataclass(frozen=True, kw_only=True)
class ClassifierInfo(Record):
    """The classifier's spec, labels and signature fields (type, version, ...: in ``extra``)."""

    spec: str = ""
    labels: tuple[str, ...] = ()
    runs_on: str | None = None  # where it ran: a torch model's device and precision (local engine)

    def said(self) -> str:
        """The spec with where it ran, for a page's facts: ``hf:model on cuda:0 (NVIDIA H200) in bfloat16``."""
        return f"{self.spec} on {self.runs_on}" if self.runs_on else self.spec


@dataclass(frozen=True, kw_only=True)
class GateCheck(Record):
    """One rule (for one group) of the fairness gate and its verdict. Every check writes its keys in this order; the
    material ones (``material(...)``, ``conclusive(...)``) also the finding and what it was read off."""

    rule: str = ""
    metric: str = ""
    group: str | None = None
    estimate: str = "point"
    description: str = ""
    value: float | None = None
    point: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    # material(...) and conclusive(...) checks: the simultaneous interval, the power, the adjusted p-values, the finding
    sim_low: float | None = _key(absent="finding")
    sim_high: float | None = _key(absent="finding")
    mde: float | None = _key(absent="finding")
    texts_needed: int | None = _key(absent="finding")
    p_adjusted: float | None = _key(absent="finding")
    p_material: float | None = _key(absent="finding")
    finding: str | None = _key(absent=True)
    verdict: str = "error"
    message: str = ""


#: the gate's verdicts, their exit codes and what each means (:mod:`counterfair.analysis.gate`; exit 3 is an internal
#: error): one meaning per code
EXIT_CODES = {"pass": 0, "fail": 1, "error": 2, "inconclusive": 4}
GATE_MEANINGS = {
    "pass": "every check passed",
    "fail": "a material finding or a failed control",
    "error": "a rule could not be evaluated",
    "inconclusive": "nothing material, but some group could not be settled either way (or nothing was measured)",
}
EXIT_WORDS = ", ".join(f"{EXIT_CODES[v]} {GATE_MEANINGS[v]}" for v in ("pass", "fail", "error", "inconclusive"))


@dataclass(frozen=True, kw_only=True)
class GateVerdict(Record):
    """The fairness gate: every check, the verdict (``pass``/``fail``/``error``/``inconclusive``) and its exit code
    (:data:`EXIT_CODES`)."""

    rules: tuple[Mapping[str, Any], ...] = ()
    checks: tuple[GateCheck, ...] = _key(of=[GateCheck], default=())
    verdict: str = "error"
    exit_code: int = 2
    failed: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


class GateMetric(TypedDict):
    """One metric as the gate reads it: overall (None where the metric has no overall value) and per group, each an
    estimate (an in-slot measure's a :class:`SlotEstimate`, with the simultaneous interval, power and finding its
    ``material(...)`` and ``conclusive(...)`` rules read)."""

    overall: Estimate | None
    by_group: dict[str, Estimate | None]


#: every metric a run gives the gate, by name (None: the run cannot give it, e.g. no placebo)
GateMetrics = dict[str, GateMetric | None]


#: the built-in demo's file (counterfair/resources): an audit whose ``input.source`` ends with it is the demo
DEMO_FILE = "demo_audit.csv"


@dataclass(frozen=True, kw_only=True)
class AuditInput(Record):
    """What the audit read (or will read: its plan, before a source is named): the source, the texts, per attribute
    how many reference it, those referenced by none, the texts with an identity term, the methods, the estimate."""

    source: str | None = _key(absent=True)
    texts: int = 0
    attributes: Mapping[str, int] = field(default_factory=dict)
    attributes_without_texts: tuple[str, ...] = ()
    identity_texts: int = 0
    methods: tuple[str, ...] = ()
    estimated_seconds: float | None = None


@dataclass(frozen=True, kw_only=True)
class Originals(Record):
    """The original texts' scores: how many, how many without a score, their mean, the share above the threshold."""

    n: int = 0
    without_score: int = 0
    mean_score: float | None = None
    share_above_threshold: float | None = None
    labels_only: bool = False  # every score exactly 0 or 1: the classifier gave labels, not probabilities


@dataclass(frozen=True, kw_only=True)
class Validity(Record):
    """How many candidate pairs count: identity occurrences the guard kept, rated pairs the raters kept."""

    identity_occurrences: int = 0
    guard_blocked: int = 0
    guard_kept_share: float | None = None
    rated_pairs: int | None = None
    raters_kept_share: float | None = None


@dataclass(frozen=True, kw_only=True)
class AuditSummary(Record):
    """An audit's ``summary.json``, as the audit core builds it and the views read it: the run's facts, the
    originals' scores, each method's change, the swaps' CTF gaps, the largest changes, the signatures and options,
    the command that reproduces it; then the sections a run adds as it reaches them (left out until then)."""

    counterfair_version: str | None = None
    command: str | None = None
    input: AuditInput = _key(of=AuditInput, default=AuditInput())
    classifier: ClassifierInfo = _key(of=ClassifierInfo, default=ClassifierInfo())
    positive_label: str | None = None
    threshold: float | None = None
    originals: Originals | None = _key(of=Originals)
    pairs_without_score: int = 0
    groups: tuple[GroupChange, ...] = _key(of=[GroupChange], default=())
    ctf: GapReport | None = _key(of=GapReport)  # the identity swaps' (None: no identity swap)
    ctf_by_attribute: dict[str, GapReport] | None = _key(of={GapReport})
    top_examples: tuple[Mapping[str, Any], ...] = ()
    signatures: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    reproduce: str | None = None
    validity: Validity | None = _key(of=Validity, absent=True)
    placebo: PlaceboWords | None = _key(of=PlaceboWords, absent=True)
    # the in-slot measures: with a placebo always written (null: no slot had both scores), without one left out
    effects: SlotEffects | None = _key(of=SlotEffects, absent="placebo")
    coverage: Coverage | None = _key(of=Coverage, absent=True)
    bias: BiasSummary | None = _key(of="BiasSummary", absent=True)  # with a label column: the labelled-data metrics
    timing_s: Mapping[str, float] = _key(absent=True, factory=dict)
    comparison: ComparisonSummary | None = _key(of="ComparisonSummary", absent=True)  # with --baseline
    gate: GateVerdict | None = _key(of=GateVerdict, absent=True)

    @property
    def language_name(self) -> str | None:
        """The audit's language in words where it is not English (``--language``; older runs are English)."""
        from .language_registry import get_language

        entry = get_language(str(self.options.get("language") or "") or None)
        return None if entry.default else entry.name

    def swap_gaps(self) -> dict[str, GapReport]:
        """The CTF gap of each swap unit but the identity swaps (gender, names, nationality packs)."""
        return {k: v for k, v in (self.ctf_by_attribute or {}).items() if k != "identity"}


@dataclass(frozen=True, kw_only=True)
class CTFSummary(GapReport):
    """``counterfair ctf``'s ``summary.json``: the run's facts first, the gap and its breakdowns, what was not scored
    (pairs, incomplete texts), the identity set, the guard's counts, the swap in words, the classifier."""

    LEAD = ("counterfair_version", "command", "input")
    counterfair_version: str | None = None
    command: str | None = None
    input: Mapping[str, Any] = field(default_factory=dict)  # the source, its texts, those skipped and why
    pairs_without_score: int = 0
    incomplete_texts: Mapping[str, Any] = field(default_factory=dict)  # texts whose gap rests on some of their swaps
    complete: bool | None = None
    identities: Mapping[str, Any] = field(default_factory=dict)
    guard: Mapping[str, Any] = field(default_factory=dict)  # its mode, occurrences seen and blocked
    swap: Mapping[str, Any] = field(default_factory=dict)  # which swap ran (grammar, guard), in words too
    classifier: ClassifierInfo = _key(of=ClassifierInfo, default=ClassifierInfo())
    positive_label: str | None = None


# ------------------------------------------------------------------------------------------------ evaluate, feedback


@dataclass(frozen=True, kw_only=True)
class MetricAggregate(Record):
    """One metric of an evaluation over all scored rows, over the flipped and the not flipped ones (where there is a
    flip), and per group (with a group column); each as :func:`~counterfair.metrics.functional.summarize` gives it
    (``n``, ``mean``, ``std``, ``median``, ``min``, ``max``, ``ci_low``, ``ci_high``)."""

    all: MeanEstimate = _key(of=MeanEstimate, default=MeanEstimate())
    flipped: MeanEstimate | None = _key(of=MeanEstimate, absent=True)
    not_flipped: MeanEstimate | None = _key(of=MeanEstimate, absent=True)
    groups: Mapping[str, Mapping[str, Any]] = _key(absent=True, factory=dict)


@dataclass(frozen=True, kw_only=True)
class StageError(Record):
    """A stage that failed: its name, the message (the error's type, a method's name: in ``extra``)."""

    stage: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class EvaluationCounts(Record):
    rows: int = 0
    scored: int = 0
    status: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class EvaluationSummary(Record):
    """``counterfair evaluate``'s ``summary.json``, as the evaluate core builds it and the views read it: the input,
    the counts by status, the headline (CEval's flip rate over instances and ours over scored rows), each metric's
    aggregate, the rows skipped (the first 1,000), failed stages, notices, signatures, the metric cards, options."""

    counterfair_version: str | None = None
    command: str | None = None
    input: Mapping[str, Any] = field(default_factory=dict)  # source, rows, digest, the columns read
    counts: EvaluationCounts = _key(of=EvaluationCounts, default=EvaluationCounts())
    headline: dict[str, MeanEstimate] | None = _key(of={MeanEstimate})
    metrics: dict[str, MetricAggregate] | None = _key(of={MetricAggregate})
    skipped_rows: tuple[Mapping[str, Any], ...] = ()
    skipped_rows_total: int | None = None
    errors: tuple[StageError, ...] = _key(of=[StageError], default=())
    notices: tuple[str, ...] = ()
    signatures: Mapping[str, Any] = field(default_factory=dict)
    cards: Mapping[str, Any] = field(default_factory=dict)  # each metric's card: what it computes, its model
    options: Mapping[str, Any] = field(default_factory=dict)
    timing_s: Mapping[str, float] = field(default_factory=dict)
    methods: Mapping[str, Any] | None = _key(absent=True)  # a comparison of methods: name -> source

    def classifier_spec(self) -> str | None:
        classifier = self.signatures.get("classifier")
        return classifier.get("spec") if isinstance(classifier, Mapping) else None


@dataclass(frozen=True, kw_only=True)
class MethodComparisonSummary(Record):
    """``counterfair evaluate A B ...``'s ``summary.json``: the methods compared, CEval's Table 2 and Fig. 2."""

    command: str | None = None
    methods: Mapping[str, str] = field(default_factory=dict)
    originals: int = 0
    table: tuple[Mapping[str, Any], ...] = ()
    errors: tuple[StageError, ...] = _key(of=[StageError], default=())
    options: Mapping[str, Any] = field(default_factory=dict)
    signatures: Mapping[str, Any] = field(default_factory=dict)


#: CEval's Table 2, as ``evaluate`` with several pair files writes it: (column of comparison.csv, metric column of
#: rows.csv, the rows it averages over)
TABLE2_COLUMNS = (
    ("prob_change", "prob_change", "all"),
    ("distance", "distance_norm", "all"),  # CEval's distance: edits per token of the original
    ("distance_flipped", "distance_norm", "flipped"),
    ("distance_tokens", "distance", "all"),
    ("diversity", "diversity_norm", "all"),
    ("perplexity", "perplexity", "all"),
    ("bleu", "bleu", "all"),
    ("bertscore_f1", "bertscore_f1", "all"),
    ("quality_grammar", "quality_grammar", "all"),
    ("quality_cohesiveness", "quality_cohesiveness", "all"),
    ("quality_likability", "quality_likability", "all"),
    ("quality_fluency", "quality_fluency", "all"),
)


@dataclass(frozen=True, kw_only=True)
class FeedbackStep(Record):
    """One feedback step (paper 002's @k): means over the texts edited at that step (the feedback core builds it;
    fields in ``summary.json``'s order)."""

    texts: int = 0
    minimality: float | None = None
    minimality_norm: float | None = None
    flip_rate: float | None = None
    flip_rate_all_texts: float | None = None
    probability: float | None = None
    ppl_base: float | None = None
    ppl_fine: float | None = None
    seconds_per_text: float | None = None
    mean_words: float | None = None


@dataclass(frozen=True, kw_only=True)
class EditorInfo(Record):
    name: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class FeedbackSummary(Record):
    """``counterfair feedback``'s ``summary.json``, as the feedback core builds it (fields in the file's order) and as
    the views read it: the one declaration of its shape."""

    counterfair_version: str | None = None
    command: str | None = None
    input: Mapping[str, Any] = field(default_factory=dict)  # the source and its number of texts
    editor: EditorInfo = _key(of=EditorInfo, default=EditorInfo())
    classifier: ClassifierInfo = _key(of=ClassifierInfo, default=ClassifierInfo())
    applications: int | None = None  # the editor's applications per text (steps + 1)
    inconsistency: Mapping[str, float | None] = field(default_factory=dict)  # inc@k over the texts
    inconsistency_by_text: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # k -> text id -> inc@k
    steps: dict[str, FeedbackStep] | None = _key(of={FeedbackStep})
    mean_words_by_step: Mapping[str, float | None] = field(default_factory=dict)  # "0": the inputs
    status: Mapping[str, int] = field(default_factory=dict)  # the steps' rows by status
    options: Mapping[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    resumed_texts: int | None = None  # texts a resumed run found finished


@dataclass(frozen=True, kw_only=True)
class MethodCounts(Record):
    """One method of a generate run: its inputs by status, the candidates and those passing the filters, the quality
    of the chosen counterfactuals (shares with one and still referencing, BLEU, BERTScore) and this run's speed. The
    generate core builds it (fields in ``summary.json``'s order)."""

    inputs: int = 0
    status: Mapping[str, int] = field(default_factory=dict)
    share_with_counterfactual: float | None = None
    candidates: int | None = None
    candidates_passing_filters: int | None = None
    share_still_referencing: float | None = None
    bleu: MeanEstimate = _key(of=MeanEstimate, default=MeanEstimate())
    bertscore_f1: MeanEstimate = _key(of=MeanEstimate, default=MeanEstimate())
    seconds_this_run: float | None = None
    candidates_per_s_this_run: float | None = None


@dataclass(frozen=True, kw_only=True)
class GenerateSummary(Record):
    """``counterfair generate``'s ``summary.json``, as the generate core builds it and the views read it."""

    counterfair_version: str | None = None
    command: str | None = None
    input: str | None = None  # where the texts came from
    methods: dict[str, MethodCounts] | None = _key(of={MethodCounts})
    signatures: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    timing_s: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class GroupBias(Record):
    """One identity group on labelled data: its counts and its subgroup, BPSN, BNSP and pinned AUC with intervals."""

    n: int = 0
    n_positive: int = 0
    n_negative: int = 0
    subgroup_auc: Estimate = _key(of=Estimate, default=Estimate())
    bpsn_auc: Estimate = _key(of=Estimate, default=Estimate())
    bnsp_auc: Estimate = _key(of=Estimate, default=Estimate())
    pinned_auc: Estimate = _key(of=Estimate, default=Estimate())
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class BiasSummary(Record):
    """``counterfair bias``'s ``summary.json`` (Borkan et al. 2019; Dixon et al. 2018), and the ``bias`` section of an
    audit with a label column (with its label column and threshold) and of a suite (the metrics alone): the one
    declaration of their shape. :func:`~counterfair.commands.bias.core.bias_core` makes the metrics; the command adds
    the run's facts, the audit its label column; a part a summary lacks is left out."""

    counterfair_version: str | None = _key(absent=True)
    command: str | None = _key(absent=True)
    input: Mapping[str, Any] = _key(absent=True, factory=dict)  # the source and its number of texts
    classifier: ClassifierInfo = _key(of=ClassifierInfo, default=ClassifierInfo(), absent=True)
    positive_label: str | None = _key(absent=True)
    label_column: str | None = _key(absent=True)  # an audit's: the column of gold labels
    threshold: float | None = _key(absent=True)
    membership: str | None = _key(absent=True)
    overall_auc: Estimate = _key(of=Estimate, default=Estimate())
    final_metric: Estimate = _key(of=Estimate, default=Estimate())
    generalized_mean: dict[str, Estimate] | None = _key(of={Estimate})  # subgroup_auc, bpsn_auc, bnsp_auc
    generalized_mean_power: float | None = None
    fped: Estimate = _key(of=Estimate, default=Estimate())
    fned: Estimate = _key(of=Estimate, default=Estimate())
    groups: dict[str, GroupBias] | None = _key(of={GroupBias})
    groups_without_values: tuple[str, ...] = ()
    options: Mapping[str, Any] = _key(absent=True, factory=dict)
    gate: GateVerdict | None = _key(of=GateVerdict, absent=True)


@dataclass(frozen=True, kw_only=True)
class SuiteCell(Record):
    """A functionality, a target or one (functionality, target) cell of a suite: its cases, how many are positive
    (hateful), the accuracy with Wilson's interval; ``few``: fewer than 10 cases."""

    functionality: str | None = _key(absent=True)  # in ``cells`` only
    target: str | None = _key(absent=True)  # in ``cells`` only
    n: int = 0
    n_positive: int = 0
    accuracy: Estimate = _key(of=Estimate, default=Estimate())
    few: bool = False


@dataclass(frozen=True, kw_only=True)
class SuiteSummary(Record):
    """``counterfair suite run``'s ``summary.json``: accuracy overall, per functionality, target and cell (worst
    first), and the bias AUCs with the targets as groups (targets, cells and bias None when the cases name no target).
    :func:`~counterfair.commands.suite.core.suite_core` makes the metrics, the command adds the run's facts."""

    counterfair_version: str | None = _key(absent=True)
    command: str | None = _key(absent=True)
    input: Mapping[str, Any] = _key(absent=True, factory=dict)  # the source, its cases, positives, id column
    classifier: ClassifierInfo = _key(of=ClassifierInfo, default=ClassifierInfo(), absent=True)
    positive_label: str | None = _key(absent=True)
    threshold: float | None = _key(absent=True)
    accuracy: Estimate = _key(of=Estimate, default=Estimate())
    functionalities: dict[str, SuiteCell] | None = _key(of={SuiteCell})
    targets: dict[str, SuiteCell] | None = _key(of={SuiteCell})
    cells: tuple[SuiteCell, ...] | None = _key(of=[SuiteCell])
    bias: BiasSummary | None = _key(of=BiasSummary)
    options: Mapping[str, Any] = _key(absent=True, factory=dict)
    gate: GateVerdict | None = _key(of=GateVerdict, absent=True)


# ------------------------------------------------------------------------------------------------ reading


@dataclass(frozen=True, kw_only=True)
class PairedDifference(Record):
    """B against A on one unit (:mod:`counterfair.analysis.compare`): each one's mean, B − A with its interval over
    texts, the paired permutation test's p-value, the texts and the verdict (better, worse, no evidence)."""

    a: float | None = None
    b: float | None = None
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    texts: int = 0
    verdict: str = "no evidence"


@dataclass(frozen=True, kw_only=True)
class ComparedMetrics(Record):
    """Per unit (the identity swaps, each group, each pack): the CTF gap's paired difference, and the disparity's in
    the slot where both runs have their slots."""

    ctf_gap: dict[str, PairedDifference] | None = _key(of={PairedDifference})
    disparity: dict[str, PairedDifference] | None = _key(of={PairedDifference}, absent=True)

    def by_metric(self) -> dict[str, dict[str, PairedDifference]]:
        """Each metric compared (``ctf_gap``, ``disparity``) with its units."""
        found = {"ctf_gap": self.ctf_gap, "disparity": self.disparity}
        return {name: units for name, units in found.items() if units is not None}


@dataclass(frozen=True, kw_only=True)
class ComparisonSummary(Record):
    """``counterfair compare``'s ``summary.json`` and an audit's ``comparison`` (``--baseline``): classifier B against
    A on the pairs both audits made; per metric (``ctf_gap``; ``disparity``, in the slot, where both runs have their
    slots) and unit (overall, each group), A, B, B − A with its interval, the paired permutation test's p and the
    verdict (better / worse / no evidence); and each one's in-slot measures (``effects``). :func:`~counterfair.
    analysis.compare.compare_pairs` builds it; the command adds its name."""

    a: str = ""
    b: str = ""
    matched_pairs: int = 0
    pairs_only_in_a: int = 0
    pairs_only_in_b: int = 0
    metrics: ComparedMetrics = _key(of=ComparedMetrics, default=ComparedMetrics())
    effects: dict[str, SlotEffects] | None = _key(of={SlotEffects}, absent=True)  # A's and B's in-slot measures
    command: str | None = _key(absent=True)

    def verdicts(self, metric: str) -> dict[str, str]:
        """Each unit's verdict on ``metric``."""
        return {unit: entry.verdict for unit, entry in self.metrics.by_metric().get(metric, {}).items()}


SUMMARIES: dict[str, type[Record]] = {
    "audit": AuditSummary,
    "ctf": CTFSummary,
    "evaluate": EvaluationSummary,
    "evaluate-methods": MethodComparisonSummary,
    "feedback": FeedbackSummary,
    "generate": GenerateSummary,
    "bias": BiasSummary,
    "suite": SuiteSummary,
    "compare": ComparisonSummary,
}


def typed(summary: Mapping[str, Any] | Record, kind: type[R]) -> R:
    """``summary`` as a ``kind`` record (a record is returned as it is)."""
    if isinstance(summary, kind):
        return summary
    if isinstance(summary, Record):
        return kind.from_dict(summary.to_dict())
    return kind.from_dict(summary)


def command_of(summary: Mapping[str, Any]) -> str | None:
    """The command that wrote a summary (``None`` for a file without one)."""
    command = Record.from_dict(summary).extra.get("command")
    return command if isinstance(command, str) else None


def read_summary(path: str | Path, *, expect: str | None = None) -> Record:
    """A run directory's (or a file's) ``summary.json`` as the record of the command that wrote it. The JSON reader
    (:func:`counterfair.io.read_json`) refuses a file of another ``schema_version``; this refuses one written by
    another command than ``expect``."""
    from .io import read_json

    target = Path(path)
    target = target / "summary.json" if target.is_dir() else target
    data = read_json(target)
    command = command_of(data)
    if expect is not None and command != expect:
        raise InputError(f"{target}: written by '{command}', not by counterfair {expect}")
    return SUMMARIES.get(command or "", Record).from_dict(data)
