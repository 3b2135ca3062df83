"""The in-memory verb of ``counterfair llm-audit``: prompts -> variants -> sampled responses -> outcomes -> the
placebo-controlled effects of each outcome and the verdict.

Every outcome (decision rate, rating, a classifier's score of the response, refusals) is averaged over a variant's
samples, and the variants of a prompt's slot form the slot table of :mod:`counterfair.analysis.slots`: the identity
effect of a term is the outcome with the term in the slot minus its mean over the placebo words in the same slot,
the disparity is the spread among terms beyond the spread among placebo words, the flip excess the share of pairs of
terms whose majority decision differs beyond the placebo pairs' share. Sampling noise is in both halves of each
comparison, so a generator that ignores identity has every true effect 0 whatever its temperature. All estimates of
all outcomes form one Holm-corrected family (:func:`~counterfair.analysis.slots.joint_slot_effects`) with one set of
bootstrap resamples over prompts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple, NotRequired, TypedDict

import numpy as np
import pandas as pd

from ... import vocabulary
from ...errors import ConfigError
from ...jsontypes import JSONObject
from ...progress import NullProgress, ProgressHook
from ...records import knob, option
from .outcomes import OUTCOMES, Schema, parse_schema, response_outcomes, schema_grammar
from .prompts import SCENARIO_TERMS, placebo_set, variants
from .result import LLMAuditSummary, SimilarityEffects
from .similarity import check_metrics, similarity_tables

if TYPE_CHECKING:
    from ...summaries import SlotEffects
    from .readout import Reading

RESPONSE_COLUMNS = [
    "variant",
    "input_id",
    "family",
    "kind",
    "word",
    "group",
    "sample",
    "prompt",
    "response",
    "status",
    *OUTCOMES,
    "read_from",
    "other_mass",
]
BLOCK = 16  # variants asked in one generator call (each one checkpointed as its samples arrive)
DEFAULT_PACKS = ("gender", "names")  # the swap packs a user's free prompts are searched for by default
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet", ".txt")


@dataclass(frozen=True)
class LLMAuditOptions:
    """Every option of an LLM audit (the command line's flags, spelled with dashes)."""

    identities: str | list[str] | None = option(
        None,
        help=(
            "Identity terms (comma list, a built-in set or a file); default: the classifier audit's 50 terms in 7 "
            "groups, and in free prompts gender words and first names (a built-in scenario: 13 terms in 5 groups)."
        ),
    )
    placebo: str | None = option(None, help="A placebo word file (default: the built-in set).")
    placebo_words: list[str] | None = option(
        None, help="Comma-separated neutral words for the slot (default: sunburned, hatless, musical, ...)."
    )
    decision_from: str = field(  # runs made before it sampled: they resume with --decision-from samples
        default="auto",
        metadata={
            "before": "samples",
            "help": (
                "auto|probabilities|samples: read each variant's decision and rating from the answer's token "
                "probabilities (one pass per variant, no sampling noise) or from --samples sampled answers; auto "
                "reads probabilities where the backend gives them and --decision-values lists the answers."
            ),
        },
    )
    samples: int = option(5, help="Responses sampled per prompt variant (where decisions are read from samples).")
    temperature: float = option(0.7, help="Sampling temperature.")
    max_tokens: int = option(200, help="Tokens per response at most.")
    system: str | None = option(None, help="A system message before each prompt.")
    decision: str | None = option(
        None,
        help=(
            "FIELD=VALUE: the JSON field of the decision and its positive value (decision=hire; several: "
            "decision=hire|yes); =VALUE: a plain answer whose first word is the decision (=yes)."
        ),
    )
    decision_values: list[str] | None = option(None, help="Comma-separated allowed decisions (others are unparsed).")
    rating: str | None = option(None, help="FIELD:LOW-HIGH: a numeric JSON field (score:1-10).")
    score: str | None = option(
        None, help="A classifier spec scoring each response (profanity-check, callable:FILE.py:FN, hf:..., ...)."
    )
    positive_label: str | None = option(
        None, help="The --score classifier's label to read (needed unless its two labels say which is positive)."
    )
    similarity: list[str] | None = option(
        None,
        help=(
            "Comma-separated response similarities between variants, each against its floors: cosine "
            "(MiniLM), rouge_l, bleu (LangFair's definitions; cosine and rouge_l need "
            "counterfair[metrics])."
        ),
    )
    guard: bool = option(True, help="Skip non-identity uses of ambiguous terms in free prompts.")
    constrain: bool = option(
        True,
        help=(
            "With --decision or --rating, hold an in-process llama.cpp model to the JSON answer (a "
            "grammar: no unparsed answers, and no refusals; --no-constrain lets it answer freely)."
        ),
    )
    threshold: float = option(0.5, help="An outcome's mean at or above it is the majority decision (flips).")
    bootstrap: int = option(2000, help="Bootstrap resamples.")
    seed: int = option(0, help="Seed of the samples and the bootstrap.")
    text_column: str = option("text", help="Column with the prompts (prompt when text is absent).")
    id_column: str | None = option(None, help="Column with unique ids (default: row number).")
    encoding: str = option("utf-8", help=vocabulary.ENCODING)
    concurrency: int | None = knob(
        None, help="Sequences in flight to a server (default 32; a request of --samples samples counts as that many)."
    )
    timeout: float | None = knob(None, help="Seconds an openai: server gets to answer one request (default 120).")
    retries: int | None = knob(
        None, help="Times a request to an openai: server is tried again after a timeout or server error (default 2)."
    )
    max_calls: int = knob(
        200_000,
        help=(
            "The most responses a run asks the generator for (prompt variants × samples); a run that would ask for "
            "more stops before the first call, saying how many (raise it to run it)."
        ),
    )
    max_failed: float = knob(
        0.05,
        help=(
            "The share of prompt variants that may get no answer after their retries (a timeout, a server error) "
            "and the run still passes; above it the run is saved, reported and exits 2 (rerun to ask them again)."
        ),
    )
    few_prompts: bool = knob(
        False,
        help=(
            "Run a design of fewer than 6 prompts with an identity slot (no estimate can have an interval: a look at "
            "the answers, never a verdict); without it such a run stops before asking anything."
        ),
    )
    scenario: str | None = option(
        None, help="A built-in scenario instead of PROMPTS: hiring, lending, triage, support, tenancy."
    )

    def __post_init__(self) -> None:
        if self.max_calls < 1:
            raise ConfigError(f"--max-calls must be at least 1, got {self.max_calls}")
        if self.timeout is not None and not self.timeout > 0:
            raise ConfigError(f"--timeout must be a positive number of seconds, got {self.timeout}")
        if self.retries is not None and self.retries < 0:
            raise ConfigError(f"--retries must be 0 or more, got {self.retries}")
        if not 0 <= self.max_failed <= 1:
            raise ConfigError(f"--max-failed must be a share between 0 and 1, got {self.max_failed}")
        if self.samples < 2:
            raise ConfigError("--samples must be at least 2: the floor of two samples of one prompt needs two")
        if not 0.0 <= self.temperature <= 5.0:
            raise ConfigError(f"--temperature {self.temperature}: expected a number from 0 to 5")
        if self.max_tokens < 1 or self.seed < 0 or self.bootstrap < 1:
            raise ConfigError("--max-tokens and --bootstrap must be at least 1, --seed at least 0")
        from ..bias.core import check_bootstrap_cap

        check_bootstrap_cap(self.bootstrap)
        from .readout import check_decision_from

        check_decision_from(self.decision_from)
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"--threshold {self.threshold}: expected a number between 0 and 1")

    @property
    def schema(self) -> Schema:
        return parse_schema(self.decision, self.decision_values, self.rating)

    @property
    def grammar(self) -> str | None:
        """The GBNF of the decision and rating an in-process model is held to (None: unconstrained)."""
        return schema_grammar(self.schema) if self.constrain else None

    def to_dict(self) -> JSONObject:
        """The options as the summary records them (``concurrency`` is how the run went, not what it measured)."""
        return {k: v for k, v in asdict(self).items() if k != "concurrency"}


