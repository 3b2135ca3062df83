"""The options of ``counterfair evaluate`` (:class:`EvaluateOptions`) and the CEval pair format's columns."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import ConfigError
from ...metrics.cards import CARDS, classifier_metrics, resolve_metrics
from ...records import knob, option

CEVAL_COLUMNS = ("orig_text", "gen_text", "gen_text_2")


@dataclass
class EvaluateOptions:
    """Options of an evaluation run; every field is recorded in ``summary.json``."""

    metrics: list[str] | None = option(
        None,
        help=(
            "Comma-separated: flip, prob_change, distance, diversity, perplexity, bleu, bertscore (the "
            "default set), text_quality (an LLM judge; only when named), or all."
        ),
    )
    classifier: str | None = option(
        None,
        help=(
            "Classifier spec for flip and prob_change, e.g. imdb-sentiment, profanity-check, "
            "sklearn:PATH, hf:DIR, scores:PATH (without it those two metrics are not computed)."
        ),
    )
    text_column: str = option("orig_text", help="Column with the original text.")
    cf_column: str = option("gen_text", help="Column with the counterfactual.")
    cf2_column: str | None = option(
        None, help="Column with a second counterfactual (diversity); default gen_text_2 if present."
    )
    id_column: str | None = option(None, help="Column with a unique row id.")
    group_column: str | None = option(None, help="Column to aggregate by (with bootstrap CIs).")
    # options added after runs existed (later=True): at their default they stay out of the identity, so those runs
    # still resume. context_column: two-input classifiers' input left unchanged (NLI: the other sentence);
    # revised_input: first | second, which classifier input the text/counterfactual columns are; target_column: the
    # label each counterfactual aims at (prob_change is measured on it)
    context_column: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": (
                "Two-input classifiers (NLI): column with the input left unchanged; the classifier gets text pairs."
            ),
        },
    )
    revised_input: str = field(
        default="first",
        metadata={
            "later": True,
            "help": "With --context-column: the edited text is the classifier's 'first' or 'second' input.",
        },
    )
    target_column: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": "Column with the label each counterfactual aims at (prob_change measured on it).",
        },
    )
    missing_markers: tuple[str, ...] = option(("-1",), help="Cells that mean no counterfactual (CEval writes -1).")
    threshold: float | None = option(None, help="Binary classifiers: label 1 when p >= threshold (default: argmax).")
    contrast_rule: str = option(
        "second", help="More than two labels: the target is the second most probable (paper 002) or least (CEval)."
    )
    ppl_model: str = option(
        "gemma-3-270m", help="Perplexity LM: a known name, a GGUF file or a transformers directory."
    )
    ppl_window: int = option(1024, help="Perplexity window in LM tokens.")
    ppl_stride: int = option(512, help="Sliding-window stride in LM tokens.")
    ppl_max_tokens: int = option(8192, help="Texts longer than this get no perplexity (a row note).")
    ppl_token_budget: int = knob(1024, help="LM tokens per forward batch (memory vs speed).")
    ppl_dtype: str = option(
        "float32", help="Perplexity LM precision: float32 (exact) or bfloat16 (about 2x faster on CPUs with bf16)."
    )
    bertscore_model: str = option("all-minilm-l6-v2", help="The BERTScore encoder.")
    judge_llm: str = option(
        "llamacpp:qwen2.5-coder-1.5b-instruct",
        help="LLM that judges text_quality (llamacpp:NAME|GGUF, openai:URL#MODEL, hf:DIR).",
    )
    batch_size: int = knob(64, help="Batch size for classifier and BERTScore.")
    bootstrap: int = option(2000, help="Bootstrap resamples for confidence intervals.")
    confidence: float = option(0.95, help="Confidence level of the intervals.")
    seed: int = option(0, help="Seed of the bootstrap.")
    fmt: str | None = option(None, help="Input format if the suffix does not tell.")
    encoding: str = option("utf-8", help="Text encoding of the input file.")
    engine: str = knob("local", help="local, or ray: perplexity and BERTScore batches on Ray workers.")
    address: str | None = knob(None, help="Ray cluster address (default: start a local Ray).")
    engine_batch: int = option(128, help="Texts per batch sent to a Ray worker.")

    metrics_explicit: bool = field(init=False, default=False, metadata={"identity": False})
    #: default metrics left out because their extra is not installed (the core install), for the command to say
    left_out: list[str] = field(init=False, default_factory=list, metadata={"identity": False})

    def classifier_spec(self) -> str:
        """The named classifier's spec (an error when none was named)."""
        if self.classifier is None:
            raise ConfigError("flip and prob_change need a classifier: name it with --classifier (classifier=)")
        return self.classifier

    def __post_init__(self) -> None:
        self.metrics_explicit = self.metrics is not None
        self.metrics = resolve_metrics(self.metrics)
        if not self.metrics_explicit:  # the default set on the core install: what runs without an extra
            from ...extras import installed

            self.left_out = [m for m in self.metrics if not all(installed(e) for e in CARDS[m].extras)]
            self.metrics = [m for m in self.metrics if m not in self.left_out]
        needing = [m for m in self.metrics if m in classifier_metrics()]
        if self.classifier is None and needing:
            if self.metrics_explicit:  # never a guessed classifier: a toxicity model's flips on sentiment data are 0
                raise ConfigError(
                    f"{' and '.join(needing)} need a classifier: name it with --classifier (classifier= in Python), "
                    "e.g. imdb-sentiment for sentiment or profanity-check for toxicity, or leave them out of --metrics"
                )
            self.metrics = [m for m in self.metrics if m not in needing]
        if self.threshold is not None and not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"threshold must be in (0, 1), got {self.threshold}")
        if not 0.0 < self.confidence < 1.0:
            raise ConfigError(f"confidence must be in (0, 1), got {self.confidence}")
        if self.bootstrap < 100:
            raise ConfigError("bootstrap needs at least 100 resamples")
        if self.revised_input not in ("first", "second"):
            raise ConfigError(f"revised_input must be 'first' or 'second', got {self.revised_input!r}")
        if self.revised_input == "second" and self.context_column is None:
            raise ConfigError("revised_input='second' needs a context column (the classifier's first input)")
