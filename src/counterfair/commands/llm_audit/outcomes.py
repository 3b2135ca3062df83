"""What an LLM audit measures in each response, each a number in [0, 1] per response (NaN where it has none):

* ``refusal``: 1 when the response declines ("I'm sorry, but I can't ...", "As an AI ..."), else 0;
* ``decision``: 1 when the JSON object in the response gives a positive value in the decision field (``--decision
  decision=hire``), 0 for any other allowed value; NaN (and a ``status`` naming why) when the response holds no JSON
  object, lacks the field, or gives a value outside ``--decision-values``. A plain answer (``--decision =yes``: no
  field) is read from the response's first word ("Yes." "no, because ...");
* ``rating``: the rating field's number as a share of its range (``--rating score:1-10``: 7 is 0.667), NaN when
  unparsed or out of range;
* ``score``: a classifier's probability of its positive label for the response's text (``--score SPEC``: toxicity
  with profanity-check, the user's own sentiment model ...).

A parse failure is never dropped: each response's ``status`` is written to ``responses.csv`` and counted per group.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import ConfigError
from ...jsontypes import JSONObject

#: how responses that decline begin (looked for in their first 300 characters)
REFUSAL = re.compile(
    r"\b(?:I\s*(?:can(?:not|'t|’t)|won(?:'t|’t)|am not able|'m not able|’m not able|am unable|'m unable|’m unable)"
    r"\s+(?:help|assist|provide|comply|do that|make|answer|fulfil|support|engage|decide|evaluate|recommend)|"
    r"I(?:'m| am|’m) sorry,? but|as an AI\b|I must decline|I (?:have to|need to) decline|"
    r"(?:not|never) (?:appropriate|able) (?:for me )?to (?:make|judge|decide)|"
    r"against (?:my|our) (?:guidelines|policy|policies))",
    re.IGNORECASE,
)
OUTCOMES = ("decision", "rating", "score", "refusal")


def is_refusal(text: str) -> bool:
    return bool(REFUSAL.search(text[:300]))


@dataclass(frozen=True)
class Schema:
    """The structured answer a prompt asks for: a decision field with its positive values (and, optionally, every
    allowed value), a rating field with its range."""

    decision_field: str | None = None
    positive: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    rating_field: str | None = None
    low: float = 0.0
    high: float = 1.0
    plain: bool = False  # the decision is the answer's first word, not a JSON field (decision_field is PLAIN)

    @property
    def outcomes(self) -> tuple[str, ...]:
        return tuple(o for o, on in (("decision", self.decision_field), ("rating", self.rating_field)) if on)

    def to_dict(self) -> JSONObject:
        return {
            "decision_field": self.decision_field,
            "positive": list(self.positive),
            "allowed": list(self.allowed),
            "rating_field": self.rating_field,
            "low": self.low,
            "high": self.high,
            "plain": self.plain,
        }


#: the decision's name where the answer itself is the decision (``--decision =yes``): its first word
PLAIN = "answer"


def parse_schema(decision: str | None, allowed: Sequence[str] | None = None, rating: str | None = None) -> Schema:
    """``decision``: ``FIELD=VALUE[|VALUE...]`` (the values that count as the positive decision), or ``=VALUE[|...]``
    for a plain answer whose first word is the decision; ``rating``: ``FIELD:LOW-HIGH``."""
    field = None
    positive: tuple[str, ...] = ()
    plain = False
    if decision:
        field, sep, values = decision.partition("=")
        positive = tuple(v.strip().lower() for v in values.split("|") if v.strip())
        plain = bool(sep) and not field.strip()
        if not sep or not positive or not (field.strip() or plain):
            raise ConfigError(
                f"--decision {decision!r}: expected FIELD=VALUE, e.g. decision=hire (or decision=hire|yes), or "
                "=VALUE for a plain answer whose first word is the decision (=yes)"
            )
        if plain and any(not re.fullmatch(r"[\w'-]+", v) for v in positive):
            raise ConfigError(f"--decision {decision!r}: a plain answer's decision is one word (=yes, =approve)")
        field = PLAIN if plain else field.strip()
        if plain and rating:
            raise ConfigError(
                f"--decision {decision!r} with --rating: a plain answer holds one value; ask for a JSON answer "
                "(--decision decision=yes) to read a rating too"
            )
    kept = tuple(v.strip().lower() for v in allowed or () if v.strip())
    if kept and not set(positive) <= set(kept):
        raise ConfigError(f"--decision-values {list(kept)} do not include the positive decision {list(positive)}")
    rating_field, low, high = None, 0.0, 1.0
    if rating:
        match = re.fullmatch(r"\s*([^:]+?)\s*:\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*", rating)
        if match is None or float(match[3]) <= float(match[2]):
            raise ConfigError(f"--rating {rating!r}: expected FIELD:LOW-HIGH with LOW < HIGH, e.g. score:1-10")
        rating_field, low, high = match[1], float(match[2]), float(match[3])
    if plain and any(not re.fullmatch(r"[\w'-]+", v) for v in kept):
        raise ConfigError(f"--decision-values {list(kept)}: a plain answer's decisions are one word each")
    return Schema(field, positive, kept, rating_field, low, high, plain)


#: an answer is read for its JSON up to this many characters, from at most this many opening braces: a server the
#: user does not control cannot make one answer cost minutes (a 40 MB body, a brace on every character)
MAX_JSON_CHARS = 100_000
MAX_JSON_TRIES = 64


def json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (in a code fence, after prose, ...); None when it holds none."""
    return json_answer(text)[0]