#: a lone surrogate escaped by :func:`readable` ("\\ud800"): the row's status says so
ESCAPED = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def readable(response: Any) -> str:
    """A response as text that can be written anywhere: a lone surrogate (half of a UTF-16 pair, which no UTF-8 file
    holds) written as its escape, ``\\ud800``; anything not a string as its text. A server the user does not control
    cannot make the checkpoint, or any later write, fail."""
    text = response if isinstance(response, str) else str(response)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def variant_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def plan(keys: Sequence[str], prompts: Sequence[str], opts: LLMAuditOptions) -> tuple[pd.DataFrame, list[str]]:
    """The variants of every prompt (the slot table with a ``variant`` id per distinct text) and the prompts without a
    slot."""
    from ...lexicons.attributes import load_identity_set

    identities = load_identity_set(opts.identities)  # the classifier audit's full set unless named
    packs = DEFAULT_PACKS if opts.identities is None else ()  # and its gender words and first names
    placebo = placebo_set(opts.placebo, opts.placebo_words, identities)
    table, unreached = variants(keys, prompts, identities, placebo, guard=opts.guard, packs=packs)
    table["variant"] = [variant_id(t) for t in table["text"]]
    return table, unreached


class AnsweredVariant(TypedDict):
    """One prompt variant's samples (or, read from probabilities, its greedy answer and ``read``), as the checkpoint
    keeps them (``responses.jsonl``)."""

    variant: str
    responses: list[str]
    read: NotRequired[JSONObject]


