"""The CLI's outputs before and after a refactoring: the demo audit, a CTF run, the CEval-format evaluate demo, a
feedback run (an external editor made from the demo texts) and a generate run (word lists and identity swaps).

    python benchmarks/before_after.py --out DIR                       # run the three commands into DIR
    python benchmarks/before_after.py --out NEW --reference OLD       # ... and compare with an earlier DIR

Tables are compared cell by cell; summaries key by key, leaving out what may differ between runs (timings, paths,
the run's own bookkeeping). Every difference is printed and written to benchmarks/results/before_after.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results" / "before_after.json"
DEMO = Path(__file__).resolve().parents[1] / "src" / "counterfair" / "languages" / "en" / "demo_audit.csv"
VOLATILE = {
    "timing_s",
    "seconds",
    "seconds_this_run",
    "candidates_per_s_this_run",
    "seconds_per_text",
    "source",
    "path",
}
EDITS = Path(tempfile.gettempdir()) / "counterfair-before-after-edits.csv"  # one path: it is part of the run identity
RUNS = {
    "audit": (["audit", "--demo"], ("pairs.csv",)),
    "ctf": (["ctf", str(DEMO)], ("pairs.csv",)),
    "evaluate": (["evaluate", "--demo", "--metrics", "flip,prob_change,distance,diversity,bleu"], ("rows.csv",)),
    "feedback": (
        [
            "feedback",
            str(DEMO),
            "--editor",
            "external:{edits}",
            "--classifier",
            "profanity-check",
            "--steps",
            "2",
            "--ppl-model",
            "none",
        ],
        ("steps.csv",),
    ),
    "generate": (
        ["generate", str(DEMO), "--methods", "ablation,substitution,swap", "--attribute", "lgbq"],
        ("counterfactuals.csv", "candidates.csv"),
    ),
}


def _edits(out: Path) -> Path:
    """The feedback run's external editor: each demo text gets two rewrites (a word dropped, the text in capitals),
    and the shortened text gets one of its own, so step 2 has something to edit."""
    texts = pd.read_csv(DEMO)["text"]
    rows = [{"orig_text": t, "gen_text": " ".join(t.split()[1:]), "gen_text_2": t.upper()} for t in texts]
    rows += [{"orig_text": " ".join(t.split()[1:]), "gen_text": t.replace(".", "!"), "gen_text_2": None} for t in texts]
    pd.DataFrame(rows).to_csv(EDITS, index=False)
    return EDITS


def run_all(out: Path) -> None:
    edits = _edits(out)
    for name, (argv, _) in RUNS.items():
        argv = [a.replace("{edits}", str(edits)) for a in argv]
        cmd = [sys.executable, "-m", "counterfair.cli", *argv, "--out", str(out / name), "-q"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")


def _same_file(old: str, new: str) -> bool:
    return "/" in old and Path(old).name == Path(new).name and Path(old).parent.name == Path(new).parent.name


def _walk(old: Any, new: Any, where: str, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key in VOLATILE:
                continue
            if key not in old or key not in new:
                out.append(f"{where}.{key}: {'added' if key not in old else 'removed'}")
            else:
                _walk(old[key], new[key], f"{where}.{key}", out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _walk(a, b, f"{where}[{i}]", out)
    elif isinstance(old, str) and isinstance(new, str) and old != new and _same_file(old, new):
        return  # the same input file in two checkouts
    elif old != new and not (isinstance(old, float) and isinstance(new, float) and abs(old - new) < 1e-12):
        out.append(f"{where}: {str(old)[:80]} -> {str(new)[:80]}")


def compare(reference: Path, out: Path) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name, (_, tables) in RUNS.items():
        diffs: list[str] = []
        for table in tables:
            old = pd.read_csv(reference / name / table, dtype=str, keep_default_na=False)
            new = pd.read_csv(out / name / table, dtype=str, keep_default_na=False)
            for column in sorted(set(old.columns) ^ set(new.columns)):
                diffs.append(f"{table}: column {column} {'added' if column in new else 'removed'}")
            common = [c for c in old.columns if c in new.columns and c not in VOLATILE]
            if len(old) != len(new):
                diffs.append(f"{table}: {len(old)} rows -> {len(new)} rows")
            else:
                for column in common:
                    changed = int((old[column] != new[column]).sum())
                    if changed:
                        diffs.append(f"{table}: column {column}: {changed} of {len(old)} cells differ")
        for doc in ("summary.json", "run.json"):
            if (reference / name / doc).exists() or (out / name / doc).exists():
                old_doc = json.loads((reference / name / doc).read_text())
                new_doc = json.loads((out / name / doc).read_text())
                _walk(old_doc, new_doc, doc.removesuffix(".json"), diffs)
        report[name] = diffs
        print(f"{name}: {len(diffs)} differences")
        for line in diffs[:40]:
            print("   ", line)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--reference", type=Path)
    args = parser.parse_args()
    run_all(args.out)
    if args.reference:
        report = compare(args.reference, args.out)
        RESULTS.write_text(json.dumps({"reference": str(args.reference), "differences": report}, indent=2) + "\n")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
