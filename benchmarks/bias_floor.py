"""``cf.bias`` against plain pandas + scikit-learn on Dixon et al.'s 76,564 labelled madlibs (#50).

The floor is what a user would write without counterfair: read the CSV, score every text with the same classifier
(alt-profanity-check's ``predict_prob``), mark a text a member of an identity group when one of the group's dixon50
terms occurs as a whole word (one case-insensitive regex per group, ``Series.str.contains``), and compute each group's
subgroup, BPSN and BNSP AUC and the overall AUC with ``sklearn.metrics.roc_auc_score``. counterfair does more (the
swap's written forms, ``--bootstrap`` intervals, the pinned AUC, FPED/FNED, the generalized means, a summary), so the
comparison runs it with ``bootstrap=0``: with the guard off (the floor's membership: words, no parse), with the guard on
(the default: spaCy parses every text holding an ambiguous term), and with the guard on and its verdicts already in the
run store (a rerun on the same texts, with this or another classifier: only the verdicts are kept from the first run).

Each side runs in its own process (``--one``), in turn, ``--rounds`` times, with a fresh, empty cache
(``COUNTERFAIR_STORE=off``, a new ``COUNTERFAIR_CACHE``): the classifier scores every text each round. Reported per
side: the median CPU seconds of the work (after imports), the peak RSS of the process, the ratios to the floor
(median of the round-by-round ratios, with their range) and the largest difference between counterfair's AUCs and the
floor's. For the guarded run the guard's parse is timed alone (the same texts through the same spaCy pipeline) — the
floor that run cannot go under. Targets: ≤ 3× the floor's CPU time, ≤ 2× its peak memory.

Usage: python benchmarks/bias_floor.py [--rounds 3]. Results: benchmarks/results/bias_floor.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "dixon" / "bias_madlibs_77k.csv"
RESULTS = ROOT / "benchmarks" / "results" / "bias_floor.json"
TARGET_CPU, TARGET_MEMORY = 3.0, 2.0
GUARDED, WARM = "counterfair (guard)", "counterfair (guard, verdicts stored)"
SIDES = ("floor", "counterfair", GUARDED, WARM)


def floor_run() -> dict[str, Any]:
    import pandas as pd
    from profanity_check import predict_prob  # noqa: F401  (imported before the clock starts, as the others are)
    from sklearn.metrics import roc_auc_score  # noqa: F401

    started = time.process_time()
    frame = pd.read_csv(DATA)
    aucs, overall = floor_aucs(frame["Text"].astype(str), (frame["Label"] == "BAD").to_numpy(), overall=True)
    return {"cpu": time.process_time() - started, "overall_auc": overall, "groups": aucs}


def floor_aucs(texts: Any, y: Any, *, overall: bool = False) -> Any:
    """The floor's work on ``texts`` (a Series) and gold ``y`` (booleans): alt-profanity-check's scores, one regex per
    dixon50 group, each group's subgroup, BPSN and BNSP AUC by scikit-learn (and with ``overall``, the overall AUC)."""
    import numpy as np
    from profanity_check import predict_prob
    from sklearn.metrics import roc_auc_score

    from counterfair.lexicons.attributes import load_identity_set

    scores = predict_prob(texts.tolist())
    identities = load_identity_set("dixon50")
    by_group: dict[str, list[str]] = {}
    for term in identities.terms:
        by_group.setdefault(identities.group_of(term), []).append(term)
    aucs: dict[str, dict[str, float | None]] = {}
    for group, terms in sorted(by_group.items()):
        body = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
        member = texts.str.contains(rf"(?<!\w)(?:{body})(?!\w)", case=False, regex=True).to_numpy()
        subsets = {
            "subgroup_auc": member,
            "bpsn_auc": (member & ~y) | (~member & y),
            "bnsp_auc": (member & y) | (~member & ~y),
        }
        aucs[group] = {
            name: float(roc_auc_score(y[rows], scores[rows])) if len(np.unique(y[rows])) == 2 else None
            for name, rows in subsets.items()
        }
    return (aucs, float(roc_auc_score(y, scores))) if overall else aucs


def counterfair_run(guard: bool) -> dict[str, Any]:
    import pandas as pd

    import counterfair as cf

    started = time.process_time()
    frame = pd.read_csv(DATA).rename(columns={"Text": "text", "Label": "label"})
    result = cf.bias(frame[["text", "label"]], bootstrap=0, guard=guard, progress=False)
    cpu = time.process_time() - started
    groups = result.by_group
    aucs = {
        str(g): {m: (None if row[m] != row[m] else float(row[m])) for m in ("subgroup_auc", "bpsn_auc", "bnsp_auc")}
        for g, row in groups.iterrows()
    }
    report: dict[str, Any] = {"cpu": cpu, "overall_auc": float(result.overall["overall_auc"]), "groups": aucs}
    if guard and os.environ["COUNTERFAIR_STORE"] == "off":
        report["parse_cpu"] = parse_alone(frame["text"].astype(str).tolist())
    return report


def parse_alone(texts: list[str]) -> float:
    """CPU seconds of the guard's parse alone: the texts holding an ambiguous term through its spaCy pipeline."""
    from counterfair.editors.swap import IdentitySwapEditor
    from counterfair.models import spacy_small

    editor = IdentitySwapEditor("dixon50", guard="spacy")
    ambiguous = editor.identities.ambiguous
    todo = list(dict.fromkeys(t for t in texts if any(m.term.lower() in ambiguous for m in editor.find(t))))
    nlp = spacy_small(("lemmatizer",))  # the guard's pipeline (one per process)
    started = time.process_time()
    for _ in nlp.pipe(todo, batch_size=64):
        pass
    return time.process_time() - started