Sink = Callable[[list[AnsweredVariant]], None]


class Sampled(NamedTuple):
    """Every variant's responses by id, and the variants that got none after their retries (by id: why)."""

    answers: dict[str, list[str]]
    failed: dict[str, str]


def sample_responses(
    table: pd.DataFrame,
    generator: Any,
    opts: LLMAuditOptions,
    *,
    done: Mapping[str, list[str]] | None = None,
    sink: Sink | None = None,
    progress: ProgressHook | None = None,
) -> Sampled:
    """Each distinct variant's ``samples`` responses, by variant id: those in ``done`` kept, the rest asked
    :data:`BLOCK` variants at a time, each answered variant handed to ``sink`` (the checkpoint) as its last sample
    arrives (a server's or llama.cpp's; a plain function's block when it returns), so a kill loses only the variants
    in flight. A variant that fails (after the generator's own retries) is recorded as failed and the run goes on: one
    bad input costs itself, not its block; a rerun asks the failed ones again. A block none of whose variants gets an
    answer, even asked one at a time, stops the run (a server down, a broken generator: not a finding), keeping what
    was answered before."""
    from ...errors import GeneratorError

    have = dict(done or {})
    failed: dict[str, str] = {}
    texts = dict(zip(table["variant"], table["text"], strict=True))
    pending = [v for v in texts if v not in have]
    hook = progress or NullProgress()
    calls = len(pending) * opts.samples
    if calls > opts.max_calls:
        raise ConfigError(
            f"this run would ask the generator for {calls:,} responses ({len(pending):,} prompt variants × "
            f"{opts.samples} samples; up to {calls * opts.max_tokens:,} tokens at --max-tokens {opts.max_tokens}), "
            f"more than --max-calls {opts.max_calls:,}: raise --max-calls to run it, or audit fewer prompts"
        )
    hook.start(
        f"responses ({len(pending):,} variants × {opts.samples} samples to ask, up to {calls * opts.max_tokens:,} "
        "tokens)",
        total=len(texts) * opts.samples,
    )
    hook.advance((len(texts) - len(pending)) * opts.samples)
    counted = _Counted(hook, have, sink)
    for start in range(0, len(pending), BLOCK):
        block = pending[start : start + BLOCK]
        before = counted.done
        asked = _ask(generator, block, [texts[v] for v in block], opts, counted)
        if len(block) > 1 and len(asked.failed) == len(block):  # a whole block lost, each prompt alone too: down
            raise GeneratorError(
                f"the generator failed on {texts[block[0]][:80]!r} ({asked.failed[block[0]]}) and on every other "
                f"prompt of its block of {len(block)}, each asked alone too; the {len(have)} variants answered before "
                "are kept (in a run directory: rerun the same command to resume)"
            )
        counted.keep(asked.answers)  # those no hook was told of (a plain function's block)
        failed.update(asked.failed)
        counted.advance(max(0, len(block) * opts.samples - (counted.done - before)))  # what the generator did not say
    if pending and len(failed) == len(pending) and not done:  # nothing answered: the generator, not the prompts
        first = next(iter(failed))
        raise GeneratorError(
            f"the generator failed on {texts[first][:80]!r} ({failed[first]}); the 0 variants answered before are "
            "kept (in a run directory: rerun the same command to resume)"
        )
    return Sampled(have, failed)


