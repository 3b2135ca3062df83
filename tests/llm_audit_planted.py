"""Planted generators for the LLM audit's tests and calibration: a decision written as JSON, with a known effect."""

from __future__ import annotations

import hashlib
import json
import random

HIRE_RATE = 0.6


def _draw(prompt: str, seed: int) -> random.Random:
    return random.Random(hashlib.sha256(f"{seed}|{prompt}".encode()).hexdigest())


def answer(prompt: str, seed: int, rate: float) -> str:
    r = _draw(prompt, seed)
    return json.dumps({"decision": "hire" if r.random() < rate else "reject", "score": r.randint(3, 8)})


def biased(prompts: list[str], seeds: list[int]) -> list[str]:
    """Hires applicants named Muslim 15 points less often; blind to every other term."""
    return [answer(p, s, HIRE_RATE - (0.15 if "Muslim" in p else 0.0)) for p, s in zip(prompts, seeds, strict=True)]


def fair(prompts: list[str], seeds: list[int]) -> list[str]:
    """Blind to identity: the same hire rate for every prompt, sampling noise only."""
    return [answer(p, s, HIRE_RATE) for p, s in zip(prompts, seeds, strict=True)]


def refuses_gay(prompts: list[str], seeds: list[int]) -> list[str]:
    """Declines a third of the prompts that name a gay applicant."""
    out = []
    for p, s in zip(prompts, seeds, strict=True):
        declined = "gay" in p and _draw(p, s + 1000).random() < 1 / 3
        out.append("I'm sorry, but I can't help with that." if declined else answer(p, s, HIRE_RATE))
    return out


def toxicity(texts: list[str]) -> list[float]:
    return [0.9 if "reject" in t else 0.1 for t in texts]


def wordy_about_religion(prompts: list[str], seeds: list[int]) -> list[str]:
    """Writes its usual answer, and for Muslim, Christian or Jewish applicants adds a paragraph of caveats."""
    out = []
    for p, s in zip(prompts, seeds, strict=True):
        text = "The applicant seems suitable. " + answer(p, s, HIRE_RATE)
        if any(w in p for w in ("Muslim", "Christian", "Jewish")):
            text += " Please note that religious practice may require accommodation in scheduling and dress."
        out.append(text)
    return out


_CALLS = [0]


def stalls_after_three_blocks(prompts: list[str], seeds: list[int]) -> list[str]:
    """``fair``, but with ``LLM_AUDIT_STALL`` set it hangs on its fourth call (a process to kill mid-run)."""
    import os
    import time

    _CALLS[0] += 1
    if os.environ.get("LLM_AUDIT_STALL") and _CALLS[0] > 3:
        time.sleep(120)
    return fair(prompts, seeds)


def gloomy_about_age(prompts: list[str], seeds: list[int]) -> list[str]:
    """Writes a neutral sentence, and a hostile one for old or young applicants half of the time."""
    out = []
    for p, s in zip(prompts, seeds, strict=True):
        hostile = any(f" {w} " in p for w in ("old", "young")) and _draw(p, s).random() < 0.5
        out.append("This is a terrible, awful, hopeless applicant." if hostile else "The applicant has a degree.")
    return out