def one(side: str) -> None:
    report = floor_run() if side == "floor" else counterfair_run(guard=side in (GUARDED, WARM))
    report["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(report))


def run_side(side: str, store: Path) -> dict[str, Any]:
    """One side in a fresh process; the warm side with ``store``, which holds the guard's verdicts and nothing else."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "COUNTERFAIR_STORE": str(store) if side == WARM else "off", "COUNTERFAIR_CACHE": cache}
        done = subprocess.run(
            [sys.executable, __file__, "--one", side], env=env, capture_output=True, text=True, check=True
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def stored_verdicts(store: Path) -> None:
    """A store holding the guard's verdicts for the madlibs (one run of ``cf.bias``, then every other result dropped:
    the warm side scores its texts like the others, as a run with another classifier would)."""
    import sqlite3

    run_side(WARM, store)
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM results WHERE component != 'guard'")


def largest_difference(ours: dict[str, Any], floor: dict[str, Any]) -> float:
    differences = [abs(ours["overall_auc"] - floor["overall_auc"])]
    for group, values in floor["groups"].items():
        for metric, value in values.items():
            theirs = ours["groups"].get(group, {}).get(metric)
            if value is not None and theirs is not None:
                differences.append(abs(theirs - value))
    return max(differences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    folder = tempfile.TemporaryDirectory()
    store = Path(folder.name) / "store.sqlite"
    stored_verdicts(store)
    for _ in range(args.rounds):
        for side in SIDES:
            runs[side].append(run_side(side, store))
            print(f"{side:>20}: {runs[side][-1]['cpu']:.1f} s CPU, {runs[side][-1]['peak_rss_mib']:.0f} MiB")
    floor = runs["floor"]
    report: dict[str, Any] = {
        "texts": 76564,
        "rounds": args.rounds,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_1min": os.getloadavg()[0]},
        "floor": {
            "cpu_seconds": round(statistics.median(r["cpu"] for r in floor), 2),
            "peak_rss_mib": round(statistics.median(r["peak_rss_mib"] for r in floor)),
        },
        "sides": {},
    }
    for side in SIDES[1:]:
        cpu_ratios = [r["cpu"] / f["cpu"] for r, f in zip(runs[side], floor, strict=True)]
        memory_ratios = [r["peak_rss_mib"] / f["peak_rss_mib"] for r, f in zip(runs[side], floor, strict=True)]
        entry = {
            "cpu_seconds": round(statistics.median(r["cpu"] for r in runs[side]), 2),
            "peak_rss_mib": round(statistics.median(r["peak_rss_mib"] for r in runs[side])),
            "cpu_ratio": round(statistics.median(cpu_ratios), 2),
            "cpu_ratio_range": [round(min(cpu_ratios), 2), round(max(cpu_ratios), 2)],
            "memory_ratio": round(statistics.median(memory_ratios), 2),
            "largest_auc_difference": round(largest_difference(runs[side][0], floor[0]), 4),
            "cpu_target": TARGET_CPU,
            "memory_target": TARGET_MEMORY,
        }
        entry["met"] = entry["cpu_ratio"] <= TARGET_CPU and entry["memory_ratio"] <= TARGET_MEMORY
        if "parse_cpu" in runs[side][0]:
            parse = statistics.median(r["parse_cpu"] for r in runs[side])
            entry["parse_cpu_seconds"] = round(parse, 2)
            entry["parse_ratio_to_floor"] = round(parse / report["floor"]["cpu_seconds"], 2)
        report["sides"][side] = entry
        print(f"{side}: {entry}")
    report["table"] = table(report)
    from counterfair.writing import write_json

    write_json(report, RESULTS)


LABELS = {
    "counterfair": "guard off",
    GUARDED: "guard on (a first run)",
    WARM: "guard on, its verdicts in the run store (a rerun)",
}


def table(report: dict[str, Any]) -> str:
    """The README's table (Markdown), generated from the JSON."""
    floor = report["floor"]
    lines = [
        "| run | CPU | ratio (rounds' range) | peak RSS | ratio | largest AUC difference | met (≤ 3× CPU, "
        "≤ 2× memory) |",
        "|---|---|---|---|---|---|---|",
        f"| pandas + scikit-learn (floor) | {floor['cpu_seconds']:.1f} s | 1 | {floor['peak_rss_mib']} MiB | 1 | – "
        "| – |",
    ]
    for side, row in report["sides"].items():
        parse = f" (its parse alone: {row['parse_cpu_seconds']:.1f} s)" if "parse_cpu_seconds" in row else ""
        lines.append(
            f"| `cf.bias`, {LABELS[side]}, bootstrap 0 | {row['cpu_seconds']:.1f} s"
            f"{parse} | {row['cpu_ratio']:.1f}× ({row['cpu_ratio_range'][0]:.1f}–{row['cpu_ratio_range'][1]:.1f}) | "
            f"{row['peak_rss_mib']} MiB | {row['memory_ratio']:.1f}× | {row['largest_auc_difference']:.4f} | "
            f"{'yes' if row['met'] else 'no'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
