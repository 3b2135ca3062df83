"""The identity guard's precision and recall per ambiguous term, on real comments labelled by hand (#49 item 12).

Comments: the 1,078 Civil Comments in ``../shared/data/nlp_ctf`` (531 non-toxic and 237 toxic training comments, 310
with a held-out term). Every occurrence of one of dixon50's ambiguous terms (black, white, old, young, straight, blind,
deaf, male, female, trans, …) in any form the swap matches is listed; per term at most ``PER_TERM`` of them are drawn
(seeded) into ``benchmarks/data/guard_sample.csv`` with a window of the comment around the word, *without* the
guard's verdict, and labelled there by reading: ``identity`` 1 where the word refers to people's identity (race, age,
sex, sexuality, disability: "a white man", "old people", "straight couples", "the black vote"), 0 where it does not
("the White House", "old news", "a straight answer", "black market"), with a short ``note``.

Then the guard's verdicts are computed on the whole comments and compared with the labels: per term and overall,
precision (of the occurrences the guard keeps as identities, the share that are) and recall (of the identity uses,
the share it keeps), with Wilson 95 % intervals. Two samples: the tuning sample (12 per term, seed 0), on whose errors
the rule was changed (guard/2 -> guard/3), and a held-out sample (8 per term, seed 1, none of the tuning sample's
occurrences) drawn and labelled after the change, which says whether the change generalises. ``--sample tuning|heldout``
(re)writes a sample file (labels already given are kept). ``--print-only`` prints without writing the results (to
measure another rule version: ``PYTHONPATH=OTHER/src python benchmarks/guard_accuracy.py --print-only``).

Usage: python benchmarks/guard_accuracy.py [--sample tuning|heldout] [--print-only].
Results: benchmarks/results/guard_accuracy.json.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import numpy as np
import pandas as pd

from counterfair.editors.swap import IdentitySwapEditor
from counterfair.metrics.fairness import wilson
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "nlp_ctf" / "civil_comments"
SAMPLE = ROOT / "benchmarks" / "data" / "guard_sample.csv"  # labelled, then the rule changed where it erred
HELDOUT = ROOT / "benchmarks" / "data" / "guard_sample_heldout.csv"  # drawn and labelled after the change: the check
RESULTS = ROOT / "benchmarks" / "results" / "guard_accuracy.json"
PER_TERM = {SAMPLE: 12, HELDOUT: 8}
SEED = {SAMPLE: 0, HELDOUT: 1}
WINDOW = 90


def comments() -> list[str]:
    files = ("civil_train_data.csv", "civil_toxic_train_data.csv", "civil_test_data.csv")
    texts = [t for f in files for t in pd.read_csv(DATA / f)["comment_text"].astype(str)]
    return list(dict.fromkeys(texts))


def occurrences(editor: IdentitySwapEditor, texts: list[str]) -> pd.DataFrame:
    ambiguous = editor.identities.ambiguous
    rows = []
    for k, text in enumerate(texts):
        for m in editor.find(text):
            if m.term.lower() in ambiguous:
                rows.append({"comment": k, "start": m.start, "end": m.end, "term": m.term.lower(), "word": m.text})
    return pd.DataFrame(rows)


def window(text: str, start: int, end: int) -> str:
    left = text[max(0, start - WINDOW) : start].replace("\n", " ")
    right = text[end : end + WINDOW].replace("\n", " ")
    return f"{left}[[{text[start:end]}]]{right}"


def write_sample(editor: IdentitySwapEditor, texts: list[str], target: Path) -> None:
    found = occurrences(editor, texts)
    if target == HELDOUT:  # none of the occurrences the rule was tuned on
        tuned = pd.read_csv(SAMPLE)
        taken = set(zip(tuned["comment"], tuned["start"], strict=True))
        found = found[[key not in taken for key in zip(found["comment"], found["start"], strict=True)]]
    per_term, seed = PER_TERM[target], SEED[target]
    picked = [part.sample(min(len(part), per_term), random_state=seed) for _, part in found.groupby("term")]
    drawn = pd.concat(picked).sort_values(["term", "comment", "start"])
    spans = zip(drawn["comment"], drawn["start"], drawn["end"], strict=True)
    drawn["context"] = [window(texts[c], start, end) for c, start, end in spans]
    drawn["identity"] = ""
    drawn["note"] = ""
    if target.exists():  # keep the labels already given
        old = pd.read_csv(target, dtype={"identity": str, "note": str}, keep_default_na=False)
        labels = {(r.comment, r.start): (r.identity, r.note) for r in old.itertuples()}
        keys = list(zip(drawn["comment"], drawn["start"], strict=True))
        drawn["identity"] = [labels.get(key, ("", ""))[0] for key in keys]
        drawn["note"] = [labels.get(key, ("", ""))[1] for key in keys]
    drawn.to_csv(target, index=False)
    print(f"wrote {len(drawn)} occurrences ({drawn['term'].nunique()} terms) to {target}")


def proportion(successes: int, n: int) -> dict[str, Any]:
    low, high = wilson(successes, n)
    return {"value": successes / n if n else None, "low": low, "high": high, "n": n}


def rates(kept: np.ndarray, identity: np.ndarray) -> dict[str, Any]:
    true_kept = int((kept & identity).sum())
    precision = proportion(true_kept, int(kept.sum()))
    recall = proportion(true_kept, int(identity.sum()))
    return {
        "occurrences": int(kept.size),
        "identity_uses": int(identity.sum()),
        "kept": int(kept.sum()),
        "precision": precision,
        "recall": recall,
    }


def measure(editor: IdentitySwapEditor, texts: list[str], source: Path) -> dict[str, Any]:
    sample = pd.read_csv(source, dtype={"identity": str, "note": str}, keep_default_na=False)
    unlabelled = sample[~sample["identity"].isin(["0", "1"])]
    if len(unlabelled):
        raise SystemExit(f"{len(unlabelled)} rows of {source.name} have no label (0 or 1) yet")
    chosen = sorted(set(sample["comment"]))
    kept = editor.identity_matches([texts[c] for c in chosen])  # the occurrences the guard keeps, per comment
    taken = {(c, m.start) for c, found in zip(chosen, kept, strict=True) for m in found}
    sample["kept"] = [key in taken for key in zip(sample["comment"], sample["start"], strict=True)]
    sample["identity"] = sample["identity"] == "1"
    report: dict[str, Any] = {
        "sample": len(sample),
        "overall": rates(sample["kept"].to_numpy(), sample["identity"].to_numpy()),
        "terms": {
            term: rates(part["kept"].to_numpy(), part["identity"].to_numpy())
            for term, part in sample.groupby("term", sort=True)
        },
        "wrong": [
            {"term": r.term, "identity": bool(r.identity), "kept": bool(r.kept), "context": r.context, "note": r.note}
            for r in sample.itertuples()
            if bool(r.identity) != bool(r.kept)
        ],
    }
    report["table"] = table(report)
    return report


def _pct(interval: dict[str, Any]) -> str:
    if interval["value"] is None:
        return "–"
    return f"{interval['value']:.2f} [{interval['low']:.2f}, {interval['high']:.2f}]"


def table(report: dict[str, Any]) -> str:
    lines = [
        "| term | occurrences labelled | identity uses | kept by the guard | precision [95 % CI] | recall [95 % CI] |",
        "|---|---|---|---|---|---|",
    ]
    for term, row in [*report["terms"].items(), ("**all**", report["overall"])]:
        lines.append(
            f"| {term} | {row['occurrences']} | {row['identity_uses']} | {row['kept']} | {_pct(row['precision'])} | "
            f"{_pct(row['recall'])} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", choices=["tuning", "heldout"], help="(re)write that sample's file for labelling")
    parser.add_argument("--print-only", action="store_true", help="print the tables, write no results")
    args = parser.parse_args()
    editor = IdentitySwapEditor("dixon50", guard="spacy")
    texts = comments()
    if args.sample:
        write_sample(editor, texts, SAMPLE if args.sample == "tuning" else HELDOUT)
        return
    report: dict[str, Any] = {"comments": len(texts), "rule": editor.params()["guard_rule"]}
    for name, source in (("tuning", SAMPLE), ("heldout", HELDOUT)):
        if not source.exists():
            continue
        report[name] = measure(editor, texts, source)
        print(f"{name} sample ({source.name}):\n{report[name]['table']}")
        for row in report[name]["wrong"]:
            print(f"  {'missed' if row['identity'] else 'wrongly kept'}: {row['context']}")
    report["table"] = "\n\n".join(
        f"{'Tuning' if name == 'tuning' else 'Held-out'} sample ({report[name]['sample']} occurrences):\n\n"
        f"{report[name]['table']}"
        for name in ("tuning", "heldout")
        if name in report
    )
    if not args.print_only:
        write_json(report, RESULTS)


if __name__ == "__main__":
    main()
