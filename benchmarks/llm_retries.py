"""When is an LLM rewrite worth sampling again? A replay of a finished audit's LLM candidates (#50).

An audit (or generate run) made with ``--retry-nearness 0`` samples every text without a passing candidate again, up to
``--max-attempts``, and keeps every candidate with its attempt and filter scores. This script replays those candidates
under other retry rules, without calling the LLM again: a rule stops sampling a text after attempt ``a`` when

* its nearest candidate so far came less than ``nearness`` near to passing every filter
  (:meth:`counterfair.editors.filters.Verdict.nearness`: the smallest of its scores over their thresholds), or
* (``patience`` k) its nearness has not grown in the last k attempts.

For each rule: the samples it would not have drawn, and the texts that passed in the full run but would have been
given up before their passing attempt (lost counterfactuals). The rule is chosen on two attributes (``tune``: islam,
judaism) and checked on the other two (``check``: lgbq, transgender).

    python benchmarks/audit_speed.py ... # or: counterfair audit TEXTS --methods llm --retry-nearness 0 --out RUN
    python benchmarks/llm_retries.py RUN

Results: benchmarks/results/llm_retries.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.commands.generate.options import RETRY_NEARNESS, RETRY_PATIENCE, RetryRule
from counterfair.editors.filters import FilterConfig, Verdict

RESULTS = Path(__file__).resolve().parent / "results" / "llm_retries.json"
TUNE, CHECK = ("islam", "judaism"), ("lgbq", "transgender")
RULES = [(n, p) for n in (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95) for p in (None, 1, 2)]


def _float(value: Any) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


def texts_of(run: Path) -> list[dict[str, Any]]:
    """Per LLM input of the run: its attribute, the attempt it passed at (None: never), the attempts it used, and its
    nearness after each attempt (the running maximum over its candidates)."""
    out = []
    for folder in sorted((run / "generate").glob("*")):
        if not (folder / "candidates.csv").exists():
            continue
        cands = pd.read_csv(folder / "candidates.csv", keep_default_na=True)
        cfs = pd.read_csv(folder / "counterfactuals.csv")
        cands, cfs = cands[cands["method"] == "llm"], cfs[cfs["method"] == "llm"]
        config = FilterConfig()
        for cf in cfs.itertuples():
            mine = cands[cands["input_id"].astype(str) == str(cf.input_id)]
            if mine.empty:
                continue
            near, running = [], 0.0
            for _, attempt in mine.groupby("attempt", sort=True):
                for c in attempt.itertuples():
                    status = str(c.status)
                    reasons = [] if status == "ok" else status.removeprefix("filtered:").split("+")
                    verdict = Verdict(reasons, _float(c.bleu), _float(c.bertscore_f1), _float(c.attribute_prob))
                    running = max(running, verdict.nearness(config))
                near.append(running)
            out.append(
                {
                    "attribute": folder.name,
                    "passed_at": int(cf.attempts) if cf.status == "ok" else None,
                    "attempts": int(cf.attempts),
                    "samples": len(mine),
                    "nearness": [round(n, 4) for n in near],
                }
            )
    return out


def replay(texts: list[dict[str, Any]], nearness: float, patience: int | None) -> dict[str, Any]:
    drawn = kept = lost = 0
    per_attempt = max((t["samples"] / t["attempts"] for t in texts if t["attempts"]), default=16)
    for t in texts:
        rule, stop = RetryRule(nearness, patience), None  # the rule generation applies, fed the recorded nearness
        for a in range(1, t["attempts"] + 1):
            if t["passed_at"] is not None and t["passed_at"] <= a:
                break
            rule.saw(0, a, t["nearness"][a - 1])
            if not rule.again(0, a):
                stop = a
                break
        drawn += t["samples"]
        kept += t["samples"] if stop is None else round(per_attempt * stop)
        lost += stop is not None and t["passed_at"] is not None
    with_cf = sum(t["passed_at"] is not None for t in texts)
    return {
        "retry_nearness": nearness,
        "patience": patience,
        "samples": kept,
        "samples_saved_share": round(1 - kept / drawn, 4) if drawn else None,
        "inputs": len(texts),
        "with_counterfactual": with_cf - lost,
        "lost": lost,
    }


def per_attribute(texts: list[dict[str, Any]]) -> dict[str, Any]:
    """The default rule per attribute: counterfactuals lost against one standard error of the count with one (the
    issue's bar: the share of inputs with a counterfactual within one standard error of before's)."""
    out = {}
    for attribute in sorted({t["attribute"] for t in texts}):
        mine = [t for t in texts if t["attribute"] == attribute]
        row = replay(mine, RETRY_NEARNESS, RETRY_PATIENCE)
        n, before = len(mine), sum(t["passed_at"] is not None for t in mine)
        se_texts = math.sqrt(before / n * (1 - before / n) / n) * n
        out[attribute] = {**row, "with_counterfactual_before": before, "one_se_in_texts": round(se_texts, 2)}
        out[attribute]["within_one_se"] = row["lost"] <= se_texts
    return out


SHOWN = [(0.0, None), (0.8, None), (0.8, 1), (0.8, 2), (0.9, 2)]


def _table(splits: dict[str, list[dict[str, Any]]]) -> str:
    """The README's table: for a few rules, each split's samples not drawn and counterfactuals lost."""
    lines = [
        "| retry rule | tune: samples saved, lost | check: samples saved, lost | all: saved, with a counterfactual |",
        "|---|---|---|---|",
    ]
    for nearness, patience in SHOWN:
        name = "every text, up to 5 attempts (before)" if nearness == 0 else f"nearness ≥ {nearness:g}"
        if nearness and patience:
            name += f", growing within {patience}"
        cells = []
        for split in ("tune", "check", "all"):
            row = next(r for r in splits[split] if r["retry_nearness"] == nearness and r["patience"] == patience)
            tail = f"{row['lost']} lost" if split != "all" else f"{row['with_counterfactual']} of {row['inputs']}"
            cells.append(f"{row['samples_saved_share']:.0%}, {tail}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="an audit or generate run made with --retry-nearness 0")
    args = parser.parse_args()
    texts = texts_of(args.run)
    splits = {
        "tune": [t for t in texts if t["attribute"] in TUNE],
        "check": [t for t in texts if t["attribute"] in CHECK],
        "all": texts,
    }
    result: dict[str, Any] = {"benchmark": "llm_retries", "run": str(args.run), "inputs": len(texts), "splits": {}}
    for name, part in splits.items():
        rows = [replay(part, n, p) for n, p in RULES]
        result["splits"][name] = rows
        print(f"\n{name}: {len(part)} inputs, {sum(t['samples'] for t in part)} samples drawn")
        print(pd.DataFrame(rows).to_string(index=False))
    passed = [t["passed_at"] for t in texts if t["passed_at"] is not None]
    result["passed_at_attempt"] = {str(a): passed.count(a) for a in sorted(set(passed))}
    result["never_passed"] = sum(t["passed_at"] is None for t in texts)
    result["never_passed_samples_share"] = round(
        sum(t["samples"] for t in texts if t["passed_at"] is None) / max(1, sum(t["samples"] for t in texts)), 4
    )
    result["table"] = _table(result["splits"])
    result["default_rule_per_attribute"] = per_attribute(texts)
    result["texts"] = texts
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"\npassed at attempt: {result['passed_at_attempt']}; never passed: {result['never_passed']} "
          f"({result['never_passed_samples_share']:.0%} of the samples)")  # fmt: skip
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
