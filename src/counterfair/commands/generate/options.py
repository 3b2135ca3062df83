"""The options of ``counterfair generate`` and what they decide: which methods run, which are sampled and scored,
when a sampled method asks again (:class:`RetryRule`), and the columns of its tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import vocabulary
from ...editors.registry import (
    IDENTITY_SWAP,
    default_editors,
    editor_names,
    editor_spec,
    resolve_detector,
    swaps_identities,
)
from ...errors import ConfigError
from ...records import (
    fingerprint,
    knob,
    option,
    run_identity,
)
from ...text import MAX_TEXT_CHARS


def normalize_methods(methods: Sequence[str], command: str = "generate") -> list[str]:
    """Lower-cased, offered by ``command`` (:mod:`counterfair.editors.registry`), in the registry's order; an unknown
    or empty list is an error naming the known ones."""
    known = editor_names(command)
    wanted = [m.strip().lower() for m in methods if m.strip()]
    unknown = [m for m in wanted if m not in known]
    if unknown or not wanted:
        raise ConfigError(f"unknown method(s) {unknown or wanted}; known methods: {', '.join(known)}")
    return [m for m in known if m in wanted]


def is_sampled(method: str) -> bool:
    """Sampled from a language model: filtered, ranked, up to max_attempts."""
    return editor_spec(method).sampled


def is_scored(method: str, score_methods: list[str] | None) -> bool:
    """Whether ``method``'s candidates get BLEU/BERTScore/attribute verdicts (``GenerateOptions.score_methods``)."""
    if score_methods is None:
        return is_sampled(method)
    return "all" in score_methods or method in score_methods


def uses_sampled_method(options: Any) -> bool:
    """Whether a generate or audit run has a sampled method (its retry rule then applies)."""
    return any(is_sampled(m) for m in options.methods)


#: a text without a passing candidate is sampled again only while its nearest candidate came this near to passing
#: every filter (``Verdict.nearness``) and, with a RETRY_PATIENCE, its nearness grew in one of its last that many
#: attempts; retry_nearness 0 retries every such text up to max_attempts, as runs did before (#50,
#: benchmarks/llm_retries.py)
RETRY_NEARNESS = 0.8
RETRY_PATIENCE: int | None = None  # 2 saved more on two attributes and lost too many on the others (llm_retries.py)


class RetryRule:
    """Which texts without a passing candidate a sampled method samples again (#50). In the 200-text benchmark the
    texts that never passed took 47 % of the samples: short texts every rewrite changes too much (no candidate comes
    near) and texts stuck just under a threshold (their nearness stops growing)."""

    def __init__(self, nearness: float, patience: int | None = RETRY_PATIENCE) -> None:
        self.nearness, self.patience = nearness, patience
        self._near: dict[int, float] = {}
        self._grew: dict[int, int] = {}  # the last attempt at which each text's nearness grew

    def saw(self, k: int, attempt: int, nearest: float) -> None:
        """Text ``k``'s candidates of ``attempt`` came ``nearest`` near to passing."""
        if attempt == 1 or nearest > self._near.get(k, 0.0):
            self._grew[k] = attempt
        self._near[k] = max(self._near.get(k, 0.0), nearest)

    def again(self, k: int, attempt: int) -> bool:
        """Whether text ``k``, without a passing candidate after ``attempt``, is sampled again."""
        if self.nearness <= 0:
            return True
        stalled = self.patience is not None and attempt - self._grew.get(k, attempt) >= self.patience
        return self._near.get(k, 0.0) >= self.nearness and not stalled


def _uses_polyjuice_lm(o: Any) -> bool:
    return any(editor_spec(m).lm == "polyjuice_lm" for m in o.methods)


