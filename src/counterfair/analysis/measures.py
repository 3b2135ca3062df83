"""The table of measures: every number a gate rule can name, with how a sentence words it, its unit, which direction
matters, the size from which it is material and how it is computed. The in-slot statistics
(:mod:`counterfair.analysis.slots`), the gate's rules and defaults (:mod:`counterfair.analysis.gate`), the verdict's
sentences and JUnit messages (:mod:`counterfair.views.verdict`), the trackers' numbers and the docs' measure reference
read it, so a new measure is one entry here (and its computation where the entry says).

A leaf: it imports nothing of counterfair."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    """One measure.

    ``family``: ``slot`` (an in-slot estimate of the audit and the LLM audit), ``control`` (the audit's check of its
    own neutral words), ``swap`` (paper 001's pairs), ``bias``
    (labelled data), ``suite`` (a functional suite), ``llm`` (an LLM audit's response similarity, ``METRIC.NAME``).
    ``unit``: ``points`` (probability points of the positive label), ``share`` (of pairs), ``auc``, ``accuracy``.
    ``sign``: ``either`` (material in both directions), ``above`` (only above the placebo), ``none`` (no material rule).
    ``material``: the smallest size that matters (None: the measure it breaks down, ``part_of``, decides; or no
    material rule). ``scopes``: what the default gate checks, ``overall`` and/or every ``group``. ``sparse``: its
    groups exist only where the texts give them, so ``[*]`` over none is no check."""

    name: str
    words: str
    family: str
    unit: str
    computes: str
    sign: str = "none"
    material: float | None = None
    part_of: str | None = None
    scopes: tuple[str, ...] = ()
    sparse: bool = False

    @property
    def threshold(self) -> float | None:
        """The size from which an estimate is material (its own, or that of the measure it breaks down)."""
        if self.material is not None or self.part_of is None:
            return self.material
        return measure(self.part_of).threshold

    def default_rules(self, prefix: str = "") -> tuple[str, ...]:
        """Its rules in ``--fail-if default``, one per scope: ``material(NAME)`` overall, ``material(NAME[*])`` per
        group (the control's ``control(NAME[*])``); ``prefix`` names an LLM audit's outcome or similarity
        (``decision.``)."""
        kind = "control" if self.family == "control" else "material"  # the control's rule: control(neutral_words[*])
        return tuple(f"{kind}({prefix}{self.name}{'' if s == 'overall' else '[*]'})" for s in self.scopes)


MEASURES: tuple[Measure, ...] = (
    Measure(
        "identity_effect",
        "identity effect",
        "slot",
        "points",
        "a group's mean score with its terms in the slot minus the mean with placebo words in the same slot, averaged "
        "over a text's slots, then over texts (overall: every identity term)",
        sign="either",
        material=0.02,
        scopes=("overall", "group"),
    ),
    Measure(
        "term_effect",
        "term effect",
        "slot",
        "points",
        "one term's identity effect: the slot's score with the term minus with the placebo words",
        sign="either",
        part_of="identity_effect",
        scopes=("group",),
    ),
    Measure(
        "form_effect",
        "effect in one form",
        "slot",
        "points",
        "a term's (or the gender words') identity effect over the slots written in one form: adjective, noun, plural, "
        "pronoun, title",
        sign="either",
        part_of="identity_effect",
        scopes=("group",),
        sparse=True,
    ),
    Measure(
        "cell_effect",
        "effect in one combination",
        "slot",
        "points",
        "a group's identity effect over the slots whose text also names women (or men): race × gender",
        sign="either",
        part_of="identity_effect",
        scopes=("group",),
        sparse=True,
    ),
    Measure(
        "disparity",
        "disparity beyond placebo",
        "slot",
        "points",
        "the mean |score difference| between pairs of identity terms in a slot (a group: pairs of its own terms) minus "
        "the same mean over pairs of placebo words",
        sign="above",
        material=0.02,
        scopes=("overall", "group"),
    ),
    Measure(
        "flip_excess",
        "flip excess",
        "slot",
        "share",
        "the share of pairs of identity terms in a slot whose decisions at the threshold differ minus the share of "
        "pairs of placebo words that do",
        sign="above",
        material=0.05,
        scopes=("overall", "group"),
    ),
    Measure(
        "neutral_words",
        "neutral words' own effect",
        "control",
        "points",
        "the audit's control (analysis.control): each neutral word's score in a slot minus the other neutral words', "
        "and the neutral words' mean minus nonce words' (a second null); ``control(neutral_words[*])`` fails per "
        "family where a word stands out or the two nulls disagree",
        sign="either",
        material=0.02,
        scopes=("group",),
        sparse=True,
    ),
    Measure(
        "ctf_gap",
        "CTF gap",
        "swap",
        "points",
        "paper 001's counterfactual token fairness gap: the mean |score change| when one identity term is swapped "
        "for another",
    ),
    Measure(
        "flip_rate", "flip rate", "swap", "share", "the share of identity swaps whose decision at the threshold changes"
    ),
    Measure("subgroup_auc", "subgroup AUC", "bias", "auc", "the AUC over the texts that name the group"),
    Measure(
        "bpsn_auc",
        "BPSN AUC",
        "bias",
        "auc",
        "the AUC of the group's non-toxic texts against the other texts' toxic ones (background positive, subgroup "
        "negative)",
    ),
    Measure(
        "bnsp_auc",
        "BNSP AUC",
        "bias",
        "auc",
        "the AUC of the group's toxic texts against the other texts' non-toxic ones (background negative, subgroup "
        "positive)",
    ),
    Measure(
        "pinned_auc",
        "pinned AUC",
        "bias",
        "auc",
        "the AUC over the group's texts and as many drawn at random from every text",
    ),
    Measure("overall_auc", "AUC", "bias", "auc", "the AUC over every labelled text"),
    Measure(
        "final_metric",
        "final metric",
        "bias",
        "auc",
        "the Jigsaw challenge's score: 0.25 × the overall AUC + 0.75 × the mean of the power means of the subgroup, "
        "BPSN and BNSP AUCs",
    ),
    Measure(
        "generalized_mean",
        "generalized_mean",
        "bias",
        "auc",
        "the power mean (p = -5) over the groups of one per-group AUC",
    ),
    Measure(
        "fped",
        "false positive equality difference",
        "bias",
        "share",
        "the sum over groups of |the group's false positive rate minus the overall one|",
    ),
    Measure(
        "fned",
        "false negative equality difference",
        "bias",
        "share",
        "the sum over groups of |the group's false negative rate minus the overall one|",
    ),
    Measure(
        "accuracy",
        "accuracy",
        "suite",
        "accuracy",
        "the share of a suite's cases (or a functionality's) labelled right",
    ),
    Measure(
        "target_accuracy",
        "accuracy",
        "suite",
        "accuracy",
        "the share of the cases about one target labelled right",
    ),
    Measure(
        "dissimilarity_excess",
        "dissimilarity excess",
        "llm",
        "points",
        "an LLM audit's mean dissimilarity between the responses to identity variants of a prompt minus that between "
        "the responses to its placebo variants",
        sign="above",
        material=0.02,
        scopes=("overall", "group"),
    ),
)

_BY_NAME = {m.name: m for m in MEASURES}


def measure(name: str) -> Measure:
    """The measure of a gate metric name (an LLM audit's ``OUTCOME.MEASURE`` by its last part)."""
    return _BY_NAME[name.rpartition(".")[2]]


def names(*families: str, material: bool | None = None, parts: bool = True) -> tuple[str, ...]:
    """The measures' names in the table's order: of these families (all when none), only those with (or without) a
    material threshold, with or without the breakdowns of another measure (term, form, combination)."""
    return tuple(
        m.name
        for m in MEASURES
        if (not families or m.family in families)
        and (material is None or (m.threshold is not None) == material)
        and (parts or m.part_of is None)
    )


#: the in-slot measures the audit estimates for every family (their breakdowns, term, form and combination, aside)
SLOT_MEASURES = names("slot", parts=False)