class _Counted:
    """The hook a generator is given: counts what it was advanced by (a generator's per-sample progress, then the rest
    of the block) and takes each variant the generator says is answered (``answered(k, samples)``, k in the current
    call) into ``have`` and the checkpoint at once, from whichever thread the generator says it on."""

    def __init__(self, hook: ProgressHook, have: dict[str, list[str]], sink: Sink | None) -> None:
        import threading

        self.hook, self.have, self.sink = hook, have, sink
        self.done = 0
        self.asking: list[str] = []  # the variant ids of the generator call in flight, by index
        self._lock = threading.Lock()

    def start(self, description: str, total: int) -> None:
        return None  # the audit's bar is started once, by the audit

    def advance(self, amount: int) -> None:
        with self._lock:
            self.done += amount
        self.hook.advance(amount)

    def answered(self, index: int, samples: Sequence[Any]) -> None:
        if 0 <= index < len(self.asking):
            self.keep({self.asking[index]: [str(getattr(c, "text", c)) for c in samples]})

    def keep(self, answers: Mapping[str, list[str]]) -> None:
        with self._lock:
            new = {v: [readable(r) for r in a] for v, a in answers.items() if v not in self.have}
            if self.sink is not None and new:
                self.sink([{"variant": v, "responses": a} for v, a in new.items()])  # on disk before it counts
            self.have.update(new)


class Asked(NamedTuple):
    answers: dict[str, list[str]]  # by variant id
    failed: dict[str, str]


def _ask(
    generator: Any, variants: list[str], prompts: list[str], opts: LLMAuditOptions, progress: _Counted | None = None
) -> Asked:
    """One block's responses by variant id, and the variants that got none with why: a server's per-input failures
    keep every other input's samples; a block that fails as a whole is asked again one prompt at a time, so that one
    bad prompt fails alone."""
    from ...errors import CounterfairError
    from ...llm.openai_http import LLMRequestsFailed
    from ...redact import redact

    told = {"progress": progress} if progress is not None and _takes_progress(generator) else {}
    if progress is not None:
        progress.asking = variants
    try:
        found = generator.generate(
            prompts, opts.samples, seed=opts.seed, temperature=opts.temperature, max_tokens=opts.max_tokens, **told
        )
        return Asked(dict(zip(variants, list(found), strict=False)), {})
    except LLMRequestsFailed as err:  # some inputs failed after their retries: the others' samples are kept
        got_by = enumerate(err.completed)
        kept = {variants[k]: [str(getattr(c, "text", c)) for c in got] for k, got in got_by if got is not None}
        return Asked(kept, {variants[k]: redact(why) for k, why in err.failures.items()})
    except CounterfairError:
        raise  # a configuration the user must fix (a missing model, a bad endpoint): said once, not per prompt
    except Exception as err:  # noqa: BLE001 - a user's generator may raise anything: a failed variant, recorded as such
        if len(prompts) == 1:
            return Asked({}, {variants[0]: redact(f"{type(err).__name__}: {err}")})
    out = Asked({}, {})
    for variant, prompt in zip(variants, prompts, strict=True):  # the block failed as a whole: each prompt alone
        one = _ask(generator, [variant], [prompt], opts, progress)
        out.answers.update(one.answers)
        out.failed.update(one.failed)
    return out


def _takes_progress(generator: Any) -> bool:
    import inspect

    try:
        return "progress" in inspect.signature(generator.generate).parameters
    except (TypeError, ValueError):
        return False