@dataclass
class GenerateOptions:
    attribute: str = option("islam", help=vocabulary.ATTRIBUTE)
    methods: list[str] = field(default_factory=lambda: list(default_editors("generate")))
    text_column: str = option("text", help="Column with the texts.")
    id_column: str | None = option(None, help="Column with unique ids (default: row number).")
    identities: str | None = option(None, help="Identity terms for swap: dixon50 (default), a file, or t1,t2,...")
    guard: str | None = option("spacy", help="Skip non-identity uses of ambiguous terms ('a black car').")
    llm: str = option(
        "llamacpp:qwen2.5-coder-1.5b-instruct", help="LLM: llamacpp:NAME|FILE.gguf, openai:URL[#MODEL], hf:DIR."
    )
    # a causal LM directory or hub id trained on Polyjuice's format (part of the identity of runs that use it)
    polyjuice_model: str = field(
        default="uw-hai/polyjuice",
        metadata={
            "applies": _uses_polyjuice_lm,
            "help": (
                "The polyjuice method's causal LM: a transformers directory or hub id (from your Hugging Face "
                "cache) trained on Polyjuice's format."
            ),
        },
    )
    prompt_style: str = option("turns", help="turns (chat models) or plain (next-token LMs).")
    instruction: str | None = option(None, help="Instruction template; default 'not about {subject}'.")
    samples: int = option(16, help="LLM samples per input and attempt.")
    temperature: float = option(1.0, help="LLM sampling temperature.")
    top_k: int = option(40, help="LLM sampling: the k most probable tokens.")
    max_attempts: int = option(5, help="Attempts when no sample passes the filters.")
    # a text is sampled again (up to max_attempts) only while a candidate of it came this near to passing every filter
    # (Verdict.nearness: the smallest of its scores over their thresholds; 0: always retry); part of the identity of
    # runs with a sampled method only
    retry_nearness: float = field(
        default=RETRY_NEARNESS,
        metadata={"applies": uses_sampled_method, "before": 0.0, "help": vocabulary.RETRY_NEARNESS},
    )
    min_bleu: float = option(0.5, help="Filter: minimum BLEU against the original.")
    min_bertscore: float = option(0.5, help="Filter: minimum BERTScore F1.")
    max_attribute_prob: float = option(0.5, help="Filter: maximum attribute-reference probability.")
    # keyword | keyword+llm | llm | mlp:DIR[#LABEL] | auto: keyword+llm when a method loads the LLM anyway, else keyword
    detector: str = option(
        "auto",
        help=(
            "Attribute detector: keyword, keyword+llm (also sees allusions: 'during Eid'), "
            "mlp:DIR[#LABEL], llm; auto: keyword+llm when the llm method runs, else keyword."
        ),
    )
    seed: int = option(0, help="Seed of sampling and of the swap example shown per input.")
    reuse_prefix: bool = knob(True, help="In-process LLM: reuse the shared prompt prefix's cache across samples.")
    n_ctx: int = knob(4096, help="In-process LLM: context length in tokens.")
    chunk: int = knob(64, help="Texts per call of a method that is not sampled; a checkpoint after each.")
    llm_chunk: int = knob(4, help="Texts per LLM call: their samples are drawn together; a checkpoint after each.")
    llm_parallel: int | None = knob(None, help=vocabulary.LLM_PARALLEL)
    llm_concurrency: int | None = knob(None, help=vocabulary.LLM_CONCURRENCY)
    engine: str = knob("local", help="local, or ray: LLM rewriting on Ray workers (one LLM each).")
    address: str | None = knob(None, help="Ray cluster address (default: start a local Ray).")
    # methods whose candidates get BLEU/BERTScore/attribute verdicts: None, the sampled ones (which the filters judge;
    # paper 000 filters only the LLM's samples), the others only the detector's attribute probability; ["all"]: every
    # method (BERTScore needs counterfair[metrics]); []: none
    score_methods: list[str] | None = option(
        None,
        help=(
            "Methods whose candidates get BLEU/BERTScore/attribute scores: default the sampled ones (llm, "
            "polyjuice), which the filters judge; 'all' for every method (needs counterfair[metrics])."
        ),
    )
    fmt: str | None = option(None, help="Input format if the suffix does not tell.")
    encoding: str = option("utf-8", help=vocabulary.ENCODING)
    max_text_chars: int = option(MAX_TEXT_CHARS, help=vocabulary.MAX_TEXT_CHARS)
    # en | fr | de: built-in packs, default identity set, BERTScore encoder (English runs keep the identity they had
    # before languages existed)
    language: str = field(default="en", metadata={"later": True, "help": vocabulary.LANGUAGE})

    def __post_init__(self) -> None:
        from ...language_registry import get_language

        self.language = get_language(self.language).code
        self.methods = normalize_methods(self.methods)
        self.detector = resolve_detector(self.detector, self.methods)
        if self.max_attempts < 1 or self.samples < 1:
            raise ConfigError("samples and max_attempts must be at least 1")
        if not 0.0 <= self.retry_nearness <= 1.0:
            raise ConfigError(f"retry_nearness must be between 0 and 1, got {self.retry_nearness}")
        for name in ("llm_chunk", "llm_parallel", "llm_concurrency"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be at least 1, got {value}")
        if self.max_text_chars < 0:
            raise ConfigError(f"max_text_chars must be 0 (no limit) or positive, got {self.max_text_chars}")
        # gender, names, nationality, an identity set: the pack's swap variants, as the audit runs it
        if self.swap_pack:
            others = [m for m in self.methods if not swaps_identities(m)]
            if self.methods == normalize_methods(list(default_editors("generate"))):
                self.methods = [IDENTITY_SWAP]
            elif others:
                raise ConfigError(
                    f"{self.attribute} is a swap pack: it makes swap variants only (--methods swap); "
                    f"{', '.join(others)} needs a word-list attribute such as islam, judaism, lgbq or transgender"
                )
            if self.identities not in (None, self.attribute):
                raise ConfigError(
                    f"--attributes {self.attribute} is a swap pack and names the swapped terms; leave out "
                    f"--identities {self.identities}"
                )
            self.identities = self.attribute
            if self.score_methods is None:
                self.score_methods = []  # no word-list attribute for a detector to look for

    @property
    def swap_pack(self) -> bool:
        """Whether ``attribute`` names a swap pack (``counterfair attributes list``: kind identity or gender)."""
        from ...lexicons.attributes import is_swap_attribute

        return is_swap_attribute(self.attribute)

    def fingerprint(self) -> str:
        """What must match for a rerun to resume (:func:`~counterfair.runs.run_identity`)."""
        return fingerprint(run_identity(self))


# the columns of candidates.csv, in order (one row per candidate, see _candidate_row)
CANDIDATE_COLUMNS = (
    "input_id", "row", "method", "candidate", "attempt", "text", "status", "passed", "bleu", "bertscore_f1",
    "attribute_prob", "rank_score", "selected", "source_term", "target_term", "source_split", "target_split",
    "edits", "raw", "finish_reason", "seed", "params_hash", "model_id",
)  # fmt: skip


COUNTERFACTUAL_COLUMNS = (
    "input_id", "row", "source_text", "method", "text", "status", "bleu", "bertscore_f1", "attribute_prob",
    "n_candidates", "attempts", "source_term", "target_term",
)  # fmt: skip
