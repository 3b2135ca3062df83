"""Decisions and ratings read from the answer's token probabilities (``--decision-from``), not from sampled answers.

A variant's decision is the probability, at the application's temperature, that the model's answer gives a
positive value, renormalised over the allowed values (``--decision-values``), read where the value sits: after the
forced prefix ``{"decision": "`` (a plain answer, ``--decision =yes``: at its first token) in a model run in this
process (exact, :func:`~counterfair.llm.values.value_odds`), or at the value's token in a server's greedy answer with
its ``logprobs`` (:func:`~counterfair.llm.values.odds_from_trace`). A rating is the expected value over the allowed
whole numbers, read after each allowed decision and weighted by the decision's probability at the temperature (what
sampled ratings average to). The mass outside the allowed values (a model that wants to say something else) is
kept per variant (``other_mass`` in ``responses.csv``); the greedy answer stands beside it as the response.

One pass per variant replaces ``--samples`` sampled answers, and the binomial noise of sampling is gone: the
within-prompt differences the audit compares are the model's, not the dice's. Where probabilities cannot be read
(a callable generator, a server without logprobs, no ``--decision-values``, ``--score`` or ``--similarity``, which read
the responses' text) ``auto`` samples, and says so per run and per variant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import pandas as pd

from ...errors import ConfigError
from ...jsontypes import JSONObject
from ...progress import ProgressHook
from .outcomes import Schema

DECISION_FROM = ("auto", "probabilities", "samples")
BLOCK = 16  # variants read in one generator call (each block checkpointed as it returns)
MAX_RATING_VALUES = 101  # a rating read from probabilities is one of at most this many whole numbers
FORCED = "probabilities (forced prefix)"
GREEDY = "probabilities (greedy answer)"


@dataclass(frozen=True)
class Reading:
    """One variant's outcomes read from probabilities: the decision's probability and the rating's expected share of
    its range at the temperature, the largest mass outside the allowed values (temperature 1) and the answer."""

    decision: float | None = None
    rating: float | None = None
    other: float | None = None
    greedy: str = ""
    source: str = FORCED

    def to_dict(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reading:
        known = {k: data[k] for k in ("decision", "rating", "other", "greedy", "source") if k in data}
        return cls(**known)


def rating_values(schema: Schema) -> list[str] | None:
    """The rating's allowed whole numbers as written, or None when its range is not a short run of whole numbers."""
    low, high = schema.low, schema.high
    if not (low.is_integer() and high.is_integer()) or high - low + 1 > MAX_RATING_VALUES:
        return None
    return [str(n) for n in range(int(low), int(high) + 1)]


def why_not(schema: Schema, *, score: str | None, similarity: Sequence[str] | None) -> str | None:
    """Why this audit's outcomes cannot be read from probabilities (None: they can)."""
    if not schema.outcomes:
        return "no --decision or --rating is asked (a classifier's score and refusals read the responses' text)"
    if score or similarity:
        return "--score and --similarity read the responses' text"
    if schema.decision_field and not schema.allowed:
        return "--decision-values is not given (the probability is renormalised over the allowed decisions)"
    if schema.rating_field and rating_values(schema) is None:
        return f"the rating's range is not a run of at most {MAX_RATING_VALUES} whole numbers"
    return None


def check_decision_from(value: str) -> str:
    if value not in DECISION_FROM:
        raise ConfigError(f"--decision-from {value!r}: choose one of {', '.join(DECISION_FROM)}")
    return value


def spellings(values: Sequence[str], *, held: bool) -> dict[str, list[str]]:
    """Each value's spellings a model may write: as given when a grammar holds the answer; otherwise its capitalised
    and upper-case forms too."""
    if held:
        return {v: [v] for v in values}
    return {v: list(dict.fromkeys([v, v.capitalize(), v.upper()])) for v in values}


def decision_prefix(schema: Schema) -> str:
    """The answer up to where the decision's value begins, as the grammar writes it (nothing: a plain answer)."""
    return "" if schema.plain else "{" + json.dumps(schema.decision_field) + ': "'


