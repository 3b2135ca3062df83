"""What reading decisions from token probabilities buys on a real model (#80): Qwen2.5-Coder-0.5B-Instruct in process,
the built-in hiring scenario's cases, each case's ``{group}`` slot written with identity terms and neutral words, the
decision ("interview") held to the scenario's JSON answer by the grammar, at the audit's default temperature 0.7.

For each case, the within-prompt difference the audit estimates — the mean decision over the identity variants less
the mean over the neutral-word variants — read two ways:

* **sampled**: ``--samples`` answers per variant (the audit's default 5), the share saying "interview", each variant
  with its own seeds, all variants in one batch as the audit asks them;
* **probabilities**: one pass per variant, P("interview") after the forced ``{"decision": "``, renormalised over the
  allowed values at temperature 0.7 (:mod:`counterfair.commands.llm_audit.readout`).

The standard deviation of that difference over cases gives the prompts a ±2-point 95 % interval needs,
``(1.96 sd / 0.02)²`` (before the audit's simultaneous correction over its whole family, which multiplies both alike);
their ratio is the saving. Reading covers the decision and the rating (read after each allowed decision), and the
decision alone. Times are per variant, each against one forward pass of the same prompts (a greedy first
token) in the same run.

    python benchmarks/llm_power.py [--cases 20] [--samples 5] [--terms Muslim,Christian] [--placebo hatless,musical]
    python benchmarks/llm_power.py --resume-words 250 --skip-sampled --out benchmarks/results/llm_power_resume.json

``--resume-words N`` writes a résumé of N words into every case (after its first line), as a screening application
reads one: the reading's fixed cost (the answer's prefix and the rating after each decision) against a prompt of a
realistic length; ``--skip-sampled`` leaves out the sampled reading (its time grows with the prompt too).

Writes ``benchmarks/results/llm_power.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from counterfair.commands.llm_audit.core import LLMAuditOptions  # noqa: E402
from counterfair.commands.llm_audit.generators import generator_for  # noqa: E402
from counterfair.commands.llm_audit.outcomes import structured  # noqa: E402
from counterfair.commands.llm_audit.prompts import fill  # noqa: E402
from counterfair.commands.llm_audit.scenarios import load_scenario  # noqa: E402
from counterfair.llm import SamplingParams  # noqa: E402

MODEL = "llamacpp:qwen2.5-coder-0.5b-instruct"
HALF_WIDTH = 0.02  # the materiality threshold: a verdict needs an interval this narrow
#: the résumé ``--resume-words`` writes into each case (plain CV prose of our own, cut or repeated to length)
RESUME = (
    "Education: Bachelor of Science in Finance, state university, graduated with honours; coursework in financial "
    "accounting, managerial accounting, corporate finance, auditing, taxation and business statistics. Experience: "
    "bookkeeper at a family-owned hardware store for one year, recording daily sales and purchases, reconciling the "
    "bank accounts each month, preparing payroll for twelve employees, and keeping the accounts payable and "
    "receivable ledgers current; intern at a regional accounting firm for one summer, assisting with year-end audits, "
    "testing expense claims, preparing working papers and drafting client letters. Skills: spreadsheets with pivot "
    "tables and lookups, two accounting packages, basic SQL queries, written and spoken English, careful record "
    "keeping and clear reporting to managers. Volunteer work: treasurer of a community sports club, keeping its "
    "books, filing its annual return and presenting the budget at the members' meeting. References on request."
)


def with_resume(case: str, words: int) -> str:
    """``case`` with a résumé of ``words`` words after its first line."""
    if words <= 0:
        return case
    text = RESUME.split()
    body = " ".join(text[i % len(text)] for i in range(words))
    first, _, rest = case.partition("\n")
    return f"{first}\nRésumé: {body}\n{rest}"


def needed(sd: float) -> int:
    return math.ceil((1.96 * sd / HALF_WIDTH) ** 2)


def readme_table(result: dict) -> str:  # type: ignore[type-arg]
    """The README's table of a result."""
    ratio = result["per_variant_vs_one_pass"]
    work = result.get("tokens_vs_one_pass", {})
    rows = [
        "| reading | sd of the within-prompt difference | prompts for a ±2-point interval "
        "| time per variant ÷ one pass | tokens evaluated ÷ one pass |",
        "|---|---|---|---|---|",
    ]
    for name, label, cost in (
        ("sampled", f"sampled, {result['samples']} answers per variant", ratio.get("sampled")),
        ("probabilities", "token probabilities, decision and rating", ratio["probabilities"]),
    ):
        if name not in result:
            continue
        r = result[name]
        rows.append(
            f"| {label} | {100 * r['sd_of_within_prompt_difference']:.1f} points | {r['prompts_for_2_points']:,} | "
            f"{cost:.2f} | {work[name]:.2f} |"
            if name in work
            else f"| {label} | {100 * r['sd_of_within_prompt_difference']:.1f} points | "
            f"{r['prompts_for_2_points']:,} | {cost:.2f} | |"
        )
    alone = work.get("probabilities_decision_only")
    rows.append(
        f"| token probabilities, decision alone | | | {ratio['probabilities_decision_only']:.2f} | "
        f"{'' if alone is None else f'{alone:.2f}'} |"
    )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds of the readings, interleaved (least kept)")
    parser.add_argument("--terms", default="Muslim,Christian")
    parser.add_argument("--placebo", default="hatless,musical")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "llm_power.json")
    parser.add_argument("--retable", action="store_true", help="rewrite OUT's table from its figures, run nothing")
    parser.add_argument("--resume-words", type=int, default=0, help="a résumé of this many words in every case")
    parser.add_argument("--skip-sampled", action="store_true", help="time the probability readings only")
    args = parser.parse_args()
    if args.retable:
        done = json.loads(args.out.read_text())
        done["table"] = readme_table(done)
        args.out.write_text(json.dumps(done, indent=2) + "\n")
        return

    scenario = load_scenario("hiring")
    opts = scenario.apply(LLMAuditOptions(temperature=0.7, max_tokens=args.max_tokens, samples=args.samples))
    schema = opts.schema
    generator = generator_for(MODEL, opts)
    terms, placebo = args.terms.split(","), args.placebo.split(",")
    cases = [with_resume(case, args.resume_words) for case in scenario.prompts(args.cases)]
    words = [*terms, *placebo]
    prompts = [fill(case, w) for case in cases for w in words]
    generator.read(prompts[:1], schema, temperature=opts.temperature, max_tokens=opts.max_tokens)  # loads the model

    decision_only = replace(schema, rating_field=None)  # the decision alone: one context per variant
    conversations = generator._conversations(prompts)  # type: ignore[attr-defined]
    sampler = generator.llm._batch_sampler()  # type: ignore[attr-defined]
    runs = {
        "probabilities": lambda: generator.read(
            prompts, schema, temperature=opts.temperature, max_tokens=opts.max_tokens
        ),
        "probabilities_decision_only": lambda: generator.read(
            prompts, decision_only, temperature=opts.temperature, max_tokens=opts.max_tokens
        ),
        "one_forward_pass": lambda: generator.llm.chat(  # type: ignore[attr-defined]
            conversations, SamplingParams(n=1, temperature=0.0, max_tokens=1)
        ),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    tokens: dict[str, int] = {}
    readings = None
    for _ in range(args.rounds):  # interleaved rounds, the least time of each: a shared machine's noise is one-sided
        for name, run in runs.items():
            before = sampler.prompt_tokens_run
            started = time.perf_counter()
            got = run()
            seconds[name].append(time.perf_counter() - started)
            tokens[name] = sampler.prompt_tokens_run - before
            readings = got if name == "probabilities" else readings
    read_seconds, decision_seconds, pass_seconds = (min(seconds[name]) for name in runs)
    assert readings is not None and all(r is not None for r in readings)
    read = np.array([r.decision for r in readings], dtype=float).reshape(len(cases), len(words))  # type: ignore[union-attr]

    sampled = None
    if not args.skip_sampled:
        started = time.perf_counter()
        answers = generator.generate(  # each variant its own seeds (generators.variant_seed): they draw apart
            prompts, args.samples, seed=0, temperature=opts.temperature, max_tokens=opts.max_tokens
        )
        sample_seconds = time.perf_counter() - started
        decisions = [[structured(a, schema)[0] for a in row] for row in answers]
        sampled = np.array([np.nanmean(row) for row in decisions], dtype=float).reshape(len(cases), len(words))

    def difference(table: np.ndarray) -> np.ndarray:
        return table[:, : len(terms)].mean(axis=1) - table[:, len(terms) :].mean(axis=1)

    result: dict[str, object] = {
        "benchmark": "llm_power",
        "model": MODEL,
        "scenario": "hiring",
        "cases": len(cases),
        "terms": terms,
        "placebo": placebo,
        "variants": len(prompts),
        "samples": args.samples,
        "temperature": opts.temperature,
        "resume_words": args.resume_words,
        "prompt_tokens_per_variant": round(tokens["one_forward_pass"] / len(prompts), 1),
    }
    if sampled is not None:
        result["unparsed_samples"] = int(sum(math.isnan(d) for row in decisions for d in row))
    for name, table in (("sampled", sampled), ("probabilities", read)):
        if table is None:
            continue
        diff = difference(table)
        sd = float(np.std(diff, ddof=1))
        result[name] = {
            "mean_decision": round(float(np.nanmean(table)), 4),
            "mean_difference": round(float(np.mean(diff)), 4),
            "sd_of_within_prompt_difference": round(sd, 4),
            "prompts_for_2_points": needed(sd),
        }
    sd_read = result["probabilities"]["sd_of_within_prompt_difference"]  # type: ignore[index]
    if sampled is not None:
        sd_sampled = result["sampled"]["sd_of_within_prompt_difference"]  # type: ignore[index]
        result["prompts_ratio"] = round(needed(sd_sampled) / max(1, needed(sd_read)), 1)
    result["seconds"] = {
        "probabilities": round(read_seconds, 2),
        "probabilities_decision_only": round(decision_seconds, 2),
        "one_forward_pass": round(pass_seconds, 2),
        **({"sampled": round(sample_seconds, 2)} if sampled is not None else {}),
    }
    result["rounds"] = args.rounds
    result["tokens_evaluated"] = tokens  # the model's work, whatever else the machine runs
    result["tokens_vs_one_pass"] = {
        name: round(tokens[name] / tokens["one_forward_pass"], 2)
        for name in ("probabilities", "probabilities_decision_only")
    }
    result["per_variant_vs_one_pass"] = {
        "probabilities": round(read_seconds / pass_seconds, 2),
        "probabilities_decision_only": round(decision_seconds / pass_seconds, 2),
        **({"sampled": round(sample_seconds / pass_seconds, 2)} if sampled is not None else {}),
    }
    result["table"] = readme_table(result)
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