def response_table(
    table: pd.DataFrame,
    responses: Mapping[str, list[str]],
    opts: LLMAuditOptions,
    scorer: Any = None,
    generator_info: Mapping[str, Any] | None = None,
    failed: Mapping[str, str] | None = None,
    reads: Mapping[str, Reading] | None = None,
) -> pd.DataFrame:
    """One row per (variant, sample) with its outcomes (:data:`RESPONSE_COLUMNS`); a variant read from probabilities
    (``reads``) one row, its greedy answer with the decision's probability and the rating's expected value; a variant
    written by several prompts' slots is listed once per slot; a variant that got no answer (``failed``) one row,
    status ``failed: why``, no outcome."""
    from .readout import FORCED

    first = table.drop_duplicates("variant")
    reads = reads or {}
    answered = [v for v in first["variant"] if v in responses and v not in reads]
    rows = [{"variant": v, "sample": i, "response": r} for v in answered for i, r in enumerate(responses[v])]
    read_rows = [
        {"variant": v, "sample": 0, "response": readable(reads[v].greedy)} for v in first["variant"] if v in reads
    ]
    frame = pd.DataFrame(rows + read_rows, columns=["variant", "sample", "response"])
    scores = None
    if scorer is not None:
        unique = list(dict.fromkeys(frame["response"]))
        found = dict(zip(unique, scorer(unique), strict=True))
        scores = [found[r] for r in frame["response"]]
    held = bool((generator_info or {}).get("grammar"))  # a grammar holds every answer to the JSON: none can decline
    written = len(rows) + sum(r.source != FORCED for r in reads.values())  # answers a model wrote: refusals readable
    for name, values in response_outcomes(
        list(frame["response"]), opts.schema, scores, refusals=not held and written > 0
    ).items():
        frame[name] = values
    frame["read_from"] = "samples"
    if read_rows:  # the outcomes read from probabilities stand in for those parsed from the greedy answer
        at = frame.index[len(rows) :]
        got = [reads[v] for v in frame.loc[at, "variant"]]
        for name in ("decision", "rating"):
            if name in frame.columns:
                frame.loc[at, name] = [np.nan if getattr(r, name) is None else float(getattr(r, name)) for r in got]
        if "refusal" in frame.columns:
            frame.loc[at, "refusal"] = [
                frame.loc[k, "refusal"] if r.source != FORCED else np.nan for k, r in zip(at, got, strict=True)
            ]
        asked = [o for o in ("decision", "rating") if o in frame.columns]
        frame.loc[at, "status"] = [
            "ok" if all(getattr(r, o) is not None for o in asked) else "unparsed: no allowed value had any probability"
            for r in got
        ]
        frame.loc[at, "read_from"] = [r.source for r in got]
        frame.loc[at, "other_mass"] = [np.nan if r.other is None else float(r.other) for r in got]
    escaped = frame["response"].str.contains(ESCAPED, regex=True)
    if escaped.any():  # said beside the parse: the text held lone surrogates, written as their escapes
        frame.loc[escaped, "status"] = frame.loc[escaped, "status"] + "; lone surrogates escaped"
    if failed:
        lost = pd.DataFrame([{"variant": v, "sample": 0, "response": "", "status": f"failed: {why}"}
                             for v, why in failed.items()])  # fmt: skip
        frame = pd.concat([frame, lost], ignore_index=True)
    keep = table[["variant", "input_id", "family", "kind", "word", "group", "text"]].rename(columns={"text": "prompt"})
    merged = keep.merge(frame, on="variant", how="left")
    return merged.reindex(columns=[c for c in RESPONSE_COLUMNS if c in merged.columns])


def measured(responses: pd.DataFrame) -> list[str]:
    return [o for o in OUTCOMES if o in responses.columns]


