"""Metric cards: what each metric measures, its range, which direction is better, where it comes from, and for the
metrics computed from the texts alone, how (``compute``). Your own metric is a card with a ``compute``, registered
with :func:`register_metric`; ``evaluate`` then computes it, aggregates it with a CI and records its card."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..jsontypes import JSONObject

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass
class PairTexts:
    """What a metric's ``compute`` gets: the scorable rows' originals and counterfactuals (the revised input in a
    two-input evaluation), their second counterfactuals (``None`` where a row has none), and each side's word tokens
    (tokenized once, shared by the metrics that need them)."""

    originals: list[str]
    counterfactuals: list[str]
    second: list[str | None]
    _tokens: dict[str, list[list[str]]] = field(default_factory=dict, repr=False)

    def tokens(self, side: str) -> list[list[str]]:
        """``side``: ``originals`` or ``counterfactuals``."""
        if side not in self._tokens:
            from ..text import tokenize_batch

            self._tokens[side] = tokenize_batch(getattr(self, side))
        return self._tokens[side]


Compute = Callable[[PairTexts], "Mapping[str, ArrayLike]"]  # texts -> {column: one value per pair}


@dataclass(frozen=True)
class ModelScoring:
    """How ``evaluate`` computes a metric with a model that loads once per process (or Ray actor) and scores batches.
    ``worker`` is called with the values of the evaluate options that ``options`` names, in order, and returns a
    callable ``(items, progress) -> (result, signature)``; the items are the counterfactuals, or (counterfactual,
    original) pairs with ``pairs``. ``columns`` maps the result's per-item arrays to the metric's columns; the
    result's ``row_failures()``, ``row_notes()`` (one entry per item, None for nothing) and ``notice()`` say what a row
    lacks and why, and what the whole run should know."""

    worker: Callable[..., Any]
    options: tuple[str, ...]
    columns: Mapping[str, str]
    pairs: bool = False


@dataclass(frozen=True)
class MetricCard:
    name: str
    columns: tuple[str, ...]
    definition: str
    range: str
    direction: str
    reference: str
    needs: tuple[str, ...] = ()
    default: bool = True  # part of the metrics chosen when none are named (False: only when asked for)
    # texts -> {column: one value per pair}; None for the metrics evaluate computes in a stage of its own (a classifier,
    # a language model, an LLM, a second counterfactual)
    compute: Compute | None = field(default=None, compare=False, repr=False)
    signature: Callable[[], Any] | None = field(default=None, compare=False, repr=False)  # versions, settings
    # the evaluate stage that computes a metric without a compute (counterfair.commands.evaluate.stages): its
    # models load once and serve every metric that names the stage (the classifier: flip and prob_change)
    stage: str | None = None
    extras: tuple[str, ...] = ()  # pip extras its model needs (counterfair.extras), checked before any work
    # a metric a model scores item by item (perplexity, BERTScore): its stage is this, run by evaluate's one model
    # stage; the card is all a new one needs
    model: ModelScoring | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> JSONObject:
        out = {k: getattr(self, k) for k in ("name", "columns", "definition", "range", "direction", "reference")}
        out |= {"needs": self.needs, "default": self.default}
        return out | {"computed_by": "card" if self.compute is not None else "evaluate stage"}  # its stage: .stage


def _distance(texts: PairTexts) -> dict[str, ArrayLike]:
    from .functional import token_distances

    raw, norm = token_distances(texts.tokens("originals"), texts.tokens("counterfactuals"))
    return {"distance": raw, "distance_norm": norm}


def _lexical_signature() -> JSONObject:
    from ..models import package_version
    from ..text import tokenizer_signature

    return {"tokenizer": tokenizer_signature(), "levenshtein": package_version("rapidfuzz")}


def _perplexity_worker(*settings: Any) -> Any:
    from .perplexity import PerplexityWorker

    return PerplexityWorker(*settings)


def _bertscore_worker(*settings: Any) -> Any:
    from .bertscore import BERTScoreWorker

    return BERTScoreWorker(*settings)


def _bleu(texts: PairTexts) -> dict[str, ArrayLike]:
    from .functional import sentence_bleu

    return {"bleu": sentence_bleu(texts.counterfactuals, texts.originals)}


def _bleu_signature() -> str:
    from .functional import bleu_signature

    return bleu_signature()


CARDS: dict[str, MetricCard] = {
    card.name: card
    for card in (
        MetricCard(
            "flip",
            ("flipped",),
            "Whether the classifier's predicted label differs between original and counterfactual "
            "(argmax, or p(label 1) >= threshold for binary). Aggregated as the flip rate: flipped pairs / "
            "scored pairs.",
            "0 or 1 per pair; rate in [0, 1]",
            "higher is better when the edit aims to flip the label; lower is better for a fairness probe "
            "(an identity swap should not flip)",
            "CEval (Nguyen et al., 2024) §3.1.1, Flip Rate",
            ("classifier",),
            stage="classifier",
        ),
        MetricCard(
            "prob_change",
            ("prob_change",),
            "P(c | counterfactual) - P(c | original), where c is the contrast label: for binary the label "
            "not predicted for the original; for more classes the second most probable.",
            "[-1, 1]",
            "higher is better when aiming to flip; near 0 is better for a fairness probe",
            "CEval (Nguyen et al., 2024) §3.1.1, Probability Change",
            ("classifier",),
            stage="classifier",
        ),
        MetricCard(
            "distance",
            ("distance", "distance_norm"),
            "Word-level Levenshtein distance between original and counterfactual tokens; distance_norm "
            "divides by the original's token count.",
            "distance: integer >= 0; distance_norm: >= 0 (above 1 when the counterfactual is longer)",
            "lower is better (a minimal edit)",
            "CEval (Nguyen et al., 2024) §3.1.1, Token Distance; MiCE (Ross et al., 2021) minimality",
            compute=_distance,
            signature=_lexical_signature,
        ),
        MetricCard(
            "diversity",
            ("diversity", "diversity_norm"),
            "Word Levenshtein distance between two counterfactuals of the same original (gen_text vs "
            "gen_text_2); diversity_norm divides by the original's token count, as in CEval's paper (its "
            "code divides by the first counterfactual's length).",
            ">= 0",
            "higher means more varied counterfactuals",
            "CEval (Nguyen et al., 2024) §3.1.1, Diversity",
            ("second counterfactual",),
            stage="diversity",
        ),
        MetricCard(
            "perplexity",
            ("perplexity",),
            "exp of the mean negative log-likelihood per token of the counterfactual under a causal LM "
            "(Gemma-3-270M by default; CEval used GPT-2, so only rank orders compare). Long texts are scored "
            "with a sliding window, never truncated.",
            ">= 1",
            "lower is better (more fluent, more typical text)",
            "CEval (Nguyen et al., 2024) §3.1.1, Perplexity",
            ("causal LM",),
            stage="perplexity",
            extras=("metrics",),
            model=ModelScoring(
                _perplexity_worker,
                ("ppl_model", "ppl_window", "ppl_stride", "ppl_max_tokens", "ppl_token_budget", "ppl_dtype"),
                {"perplexity": "perplexity", "n_tokens": "ppl_tokens"},
            ),
        ),
        MetricCard(
            "bleu",
            ("bleu",),
            "sacrebleu sentence BLEU of the counterfactual against the original as the one reference, 13a "
            "tokenisation, exp smoothing (NIST geometric), effective order; divided by 100.",
            "[0, 1]",
            "higher means closer to the original",
            "Papineni et al. (2002); paper 000 §3.2 filters and ranks with it; Post (2018) sacrebleu",
            compute=_bleu,
            signature=_bleu_signature,
        ),
        MetricCard(
            "bertscore",
            ("bertscore_p", "bertscore_r", "bertscore_f1"),
            "BERTScore of the counterfactual (candidate) against the original (reference) with "
            "all-MiniLM-L6-v2, layer 6, no idf, no baseline rescaling.",
            "[-1, 1], in practice about 0.5–1",
            "higher means closer in meaning to the original",
            "Zhang et al. (2020); paper 000 §3.2 filters and ranks with it",
            ("sentence encoder",),
            stage="bertscore",
            extras=("metrics",),
            model=ModelScoring(
                _bertscore_worker,
                ("bertscore_model", "batch_size"),
                {"precision": "bertscore_p", "recall": "bertscore_r", "f1": "bertscore_f1"},
                pairs=True,
            ),
        ),
        MetricCard(
            "text_quality",
            ("quality_grammar", "quality_cohesiveness", "quality_likability", "quality_fluency"),
            "An instruction LLM (the evaluate option judge_llm) rates the counterfactual 1-5 on grammar, "
            "cohesiveness, likability and fluency, answering in JSON; an answer that does not parse is retried "
            "with sampling, and a row whose answers never parse gets no values and a note (never a made-up "
            "score). Raw answers are kept in text_quality.jsonl. Not computed unless asked for: it runs an LLM.",
            "1-5 per aspect",
            "higher is better",
            "CEval (Nguyen et al., 2024) §3.1.2, text quality judged by an LLM",
            ("instruction LLM",),
            False,
            stage="text_quality",
        ),
    )
}

ALIASES = {
    "flipped": "flip",
    "flip_rate": "flip",
    "distance_norm": "distance",
    "diversity_norm": "diversity",
    "bertscore_f1": "bertscore",
    "bertscore_p": "bertscore",
    "bertscore_r": "bertscore",
    "ppl": "perplexity",
    "quality": "text_quality",
}


BUILT_IN = frozenset(CARDS)


def register_metric(card: MetricCard) -> MetricCard:
    """Add your own metric: ``card.compute(texts: PairTexts)`` returns ``{column: one number per pair}`` for each of
    ``card.columns`` (NaN where a pair has no value). ``evaluate(..., metrics=[card.name])`` then computes it on the
    scorable rows, writes its columns to rows.csv, aggregates them (mean, median, bootstrap CI, by flip and group) and
    records the card. A compute that raises fails its stage (recorded, the rows noted), not the run. A metric a model
    computes pair by pair has a ``model`` (:class:`ModelScoring`) in place of the compute: evaluate builds its worker
    once per process or Ray actor and runs it in a stage of its own (named as the card's ``stage``, or the metric)."""
    from dataclasses import replace

    from ..errors import ConfigError

    if (card.compute is None) == (card.model is None):
        raise ConfigError(
            f"metric {card.name!r}: a registered metric needs a compute function or a model (ModelScoring), one of them"
        )
    if card.model is not None:
        unknown = sorted(set(card.model.columns.values()) - set(card.columns))
        card = replace(card, stage=card.stage or card.name)
        if unknown:
            raise ConfigError(f"metric {card.name!r}: its model writes columns {unknown} the card does not list")
        if card.stage in {c.stage for c in CARDS.values()}:
            raise ConfigError(f"metric {card.name!r}: stage {card.stage!r} is another metric's; name one of its own")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", card.name) or not card.columns:
        raise ConfigError(f"metric {card.name!r}: names are lower-case words (a-z, 0-9, _) with at least one column")
    if card.name in CARDS or card.name in ALIASES:
        raise ConfigError(f"metric {card.name!r} exists already; known metrics: {', '.join(CARDS)}")
    taken = {c for existing in CARDS.values() for c in existing.columns} | {"row", "input_id", "status", "notes"}
    clash = sorted(set(card.columns) & taken)
    if clash:
        raise ConfigError(f"metric {card.name!r}: columns {clash} are already written by another metric or evaluate")
    CARDS[card.name] = card
    return card


def unregister_metric(name: str) -> None:
    """Remove a metric added with :func:`register_metric` (the built-in ones stay)."""
    from ..errors import ConfigError

    if name in BUILT_IN or name not in CARDS:
        raise ConfigError(f"{name!r} is not a registered metric of yours")
    del CARDS[name]


def classifier_metrics() -> list[str]:
    """The metrics that need a classifier (their card's stage is ``classifier``: flip, prob_change)."""
    return [name for name, card in CARDS.items() if card.stage == "classifier"]


def resolve_metrics(names: str | list[str] | None) -> list[str]:
    """Metric names (comma-separated or list; aliases allowed) -> canonical names in card order."""
    from ..errors import ConfigError

    if names is None:
        return [name for name, card in CARDS.items() if card.default]
    items = names.split(",") if isinstance(names, str) else list(names)
    chosen: set[str] = set()
    for item in (i.strip().lower() for i in items):
        if not item:
            continue
        if item == "all":
            chosen.update(CARDS)
            continue
        name = ALIASES.get(item, item)
        if name not in CARDS:
            from difflib import get_close_matches

            close = get_close_matches(item, [*CARDS, *ALIASES], n=1)
            hint = f"did you mean {ALIASES.get(close[0], close[0])!r}? " if close else ""
            raise ConfigError(f"unknown metric {item!r}; {hint}known metrics: {', '.join(CARDS)}")
        chosen.add(name)
    if not chosen:
        raise ConfigError("no metrics chosen")
    return [name for name in CARDS if name in chosen]
