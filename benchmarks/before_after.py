"""The CLI's outputs before and after a refactoring: the demo audit, a CTF run, the CEval-format evaluate demo (its
text and classifier metrics, and its model-scored ones: perplexity and BERTScore), a
feedback run (an external editor made from the demo texts), a generate run (word lists and identity swaps), and the
commands whose summaries hold the sections a plain audit lacks: ``bias`` and an audit with a label column on the demo
texts labelled by rule (every third text), the demo audited with VADER, ``compare`` of the two demo audits, the
LLM audit's demo (its simulated screener), and the fairness gate's checks of every kind on an audit, ``bias`` and the
LLM audit's demo.

    python benchmarks/before_after.py --out DIR                       # run the three commands into DIR
    python benchmarks/before_after.py --out NEW --reference OLD       # ... and compare with an earlier DIR

Tables are compared cell by cell; summaries key by key and in their keys' order, leaving out what may differ between
runs (timings, paths, the run's own bookkeeping); report.md line by line. Every difference is printed and written to
benchmarks/results/before_after.json.
"""

from __future__ import annotations

import argparse
import json
import re
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
    "resumed_texts",
}
EDITS = Path(tempfile.gettempdir()) / "counterfair-before-after-edits.csv"  # one path: it is part of the run identity
LABELLED = Path(tempfile.gettempdir()) / "counterfair-before-after-labelled.csv"
RUNS = {
    "audit": (["audit", "--demo"], ("pairs.csv",)),
    "ctf": (["ctf", str(DEMO)], ("pairs.csv",)),
    "evaluate": (["evaluate", "--demo", "--metrics", "flip,prob_change,distance,diversity,bleu"], ("rows.csv",)),
    "evaluate_models": (["evaluate", "--demo", "--metrics", "perplexity,bertscore"], ("rows.csv",)),
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
    "bias": (["bias", "{labelled}", "--label-column", "label", "--bootstrap", "200"], ("rows.csv",)),
    "audit_labelled": (["audit", "{labelled}", "--label-column", "label"], ("pairs.csv",)),
    "audit_vader": (["audit", "--demo", "--classifier", "vader", "--positive-label", "neg"], ("pairs.csv",)),
    "compare": (["compare", "{out}/audit", "{out}/audit_vader"], ()),
    "llm_audit": (["llm-audit", "--demo"], ("responses.csv",)),
    # the fairness gate as summary.json writes it: material/conclusive, point and bound checks, and ones with no value
    "audit_gate": (
        [
            "audit",
            "--demo",
            "--fail-if",
            "default",
            "--fail-if",
            "upper(ctf_gap) > 0.1",
            "--fail-if",
            "flip_rate[sexuality] > 0.9",
            "--fail-if",
            "ctf_gap[none] > 0",
            "--fail-if",
            "lower(term_effect[*]) > 0.3",
        ],
        ("pairs.csv",),
    ),
    "bias_gate": (
        [
            "bias",
            "{labelled}",
            "--label-column",
            "label",
            "--bootstrap",
            "200",
            "--fail-if",
            "subgroup_auc[*] < 0.5",
            "--fail-if",
            "bpsn_auc[nope] < 0.5",
            "--fail-if",
            "identity_effect > 0.05",
        ],
        ("rows.csv",),
    ),
    "llm_audit_gate": (["llm-audit", "--demo", "--fail-if", "default"], ("responses.csv",)),
}


def _edits(out: Path) -> Path:
    """The feedback run's external editor: each demo text gets two rewrites (a word dropped, the text in capitals),
    and the shortened text gets one of its own, so step 2 has something to edit."""
    texts = pd.read_csv(DEMO)["text"]
    rows = [{"orig_text": t, "gen_text": " ".join(t.split()[1:]), "gen_text_2": t.upper()} for t in texts]
    rows += [{"orig_text": " ".join(t.split()[1:]), "gen_text": t.replace(".", "!"), "gen_text_2": None} for t in texts]
    pd.DataFrame(rows).to_csv(EDITS, index=False)
    return EDITS


def _labelled() -> Path:
    """The demo texts with a gold label by rule (every third text toxic), for bias and an audit's ``bias`` section."""
    frame = pd.read_csv(DEMO)
    frame["label"] = [int(i % 3 == 0) for i in range(len(frame))]
    frame.to_csv(LABELLED, index=False)
    return LABELLED


def run_all(out: Path) -> None:
    names = {"{edits}": str(_edits(out)), "{labelled}": str(_labelled()), "{out}": str(out)}
    for name, (argv, _) in RUNS.items():
        for key, value in names.items():
            argv = [a.replace(key, value) for a in argv]
        quiet = [] if argv[0] == "compare" else ["-q"]  # compare prints its table only
        cmd = [sys.executable, "-m", "counterfair.cli", *argv, "--out", str(out / name), *quiet]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1, 2):  # 1, 2: the gate failed or a rule had no value; the outputs are written
            raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")


def _same_file(old: str, new: str) -> bool:
    return "/" in old and Path(old).name == Path(new).name and Path(old).parent.name == Path(new).parent.name


def _walk(old: Any, new: Any, where: str, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        shared_old = [k for k in old if k in new and k not in VOLATILE]
        shared_new = [k for k in new if k in old and k not in VOLATILE]
        if shared_old != shared_new:
            out.append(f"{where}: keys reordered: {', '.join(shared_old)[:80]} -> {', '.join(shared_new)[:80]}")
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


def _report_diffs(old_dir: Path, new_dir: Path, reference: Path, out: Path) -> list[str]:
    """report.md line by line, the input files' checkouts and the two output folders named alike."""
    if not (old_dir / "report.md").exists() and not (new_dir / "report.md").exists():
        return []
    if not (old_dir / "report.md").exists() or not (new_dir / "report.md").exists():
        return ["report.md: " + ("added" if (new_dir / "report.md").exists() else "removed")]

    def lines(path: Path, root: Path) -> list[str]:
        text = re.sub(r"\S*/src/counterfair/", "SRC/", path.read_text().replace(str(root), "OUT"))
        return [line for line in text.splitlines() if line.strip()]

    old, new = lines(old_dir / "report.md", reference), lines(new_dir / "report.md", out)
    changed = [f"report.md: {a[:60]!r} -> {b[:60]!r}" for a, b in zip(old, new, strict=False) if a != b]
    if len(old) != len(new):
        changed.append(f"report.md: {len(old)} lines -> {len(new)} lines")
    return changed


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
                # a run directory named in a summary (compare's A and B) lies under the other output folder
                old_doc = json.loads((reference / name / doc).read_text().replace(str(reference), str(out)))
                new_doc = json.loads((out / name / doc).read_text())
                _walk(old_doc, new_doc, doc.removesuffix(".json"), diffs)
        diffs += _report_diffs(reference / name, out / name, reference, out)
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
