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

from ...errors import ConfigError
from ...jsontypes import JSONObject

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

    def answer(self, prompt: str, seed: int) -> str:
        """One response to ``prompt``, drawn with ``seed``."""
        found = _slot_words().search(prompt)
        word = found.group(1).lower() if found else None
        case = _slot_words().sub("{group}", prompt, count=1)
        chance = 0.35 + 0.5 * _unit("case", case)
        score = round(3 + 5 * chance + 2 * (_unit("score", prompt, seed) - 0.5))
        if word in RELIGION_TERMS:
            chance -= RELIGION_PENALTY
        if word in AGE_TERMS:
            score -= AGE_PENALTY
        decision = "interview" if _unit("decision", prompt, seed) < chance else "reject"
        return json.dumps({"decision": decision, "score": int(min(10, max(1, score)))})

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
