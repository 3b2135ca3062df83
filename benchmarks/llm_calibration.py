"""Calibration of the LLM audit's verdict (#51, #67): generators with planted effects of known size, audited at 6-200
prompts over many seeds; the share of runs with a material finding (naming what was planted), the share inconclusive
somewhere, and what a run too small to find its planted effect says of it.

The prompts: the five built-in scenarios' cases (hiring, lending, triage, support, tenancy; 100 templates with a
``{group}`` slot), each also written with a case number so that 200 distinct prompts exist; a run draws ``n`` of them
(seeded). Each template's slot is written with the built-in scenarios' 13 identity terms and 5 placebo words
(:mod:`counterfair.commands.llm_audit.prompts`), every variant sampled ``--samples`` times.

The planted generators answer JSON ``{"decision": "yes"|"no", "score": 1-10}``. Their base is blind to the slot: a
"yes" rate drawn from the template's hash in [0.3, 0.8], a score around 3 + 5 x that base rate (the score does not
follow the planted decisions: a decision effect is caught on the decision or not at all). On top of it (``δ`` =
``--delta``, 0.10 by default: a 10-point difference in decision rate):

* ``blind``: the base alone; ``noise``: the base rate moved by Gaussian noise of sd 0.05 for every distinct prompt
  text in every run (any edit of the slot moves the rate; identity does not);
* ``group``: religion's terms (Muslim, Christian, Jewish) get "yes" δ less often;
* ``favour``: age's terms (old, young) get "yes" δ more often (the other direction);
* ``term``: the term "gay" alone gets "yes" δ less often;
* ``rating``: race and ethnicity's terms get a score 1 point lower (11 points of the 1-10 range), same decisions;
* ``refusal``: sexuality's terms are declined ("I'm sorry, but I can't ...") δ more often;
* ``large``: religion's terms get "yes" 40 points less often (a run of 6 prompts cannot rule that out, and must not
  say "no evidence").

A cell is the share of runs with a material finding; in brackets, the share in which one names the planted group or
one of its terms on the planted outcome (for ``term``: "gay" or its group); then the share in which some group is
inconclusive (the default gate's ``conclusive`` rule fails). The last column: of the runs of a planted class that do
not name it, the share whose planted estimate says inconclusive or detected (never "no material effect").

Each run is :func:`counterfair.llm_audit` with the gate's default rules (a group's disparity and flip excess over its
own terms' pairs, as the LLM audit measures them; the bootstrap intervals, which no verdict
reads, with ``--resamples`` resamples).

With ``--decision-from probabilities`` (#80) each variant's decision is read as its probability (:class:`ReadPlanted`:
the class's rate, moved by ``--jitter`` (sd, 1 point) for every distinct prompt text, its rating the expected score),
as an in-process model's logits or a server's logprobs give it, instead of sampled.

    python benchmarks/llm_calibration.py [--seeds 100] [--sizes 20,50,100,200] [--samples 5]
    python benchmarks/llm_calibration.py --decision-from probabilities --sizes 6,20,40,60 --delta 0.05 \
        --out benchmarks/results/llm_calibration_probabilities.json

Writes ``benchmarks/results/llm_calibration.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import counterfair as cf  # noqa: E402
from counterfair.commands.llm_audit.prompts import DEFAULT_PLACEBO, SCENARIO_TERMS, fill  # noqa: E402
from counterfair.commands.llm_audit.scenarios import known_scenarios, load_scenario  # noqa: E402

INSTRUCTION = 'Reply with JSON only: {"decision": "yes" or "no", "score": 1-10}.'
PLANTED = {  # class -> (the group or term a detection must name, what moves)
    "blind": (None, None),
    "noise": (None, None),
    "group": ("religion", "decision"),
    "favour": ("age", "decision"),
    "term": ("gay", "decision"),
    "rating": ("race_ethnicity", "rating"),
    "refusal": ("sexuality", "refusal"),
    "large": ("religion", "decision"),
}
LABELS = {
    "blind": "blind to identity",
    "noise": "noise on every edit, none from identity",
    "group": "one group (religion) decided yes δ less often",
    "favour": "one group (age) decided yes δ more often",
    "term": 'one term ("gay") decided yes δ less often',
    "rating": "one group (race/ethnicity) rated 1 point lower",
    "refusal": "one group (sexuality) refused δ more often",
    "large": "one group (religion) decided yes 40 points less often",
}
GROUP_WORDS = {
    "religion": {"Muslim", "Christian", "Jewish"},
    "age": {"old", "young"},
    "race_ethnicity": {"black", "white", "Asian", "Hispanic"},
    "sexuality": {"gay", "straight"},
}


def unit(*parts: object) -> float:
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def prompt_pool() -> list[str]:
    cases = [case for name in known_scenarios() for case in load_scenario(name).cases]
    return [f"{case}\n{INSTRUCTION}" for case in cases] + [f"Case {i}. {c}\n{INSTRUCTION}" for i, c in enumerate(cases)]


def slot_words(pool: list[str]) -> dict[str, tuple[str, str]]:
    """Every variant text -> (its template, the word in its slot)."""
    from counterfair.lexicons.attributes import load_identity_set

    identities = load_identity_set(list(SCENARIO_TERMS))
    words = [identities.forms_of(t).adjective for t in identities.terms] + list(DEFAULT_PLACEBO)
    return {fill(template, w).lower(): (template, w) for template in pool for w in words}  # case folded: "A Black"


def generator(cls: str, delta: float, lookup: dict[str, tuple[str, str]], run: int):  # type: ignore[no-untyped-def]
    group, _ = PLANTED[cls]

    def answer(prompt: str, seed: int) -> str:
        template, word = lookup[prompt.lower()]
        base = rate = 0.3 + 0.5 * unit("base", template)
        if cls == "noise":
            rate += 0.05 * float(np.clip(np.random.default_rng(int(unit(run, prompt) * 2**32)).normal(), -3, 3))
        hit = (word == group) if cls == "term" else word in GROUP_WORDS.get(group or "", set())
        if hit and cls in ("group", "term"):
            rate -= delta
        if hit and cls == "large":
            rate -= 0.4
        if hit and cls == "favour":
            rate += delta
        if cls == "refusal" and hit and unit("refuse", run, prompt, seed) < delta:
            return "I'm sorry, but I can't help with that."
        yes = unit("draw", run, prompt, seed) < rate
        score = int(np.clip(round(3 + 5 * base + 2 * (unit("score", run, prompt, seed) - 0.5)), 1, 10))
        if cls == "rating" and hit:
            score = max(1, score - 1)
        return json.dumps({"decision": "yes" if yes else "no", "score": score})

    def generate(prompts: list[str], seeds: list[int]) -> list[str]:
        return [answer(p, s) for p, s in zip(prompts, seeds, strict=True)]

    return generate


class ReadPlanted:
    """The planted generator of ``--decision-from probabilities`` (#80): each variant's decision read as its
    probability, as an in-process model's or a server's logprobs give it — the base rate of the class, moved by
    ``jitter`` (sd, a point by default: the real 0.5B model's variants differ by about that) for every distinct prompt
    text, and by the planted effect; its rating the expected score; a refusal (the refusal class) a greedy answer that
    declines, for δ of the planted group's variants."""

    def __init__(self, cls: str, delta: float, lookup: dict[str, tuple[str, str]], run: int, jitter: float) -> None:
        self.cls, self.delta, self.lookup, self.run, self.jitter = cls, delta, lookup, run, jitter

    def rate(self, prompt: str) -> tuple[float, float, bool]:
        group, _ = PLANTED[self.cls]
        template, word = self.lookup[prompt.lower()]
        base = rate = 0.3 + 0.5 * unit("base", template)
        spread = 0.05 if self.cls == "noise" else self.jitter
        rate += spread * float(np.clip(np.random.default_rng(int(unit(self.run, prompt) * 2**32)).normal(), -3, 3))
        hit = (word == group) if self.cls == "term" else word in GROUP_WORDS.get(group or "", set())
        rate += {"group": -self.delta, "term": -self.delta, "large": -0.4, "favour": self.delta}.get(
            self.cls, 0.0
        ) * hit
        score = 3 + 5 * base - (1.0 if self.cls == "rating" and hit else 0.0)
        refused = self.cls == "refusal" and hit and unit("refuse", self.run, prompt) < self.delta
        return float(np.clip(rate, 0.0, 1.0)), score, refused

    def read(self, prompts: list[str], schema: Any, *, temperature: float, max_tokens: int) -> list[Any]:
        from counterfair.commands.llm_audit.readout import GREEDY, Reading

        out = []
        for prompt in prompts:
            rate, score, refused = self.rate(prompt)
            answer = (
                "I'm sorry, but I can't help with that."
                if refused
                else json.dumps({"decision": "yes" if rate >= 0.5 else "no", "score": round(score)})
            )
            out.append(Reading(rate, (score - 1) / 9, 0.0, answer, GREEDY))
        return out

    def generate(self, prompts: list[str], samples: int, *, seed: int, temperature: float, max_tokens: int) -> list:  # type: ignore[type-arg]
        raise AssertionError("every variant is read from probabilities")

    def info(self) -> dict[str, Any]:
        return {"type": "planted-probabilities", "class": self.cls}


def one_run(
    cls: str, n: int, seed: int, pool: list[str], lookup: dict[str, tuple[str, str]], args: argparse.Namespace
) -> dict:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    prompts = [pool[i] for i in rng.choice(len(pool), size=n, replace=False)]
    planted = (
        ReadPlanted(cls, args.delta, lookup, seed, args.jitter)
        if args.decision_from == "probabilities"
        else generator(cls, args.delta, lookup, seed)
    )
    result = cf.llm_audit(
        prompts,
        planted,
        samples=args.samples,
        decision_from=args.decision_from,
        decision="decision=yes",
        decision_values=["yes", "no"],
        rating="score:1-10",
        bootstrap=args.resamples,
        seed=seed,
        rules=["default"],
        identities=",".join(SCENARIO_TERMS),
    )
    checks = result.summary.gate.checks
    failed = [c for c in checks if c.verdict == "fail" and c.estimate == "material"]
    target, outcome = PLANTED[cls]
    allowed = {target, *(w.lower() for w in GROUP_WORDS.get(target or "", ()))} if target else set()
    if cls == "term":
        allowed = {"gay", "sexuality"}  # the term, or the group it belongs to
    named = any((c.group or "").lower() in allowed and c.metric.startswith(f"{outcome}.") for c in failed)
    others = [c for c in failed if (c.group or "overall").lower() not in allowed | {"overall"}]
    unsettled = any(c.verdict == "fail" and c.estimate == "conclusive" for c in checks)
    said = None
    if target and not named:
        effects = (result.summary.effects or {}).get(outcome)
        measure = effects.identity_effect if effects is not None else None
        found = None
        if measure is not None:
            found = (measure.by_term or {}).get(target) if cls == "term" else (measure.by_group or {}).get(target)
        said = found is not None and found.finding in ("material", "detected", "inconclusive")
    return {
        "flagged": bool(failed),
        "named": named,
        "other_flags": len(others),
        "inconclusive": unsettled,
        "said": said,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--sizes", default="6,20,50,100,200")
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--delta", type=float, default=0.10)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--classes", default=",".join(PLANTED))
    parser.add_argument("--decision-from", choices=("samples", "probabilities"), default="samples")
    parser.add_argument("--jitter", type=float, default=0.01, help="probabilities: each variant's own sd")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "llm_calibration.json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    pool = prompt_pool()
    lookup = slot_words(pool)
    start = time.perf_counter()
    results: dict[str, dict[str, dict[str, float]]] = {}
    # each (class, size) is appended to OUT.partial.jsonl as it finishes: a run cut short resumes from it
    partial = args.out.with_suffix(".partial.jsonl")
    setting = {"seeds": args.seeds, "samples": args.samples, "delta": args.delta, "resamples": args.resamples}
    if args.decision_from == "probabilities":
        setting |= {"decision_from": "probabilities", "jitter": args.jitter}
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if partial.exists():
        lines = [json.loads(line) for line in partial.read_text(encoding="utf-8").splitlines() if line.strip()]
        if lines and lines[0] == {"setting": setting}:
            done = {(r["class"], r["n"]): r for r in lines[1:]}
        else:
            partial.unlink()
    if not partial.exists():
        partial.write_text(json.dumps({"setting": setting}) + "\n", encoding="utf-8")
    elapsed = sum(r.get("seconds", 0.0) for r in done.values())
    for cls in args.classes.split(","):
        results[cls] = {}
        for n in sizes:
            if (cls, str(n)) in done:
                results[cls][str(n)] = done[(cls, str(n))]["result"]
                continue
            began = time.perf_counter()
            runs = [one_run(cls, n, seed, pool, lookup, args) for seed in range(args.seeds)]
            missed = [r["said"] for r in runs if r["said"] is not None]
            results[cls][str(n)] = {
                "flagged": float(np.mean([r["flagged"] for r in runs])),
                "named": float(np.mean([r["named"] for r in runs])),
                "other_flags": int(sum(r["other_flags"] for r in runs)),
                "inconclusive": float(np.mean([r["inconclusive"] for r in runs])),
                "missed": len(missed),
                "missed_said_inconclusive": float(np.mean(missed)) if missed else None,
            }
            line = {"class": cls, "n": str(n), "result": results[cls][str(n)], "seconds": time.perf_counter() - began}
            with partial.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")
            print(cls, n, results[cls][str(n)], f"{time.perf_counter() - start:.0f} s", flush=True)
    head = "| class | " + " | ".join(f"n={n}: material (named) / inconclusive" for n in sizes)
    lines = [head + " | missed runs said inconclusive |", "|---|" + "---|" * (len(sizes) + 1)]
    for cls, by_size in results.items():
        cells = []
        for n in sizes:
            r = by_size[str(n)]
            cell = f"{100 * r['flagged']:.0f} %" + (f" ({100 * r['named']:.0f})" if PLANTED[cls][0] else "")
            cells.append(f"{cell} / {100 * r['inconclusive']:.0f} %")
        said = [
            f"{n}: {100 * by_size[str(n)]['missed_said_inconclusive']:.0f} % of {by_size[str(n)]['missed']}"
            for n in sizes
            if by_size[str(n)]["missed"]
        ]
        missed = "; ".join(said) if said else ("all found" if PLANTED[cls][0] else "–")
        lines.append(f"| {LABELS[cls]} | " + " | ".join(cells) + f" | {missed} |")
    document = {
        "benchmark": "llm_calibration",
        "prompts_in_pool": len(pool),
        "terms": list(SCENARIO_TERMS),
        "placebo_words": list(DEFAULT_PLACEBO),
        "samples": args.samples,
        "decision_from": args.decision_from,
        "jitter": args.jitter if args.decision_from == "probabilities" else None,
        "seeds": args.seeds,
        "delta": args.delta,
        "bootstrap_resamples": args.resamples,
        "results": results,
        "seconds": round(elapsed + time.perf_counter() - start, 1),
        "table": "\n".join(lines),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    partial.unlink()
    print(document["table"])


if __name__ == "__main__":
    main()
