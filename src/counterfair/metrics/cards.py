"""Metric cards: what each metric measures, its range, which direction is better, and where it comes from."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
        ),
        MetricCard(
            "distance",
            ("distance", "distance_norm"),
            "Word-level Levenshtein distance between original and counterfactual tokens; distance_norm "
            "divides by the original's token count.",
            "distance: integer >= 0; distance_norm: >= 0 (above 1 when the counterfactual is longer)",
            "lower is better (a minimal edit)",
            "CEval (Nguyen et al., 2024) §3.1.1, Token Distance; MiCE (Ross et al., 2021) minimality",
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
        ),
        MetricCard(
            "bleu",
            ("bleu",),
            "sacrebleu sentence BLEU of the counterfactual against the original as the one reference, 13a "
            "tokenisation, exp smoothing (NIST geometric), effective order; divided by 100.",
            "[0, 1]",
            "higher means closer to the original",
            "Papineni et al. (2002); paper 000 §3.2 filters and ranks with it; Post (2018) sacrebleu",
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
            raise ConfigError(f"unknown metric {item!r}; known metrics: {', '.join(CARDS)}")
        chosen.add(name)
    if not chosen:
        raise ConfigError("no metrics chosen")
    return [name for name in CARDS if name in chosen]
