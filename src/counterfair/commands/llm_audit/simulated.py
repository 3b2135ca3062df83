"""A simulated LLM application with planted, documented behaviour (``simulated:hiring``): the generator of
``counterfair llm-audit --demo``, so that the audit can be seen end to end on the core install in seconds, with a
finding whose truth is known.

The simulated CV screener answers every prompt with JSON, ``{"decision": "interview" | "reject", "score": 1-10}``:

* **its base** is blind to identity: a case's chance of "interview" is drawn from the case's text (the prompt with the
  word in its identity slot taken out) in [0.35, 0.85], its score about ``3 + 5 x`` that chance, give or take 1;
* **planted:** an applicant called Muslim or Jewish is invited to interview :data:`RELIGION_PENALTY` (30 points)
  less often, and an old applicant's score is :data:`AGE_PENALTY` (2 points) lower, same decisions;
* nothing else: every other identity term and every placebo word leaves the answers as they are.

An audit of its 20 hiring cases should therefore find a material decision effect for religion (Muslim, Jewish; not
Christian) and a material rating effect for age ("old"), and no material effect elsewhere. Each answer is a seeded
draw from the prompt and the sample's seed: the same run gives the same answers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ...jsontypes import JSONObject

if TYPE_CHECKING:
    from .outcomes import Schema
    from .readout import Reading

#: how much less often a Muslim or Jewish applicant is invited to interview (a share of the decisions)
RELIGION_PENALTY = 0.30
#: how many points lower an old applicant's score is (of the 1-10 range)
AGE_PENALTY = 2
RELIGION_TERMS = ("muslim", "jewish")
AGE_TERMS = ("old",)
APPLICATIONS = ("hiring",)


def _unit(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts`` (the same on every machine and run)."""
    digest = hashlib.sha256("\0".join(map(str, parts)).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@cache
def _slot_words() -> re.Pattern[str]:
    """Every word the built-in identity set, the scenarios' terms and the placebo words write into a slot, longest
    first, with the article before it: what is taken out of a prompt to find its case."""
    from ...lexicons.attributes import load_identity_set
    from .prompts import DEFAULT_PLACEBO, SCENARIO_TERMS

    words: set[str] = set(DEFAULT_PLACEBO)
    for spec in (None, list(SCENARIO_TERMS)):
        identities = load_identity_set(spec)
        for term in identities.terms:
            forms = identities.forms_of(term)
            words |= {forms.adjective, forms.noun, forms.plural, *forms.also}
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b(?:an?\s+)?({alternatives})\b", re.IGNORECASE)


class SimulatedApplication:
    """The built-in simulated application named by ``simulated:NAME`` (see the module's docstring)."""

    def __init__(self, name: str = "hiring") -> None:
        if name not in APPLICATIONS:
            raise ConfigError(
                f"generator simulated:{name}: no such simulated application; choose one of "
                + ", ".join(f"simulated:{a}" for a in APPLICATIONS)
            )
        self.name = name

    @staticmethod
    def _case(prompt: str) -> tuple[str | None, float]:
        """The word in the prompt's identity slot and the case's base chance of "interview"."""
        found = _slot_words().search(prompt)
        word = found.group(1).lower() if found else None
        return word, 0.35 + 0.5 * _unit("case", _slot_words().sub("{group}", prompt, count=1))

    def answer(self, prompt: str, seed: int) -> str:
        """One response to ``prompt``, drawn with ``seed``."""
        word, chance = self._case(prompt)
        score = round(3 + 5 * chance + 2 * (_unit("score", prompt, seed) - 0.5))
        if word in RELIGION_TERMS:
            chance -= RELIGION_PENALTY
        if word in AGE_TERMS:
            score -= AGE_PENALTY
        decision = "interview" if _unit("decision", prompt, seed) < chance else "reject"
        return json.dumps({"decision": decision, "score": int(min(10, max(1, score)))})

    def odds(self, prompt: str) -> tuple[dict[str, float], dict[str, float]]:
        """The probabilities its answers to ``prompt`` follow: of each decision, and of each score (the score is
        ``3 + 5 x chance`` plus a uniform draw in [-1, 1), rounded, less the age penalty, held to 1-10)."""
        word, chance = self._case(prompt)
        centre = 3 + 5 * chance - (AGE_PENALTY if word in AGE_TERMS else 0)
        scores: dict[str, float] = {}
        for n in range(-10, 21):  # the share of [centre - 1, centre + 1) that rounds to n, held to 1-10
            share = max(0.0, min(n + 0.5, centre + 1) - max(n - 0.5, centre - 1)) / 2
            if share:
                key = str(min(10, max(1, n)))
                scores[key] = scores.get(key, 0.0) + share
        interview = chance - (RELIGION_PENALTY if word in RELIGION_TERMS else 0.0)
        return {"interview": interview, "reject": 1 - interview}, scores

    def read(
        self, prompts: Sequence[str], schema: Schema, *, temperature: float, max_tokens: int
    ) -> list[Reading | None] | None:
        """Its decision and score read from the probabilities its answers follow (the demo's probability path);
        None for a schema that asks for other fields than its ``decision`` and ``score``."""
        from .readout import Reading, decision_share, greedy_answer, most_likely, rating_share

        asked = {f.lower() for f in (schema.decision_field, schema.rating_field) if f}
        if not asked <= {"decision", "score"}:
            return None
        out: list[Reading | None] = []
        for prompt in prompts:
            decisions, scores = self.odds(prompt)
            kept = {v: decisions.get(v, 0.0) for v in schema.allowed} if schema.decision_field else {}
            total = sum(kept.values())
            decision = decision_share({v: p / total for v, p in kept.items()}, schema) if total else None
            rating = rating_share(scores, schema) if schema.rating_field else None
            other = 1 - total if schema.decision_field else 0.0
            answer = greedy_answer(schema, most_likely(kept), most_likely(scores))
            out.append(Reading(decision, rating, other, answer, "probabilities (the application's own)"))
        return out

    def generate(
        self, prompts: Sequence[str], samples: int, *, seed: int, temperature: float, max_tokens: int
    ) -> list[list[str]]:
        return [[self.answer(p, seed + i) for i in range(samples)] for p in prompts]

    def info(self) -> JSONObject:
        return {
            "type": "simulated",
            "application": self.name,
            "planted": {
                "decision": f"Muslim, Jewish: invited {RELIGION_PENALTY:.0%} less often",
                "rating": f"old: score {AGE_PENALTY} points lower",
            },
        }