def rating_prefix(schema: Schema, decision: str | None) -> str:
    """The answer up to where the rating's number begins, after the decision ``decision`` when one is asked."""
    head = "{"
    if schema.decision_field:
        head += json.dumps(schema.decision_field) + ": " + json.dumps(decision or "") + ", "
    return head + json.dumps(schema.rating_field) + ": "


def most_likely(odds: Mapping[str, float]) -> str | None:
    return max(odds, key=lambda v: odds[v]) if odds and max(odds.values()) > 0 else None


def decision_share(odds: Mapping[str, float], schema: Schema) -> float | None:
    """P(a positive decision) of the renormalised ``odds`` (None: no allowed value had any)."""
    return float(sum(p for v, p in odds.items() if v in schema.positive)) if odds else None


def rating_share(odds: Mapping[str, float], schema: Schema) -> float | None:
    """The expected rating as a share of its range (None: no allowed value had any)."""
    if not odds:
        return None
    expected = sum(float(v) * p for v, p in odds.items())
    return (expected - schema.low) / (schema.high - schema.low)


def greedy_answer(schema: Schema, decision: str | None, rating: str | None) -> str:
    """The JSON answer of the most likely values (what a greedy decode held to the grammar writes); a plain answer's
    most likely word."""
    if schema.plain:
        return decision or ""
    answer: dict[str, Any] = {}
    if schema.decision_field:
        answer[schema.decision_field] = decision
    if schema.rating_field:
        answer[schema.rating_field] = int(rating) if rating is not None else None
    return json.dumps(answer)


def field_start(text: str, name: str, *, quoted: bool) -> int | None:
    """Where the value of JSON field ``name`` begins in ``text`` (after its opening quote when ``quoted``)."""
    pattern = re.escape(json.dumps(name)) + r"\s*:\s*" + ('"' if quoted else "")
    found = re.search(pattern, text, re.IGNORECASE)
    return found.end() if found else None


def read_trace(trace: Sequence[Any], schema: Schema, temperature: float) -> Reading | None:
    """A variant's reading from a server's greedy answer and its per-token alternatives (None: a field the audit asks
    for is not in the answer, or no allowed value has any probability there: the variant is sampled instead)."""
    from ...llm.values import odds_from_trace

    text = "".join(p.token for p in trace)
    decision = rating = other = None
    if schema.decision_field:
        start = (
            len(text) - len(text.lstrip()) if schema.plain else field_start(text, schema.decision_field, quoted=True)
        )
        if start is None or start >= len(text):
            return None
        odds = odds_from_trace(trace, start, schema.allowed)
        decision = decision_share(odds.at(temperature), schema)
        other = odds.other
    if schema.rating_field:
        start = field_start(text, schema.rating_field, quoted=False)
        numbers = rating_values(schema) or []
        if start is None:
            return None
        odds = odds_from_trace(trace, start, numbers)
        rating = rating_share(odds.at(temperature), schema)
        other = max(other or 0.0, odds.other)
    if (schema.decision_field and decision is None) or (schema.rating_field and rating is None):
        return None
    return Reading(decision, rating, other, text, GREEDY)


def read_forced(
    llm: Any, conversations: Sequence[Any], schema: Schema, temperature: float, *, held: bool
) -> list[Reading]:
    """Every conversation's reading from a model in this process (``value_odds``), one batched pass: the decision
    after its forced prefix, and the rating after each allowed decision, its expectation the mixture over the
    decisions' tempered probabilities (what the application's sampled ratings average to)."""
    decisions = list(schema.allowed) if schema.decision_field else [None]
    asks: list[tuple[str, Mapping[str, Sequence[str]]]] = []
    if schema.decision_field:
        asks.append((decision_prefix(schema), spellings(schema.allowed, held=held)))
    if schema.rating_field:
        numbers = spellings(rating_values(schema) or [], held=True)
        asks += [(rating_prefix(schema, d), numbers) for d in decisions]
    out = []
    for found in llm.value_odds(conversations, asks):
        weights: dict[str | None, float] = {None: 1.0}
        share = decided = None
        other = 0.0
        if schema.decision_field:
            odds, found = found[0], found[1:]
            weights = dict(odds.at(temperature))  # type: ignore[arg-type]
            share, decided, other = decision_share(weights, schema), most_likely(odds.probability), odds.other  # type: ignore[arg-type]
        rating = best = None
        if schema.rating_field and weights:
            by_decision = dict(zip(decisions, found, strict=True))
            parts = {d: rating_share(o.at(temperature), schema) for d, o in by_decision.items()}
            if all(parts[d] is not None for d, w in weights.items() if w > 0):
                rating = sum(w * float(parts[d] or 0.0) for d, w in weights.items() if w > 0)
            shown = by_decision.get(decided if schema.decision_field else None)
            best = most_likely(shown.probability) if shown is not None else None
            other = max(other, max(o.other for o in by_decision.values()))
        out.append(Reading(share, rating, other, greedy_answer(schema, decided, best), FORCED))
    return out