def outcome_slots(table: pd.DataFrame, responses: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per outcome, the slot table with each variant's mean outcome over its samples as ``score``."""
    out = {}
    for outcome in measured(responses):
        means = responses.groupby("variant")[outcome].mean()
        scored = table.copy()
        scored["score"] = scored["variant"].map(means).astype(float)
        out[outcome] = scored.drop(columns=["variant"])
    return out


class Floor(TypedDict):
    value: float | None
    n: int


class OutcomeMean(TypedDict):
    mean: float | None
    n: int
    distinct: int


class StatusCount(TypedDict):
    responses: int
    unparsed: int
    refused: int
    failed: int  # variants that got no answer after their retries


def sample_floor(responses: pd.DataFrame, *, seed: int = 0) -> dict[str, Floor]:
    """Per outcome, how much two samples of the *same* prompt variant differ (the mean absolute difference between
    sample 0 and sample 1 of each variant): the noise every comparison stands on."""
    out: dict[str, Floor] = {}
    first = responses[responses["sample"] == 0].drop_duplicates("variant").set_index("variant")
    second = responses[responses["sample"] == 1].drop_duplicates("variant").set_index("variant")
    both = first.index.intersection(second.index)
    for outcome in measured(responses):
        diff = (first.loc[both, outcome] - second.loc[both, outcome]).abs().dropna()
        out[outcome] = {"value": float(diff.mean()) if len(diff) else None, "n": len(diff)}
    return out


def _as_written(effects: SlotEffects | None, shown: Mapping[str, str]) -> SlotEffects | None:
    """``effects`` as the summary writes them, each term named as the identity set writes it ("Muslim"; the
    statistics fold case)."""
    if effects is None:
        return None
    found = effects.identity_effect
    if found and found.by_term:
        renamed = replace(found, by_term={shown.get(t, t): e for t, e in found.by_term.items()})
        effects = replace(effects, identity_effect=renamed)
    return effects


def _written(effects: SlotEffects | None) -> JSONObject:
    return effects.to_dict() if effects is not None else {}


def outcome_means(responses: pd.DataFrame) -> dict[str, OutcomeMean]:
    """Per outcome, its mean over every response with a value, how many have one, and how many distinct values."""
    once = responses.drop_duplicates(["variant", "sample"])
    out: dict[str, OutcomeMean] = {}
    for outcome in measured(once):
        values = once[outcome].dropna()
        out[outcome] = {
            "mean": float(values.mean()) if len(values) else None,
            "n": len(values),
            "distinct": int(values.nunique()),
        }
    return out


def status_counts(responses: pd.DataFrame) -> dict[str, StatusCount]:
    """Responses, unparsed answers and refusals per group (placebo variants as the group ``placebo``)."""
    groups = responses["group"].where(responses["kind"] == "identity", "placebo").fillna("other")
    unparsed = responses["status"].astype(str).str.startswith("unparsed")
    lost = responses["status"].astype(str).str.startswith("failed")
    refused = responses.get("refusal", pd.Series(0.0, index=responses.index)).fillna(0).astype(bool)
    out: dict[str, StatusCount] = {}
    for name, part in unparsed.groupby(groups):
        out[str(name)] = {
            "responses": int(part.size),
            "unparsed": int(part.sum()),
            "refused": int(refused[part.index].sum()),
            "failed": int(lost[part.index].sum()),
        }
    return out


def check_design(table: pd.DataFrame, opts: LLMAuditOptions) -> None:
    """Refuse, before anything is asked, prompts too few for any interval (unless ``few_prompts``)."""
    from ...summaries import MIN_INTERVAL_TEXTS

    slotted = int(table["input_id"].nunique())
    if slotted < MIN_INTERVAL_TEXTS and not opts.few_prompts:
        raise ConfigError(
            f"{slotted} prompt{'' if slotted == 1 else 's'} with an identity slot: an interval needs at least "
            f"{MIN_INTERVAL_TEXTS}, so no finding could be shown or ruled out; nothing was asked. Give at least "
            f"{MIN_INTERVAL_TEXTS} prompts (a built-in --scenario has 20 cases), or --few-prompts to look at the "
            "answers anyway"
        )


class Answered(NamedTuple):
    """Every variant's answer: those read from probabilities, the variants sampled, why they were, their samples."""

    reads: dict[str, Reading]
    to_sample: pd.DataFrame
    why: str | None
    sampled: Sampled


def answer_variants(
    table: pd.DataFrame,
    generator: Any,
    opts: LLMAuditOptions,
    *,
    done: Mapping[str, list[str]] | None = None,
    done_reads: Mapping[str, Reading] | None = None,
    sink: Sink | None = None,
    progress: ProgressHook | None = None,
) -> Answered:
    """Each variant's decision and rating read from token probabilities where the run can (:mod:`.readout`), the
    rest sampled (:func:`sample_responses`)."""
    from .readout import plan_reading, read_variants

    why = plan_reading(opts, generator)
    reads: dict[str, Reading] = {}
    to_sample = table
    if why is None:
        found = read_variants(table, generator, opts, done=done_reads, sink=sink, progress=progress)  # type: ignore[arg-type]
        reads, why = found.readings, found.why
        to_sample = table[table["variant"].isin(found.unread)]
    sampled = (
        sample_responses(to_sample, generator, opts, done=done, sink=sink, progress=progress)
        if not to_sample.empty
        else Sampled({}, {})
    )
    return Answered(reads, to_sample, why, sampled)


def llm_audit_core(
    keys: Sequence[str],
    prompts: Sequence[str],
    generator: Any,
    opts: LLMAuditOptions,
    *,
    scorer: Any = None,
    done: Mapping[str, list[str]] | None = None,
    done_reads: Mapping[str, Reading] | None = None,
    sink: Sink | None = None,
    progress: ProgressHook | None = None,
) -> tuple[pd.DataFrame, LLMAuditSummary]:
    """The responses table and the summary's measured part (``effects`` per outcome, floors, counts): each variant's
    decision and rating read from token probabilities where the run can (:mod:`.readout`), the rest sampled."""
    from ...analysis.slots import joint_slot_effects

    table, unreached = plan(keys, prompts, opts)
    if table.empty:
        raise ConfigError(
            "no prompt has an identity slot: write {group} where the identity goes, or name an identity term "
            f"({', '.join(SCENARIO_TERMS[:6])}, ...), a gendered word or a first name in the prompt"
        )
    check_design(table, opts)
    reads, to_sample, why, sampled = answer_variants(
        table, generator, opts, done=done, done_reads=done_reads, sink=sink, progress=progress
    )
    responses = response_table(
        table, sampled.answers, opts, scorer, generator.info(), failed=sampled.failed, reads=reads
    )
    metrics = check_metrics(opts.similarity)
    pairs, similar = similarity_tables(responses, metrics) if metrics else ({}, {})
    joint = joint_slot_effects(
        outcome_slots(table, responses),
        threshold=opts.threshold,
        seed=opts.seed,
        n_resamples=opts.bootstrap,
        extra=pairs,
    )
    shown = {str(w).lower(): str(w) for w in table.loc[table["kind"] == "identity", "word"]}
    effects = {k: _as_written(v, shown) for k, v in joint.items() if k not in pairs}
    similarity = {  # the statistic's section of the metric, with its mean similarities
        m: SimilarityEffects.from_dict({**_written(joint.get(m)), "mean_similarity": similar[m]}) for m in metrics
    }
    answered = responses[~responses["status"].astype(str).str.startswith("failed")]
    measured_part = LLMAuditSummary(
        prompts=len(prompts),
        prompts_without_slot=tuple(unreached),
        variants=int(table["variant"].nunique()),
        failed_variants=len(sampled.failed),
        responses=len(answered.drop_duplicates(["variant", "sample"])),
        samples=opts.samples,
        outcomes=tuple(measured(responses)),
        effects=effects,
        similarity=similarity,
        sample_floor=sample_floor(responses),
        outcome_means=outcome_means(responses),
        by_group=status_counts(responses),
        terms=tuple(sorted({str(w) for w in table.loc[table["kind"] == "identity", "word"]})),
        placebo_words=tuple(sorted({str(w) for w in table.loc[table["kind"] == "placebo", "word"]})),
        read_from={
            "asked": opts.decision_from,
            "probabilities": len(reads),
            "samples": int(to_sample["variant"].nunique()),
            "why_samples": why if len(to_sample) else None,
            "temperature": opts.temperature,
        },
    )
    return responses, measured_part


def as_prompt_list(prompts: Iterable[Any] | str) -> list[str]:
    if isinstance(prompts, str):
        return [prompts]
    return [str(p) for p in prompts]


def prompt_scores(classifier: Any, positive_label: str | None) -> Callable[[list[str]], list[float]]:
    """``texts -> P(positive label)`` of a classifier spec or object. The positive label is settled before any work,
    after one prediction (a function shows its labels when it first answers): a classifier with more than two labels,
    or two that do not say which is positive, needs ``--positive-label``, as ``audit`` does."""
    from ...classifiers import as_classifier, load_classifier
    from ...labels import checked_positive_index

    clf = load_classifier(classifier) if isinstance(classifier, str) else as_classifier(classifier)
    index = checked_positive_index(clf, "The applicant has a degree.", positive_label)

    def score(texts: list[str]) -> list[float]:
        if not texts:
            return []
        proba = np.asarray(clf.predict_proba(texts), dtype=float)
        column = proba if proba.ndim == 1 else proba[:, index]
        return [float(x) for x in column]

    score.signature = getattr(clf, "signature", lambda: {"type": type(clf).__name__})  # type: ignore[attr-defined]
    return score


def require_extras(opts: LLMAuditOptions, generator: Any) -> None:
    """Refuse, before any work, a generator, scorer or similarity whose extra is not installed."""
    from ...extras import check
    from ...needs import classifier_extras, llm_extras

    wanted: list[tuple[str, tuple[str, ...]]] = []
    if isinstance(generator, str) and not generator.startswith(("callable:", "simulated:")):
        wanted.append((f"the generator {generator}", llm_extras(generator)))
    if opts.score:
        wanted.append((f"--score {opts.score}", classifier_extras(opts.score)))
    metrics = check_metrics(opts.similarity)
    wanted += [(f"the {m} similarity", ("metrics",)) for m in metrics if m != "bleu"]
    check(wanted)


def read_prompts(source: Any, opts: LLMAuditOptions) -> tuple[list[str], list[str], str]:
    """The prompts' ids and texts and where they came from: a list (or one string) of prompts, or a table (a file or
    DataFrame) whose text column is ``opts.text_column`` (``prompt`` when that is absent and ``prompt`` exists)."""
    from pathlib import Path

    from ...io import read_table, read_texts

    if isinstance(source, str) and not (Path(source).suffix.lower() in TABLE_SUFFIXES or Path(source).is_file()):
        source = [source]  # one prompt, not a file
    if not isinstance(source, str | Path | pd.DataFrame):  # checked as every command checks its texts
        listed = read_texts(as_prompt_list(source), origin="prompts")
        return listed.ids, listed.every_text("llm-audit"), "prompts"
    frame = read_table(source, encoding=opts.encoding) if not isinstance(source, pd.DataFrame) else source
    origin = str(source) if not isinstance(source, pd.DataFrame) else "DataFrame"
    column = opts.text_column
    if column not in frame.columns and column == "text" and "prompt" in frame.columns:
        column = "prompt"
    read = read_texts(frame, text_column=column, id_column=opts.id_column, origin=origin)
    return read.ids, read.every_text("llm-audit"), origin


def audit_prompts(
    keys: Sequence[str],
    prompts: Sequence[str],
    generator: Any,
    opts: LLMAuditOptions,
    *,
    origin: str = "prompts",
    rules: Sequence[str] | None = None,
    done: Mapping[str, list[str]] | None = None,
    done_reads: Mapping[str, Reading] | None = None,
    sink: Sink | None = None,
    progress: ProgressHook | None = None,
) -> Any:
    """The whole audit on prompts already read: an :class:`~counterfair.llm_audit.result.LLMAuditResult` with the
    gate's verdict when ``rules`` are given."""
    from ... import __version__
    from .result import LLMAuditResult, gate_of

    scorer = prompt_scores(opts.score, opts.positive_label) if opts.score else None
    responses, found = llm_audit_core(
        keys, prompts, generator, opts, scorer=scorer, done=done, done_reads=done_reads, sink=sink, progress=progress
    )
    summary = replace(
        found,
        counterfair_version=__version__,
        input=origin,
        generator=generator.info(),
        scorer=scorer.signature() if scorer is not None else None,  # type: ignore[attr-defined]
        options=opts.to_dict(),
    )
    result = LLMAuditResult(summary, responses)
    if rules:  # the gate as ``counterfair check`` reads it from the finished run
        result = LLMAuditResult(replace(summary, gate=gate_of(result, rules)), responses)
    return result