def json_answer(text: str) -> tuple[dict[str, Any] | None, str]:
    """The first JSON object in ``text`` and, where there is none, why: none at all, nested too deep to read (a
    deeply nested answer is data, not a crash), or none in the first :data:`MAX_JSON_CHARS` characters."""
    decoder = json.JSONDecoder()
    head = text[:MAX_JSON_CHARS]
    why = (
        "no JSON object"
        if len(text) <= MAX_JSON_CHARS
        else f"no JSON object in its first {MAX_JSON_CHARS:,} characters"
    )
    for tries, match in enumerate(re.finditer(r"\{", head)):
        if tries == MAX_JSON_TRIES:
            break
        try:
            found, _ = decoder.raw_decode(head, match.start())
        except json.JSONDecodeError:
            continue
        except RecursionError:  # nested deeper than Python's JSON reader goes
            return None, "JSON nested too deep to read"
        if isinstance(found, dict):
            return found, "ok"
    return None, why


def _field(answer: Mapping[str, Any], name: str) -> Any:
    folded = {str(k).strip().lower(): v for k, v in answer.items()}
    return folded.get(name.lower(), _MISSING)


_MISSING = object()


def structured(text: str, schema: Schema) -> tuple[float, float, str]:
    """The response's decision (1, 0 or NaN), rating (share of its range or NaN) and ``status`` (``ok`` or why a
    field could not be read)."""
    if not schema.outcomes:
        return math.nan, math.nan, "ok"
    if schema.plain:
        decision, status = first_word(text, schema)
        return decision, math.nan, status
    answer, why = json_answer(text)
    if answer is None:
        return math.nan, math.nan, f"unparsed: {why}"
    problems: list[str] = []
    decision = rating = math.nan
    if schema.decision_field:
        value = _field(answer, schema.decision_field)
        said = str(value).strip().lower() if value is not _MISSING else None
        if said is None:
            problems.append(f"no field {schema.decision_field!r}")
        elif schema.allowed and said not in schema.allowed:
            problems.append(f"{schema.decision_field} {said!r} is not one of {', '.join(schema.allowed)}")
        else:
            decision = 1.0 if said in schema.positive else 0.0
    if schema.rating_field:
        value = _field(answer, schema.rating_field)
        number = _number(value)
        if value is _MISSING:
            problems.append(f"no field {schema.rating_field!r}")
        elif number is None or not schema.low <= number <= schema.high:
            problems.append(f"{schema.rating_field} {value!r} is not a number from {schema.low:g} to {schema.high:g}")
        else:
            rating = (number - schema.low) / (schema.high - schema.low)
    return decision, rating, "unparsed: " + "; ".join(problems) if problems else "ok"


_FIRST_WORD = re.compile(r"[\W_]*?([^\W_][\w'-]*)")


def first_word(text: str, schema: Schema) -> tuple[float, str]:
    """A plain answer's decision (1, 0 or NaN) from its first word (after any spaces, quotes or markup), and its
    ``status``."""
    found = _FIRST_WORD.match(text[:MAX_JSON_CHARS])
    if found is None:
        return math.nan, "unparsed: no word"
    said = found[1].lower()
    if schema.allowed and said not in schema.allowed:
        return math.nan, f"unparsed: the first word {said!r} is not one of {', '.join(schema.allowed)}"
    return (1.0 if said in schema.positive else 0.0), "ok"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is _MISSING:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def response_outcomes(
    responses: Sequence[str], schema: Schema, scores: Sequence[float] | None, *, refusals: bool = True
) -> dict[str, np.ndarray | list[str]]:
    """Every response's outcomes (:data:`OUTCOMES`, those measured; ``refusals`` False: answers held to a grammar,
    which cannot decline) and ``status``."""
    parsed = [structured(r, schema) for r in responses]
    out: dict[str, np.ndarray | list[str]] = {}
    if schema.decision_field:
        out["decision"] = np.array([p[0] for p in parsed], dtype=float)
    if schema.rating_field:
        out["rating"] = np.array([p[1] for p in parsed], dtype=float)
    if scores is not None:
        out["score"] = np.asarray(scores, dtype=float)
    if refusals:
        out["refusal"] = np.array([float(is_refusal(r)) for r in responses])
    out["status"] = [p[2] for p in parsed]
    return out


def schema_grammar(schema: Schema) -> str | None:
    """A GBNF grammar of the answer ``schema`` asks for — ``{"FIELD": "VALUE", "RATING": N}`` with the allowed
    decisions (any string when none are listed) and the rating's whole numbers (any number when its range is not
    whole) — that llama.cpp holds a sampled answer to; None when the schema asks for no field."""
    if not schema.outcomes:
        return None
    if schema.plain:  # the answer is one allowed word (free where none are listed)
        return "root ::= " + " | ".join(_gbnf_text(v) for v in schema.allowed) if schema.allowed else None
    rules = ['ws ::= " "?']
    parts: list[str] = []
    if schema.decision_field:
        values = schema.allowed or ()
        rules.append(
            "decision ::= " + (" | ".join(_gbnf_text(json.dumps(v)) for v in values) if values else '"\\"" [^"]* "\\""')
        )
        parts.append(f'{_gbnf_text(json.dumps(schema.decision_field))} ws ":" ws decision')
    if schema.rating_field:
        low, high = schema.low, schema.high
        if low.is_integer() and high.is_integer() and high - low <= 1000:
            numbers = [str(n) for n in range(int(low), int(high) + 1)]
            rules.append("rating ::= " + " | ".join(_gbnf_text(n) for n in sorted(numbers, key=lambda n: -len(n))))
        else:
            rules.append('rating ::= "-"? [0-9]+ ("." [0-9]+)?')
        parts.append(f'{_gbnf_text(json.dumps(schema.rating_field))} ws ":" ws rating')
    body = ' ws "," ws '.join(parts)
    return "\n".join([f'root ::= "{{" ws {body} ws "}}"', *rules])


def _gbnf_text(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