def plan_reading(opts: Any, generator: Any) -> str | None:
    """Why this run samples instead of reading probabilities (None: it reads them); ``--decision-from
    probabilities`` that cannot be honoured is an error before any work."""
    choice = check_decision_from(opts.decision_from)
    if choice == "samples":
        return "--decision-from samples"
    why = why_not(opts.schema, score=opts.score, similarity=opts.similarity)
    if why is None and not callable(getattr(generator, "read", None)):
        why = "the generator gives no token probabilities (a function returns text only)"
    if why is not None and choice == "probabilities":
        raise ConfigError(f"--decision-from probabilities: {why}; use --decision-from auto or samples")
    return why


class Read(NamedTuple):
    """The variants read from probabilities (by id), and why the rest are sampled (None: none are)."""

    readings: dict[str, Reading]
    unread: list[str]
    why: str | None


def read_variants(
    table: pd.DataFrame,
    generator: Any,
    opts: Any,
    *,
    done: Mapping[str, Reading] | None = None,
    sink: Callable[[list[Any]], None] | None = None,
    progress: ProgressHook | None = None,
) -> Read:
    """Each distinct variant's reading, those in ``done`` kept, the rest read :data:`BLOCK` variants at a time, each
    block handed to ``sink`` (the checkpoint) as it returns. A block the backend cannot read (no log-probabilities, a
    server's error) is left to sampling, which retries and records failures as it always does."""
    from ...errors import CounterfairError
    from ...progress import NullProgress
    from ...redact import redact

    texts = dict(zip(table["variant"], table["text"], strict=True))
    have = dict(done or {})
    pending = [v for v in texts if v not in have]
    hook = progress or NullProgress()
    hook.start(f"decisions read from token probabilities ({len(pending):,} variants, one pass each)", len(texts))
    hook.advance(len(texts) - len(pending))
    unread: list[str] = []
    why: str | None = None
    for start in range(0, len(pending), BLOCK):
        block = pending[start : start + BLOCK]
        try:
            got = generator.read(
                [texts[v] for v in block], opts.schema, temperature=opts.temperature, max_tokens=opts.max_tokens
            )
        except ConfigError:
            raise
        except (CounterfairError, OSError) as err:  # a server's trouble: sampling asks again and records it
            got, why = [None] * len(block), f"reading failed ({redact(str(err))[:200]})"
        if got is None:  # the backend gives no log-probabilities: every variant is sampled
            if opts.decision_from == "probabilities":
                raise ConfigError(
                    "--decision-from probabilities: the generator gives no token log-probabilities; use "
                    "--decision-from auto or samples"
                )
            return Read(have, [v for v in texts if v not in have], "the backend gives no token log-probabilities")
        new = {v: r for v, r in zip(block, got, strict=True) if r is not None}
        missed = [v for v, r in zip(block, got, strict=True) if r is None]
        if missed and why is None:
            why = "a field asked for was not in the greedy answer, or no allowed value had any probability there"
        unread += missed
        if sink is not None and new:
            sink([{"variant": v, "responses": [r.greedy], "read": r.to_dict()} for v, r in new.items()])
        have.update(new)
        hook.advance(len(block))
    return Read(have, unread, why if unread else None)


__all__ = ["DECISION_FROM", "Read", "Reading", "plan_reading", "read_forced", "read_trace", "read_variants", "why_not"]
