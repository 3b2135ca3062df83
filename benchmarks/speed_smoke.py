"""A speed smoke run for CI (#36): small sizes, ratios only, failing on a gross regression.

Times counterfair's deterministic editors and ``generate``'s swap against the regex floor of ``swap_floor.py``, in
one process, on texts that ship with the repository (the built-in demo texts and the benchmark sentences, each also
written with every term of the Dixon identity set in a few madlib templates written here), so it needs no shared
data. Each ratio is compared with the one recorded in ``benchmarks/results/speed_smoke.json`` (written by
``--record`` on a quiet machine): a ratio above ``--factor`` (3) times the recorded one fails the run, exit 1 — the
day a 10× loss lands, not months later. Ratios within one run cancel most of a shared machine's load; the factor
leaves room for what they do not.

Usage: python benchmarks/speed_smoke.py [--record] [--factor 3]
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import cpu_model
from counterfair.commands.audit.options import demo_path
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.editors.wordlist import AblationEditor, SubstitutionEditor
from counterfair.lexicons.attributes import load_attribute, load_identity_set
from counterfair.writing import write_json
from swap_floor import editor_run, floor_ablation, floor_substitution, floor_swap, median_seconds

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "speed_smoke.json"
TEMPLATES = (
    "I am a {} person, ask me anything.",
    "Being {} is wonderful.",
    "My neighbour is {} and we cook together on Sundays.",
    "{} people are just like everyone else.",
)


def smoke_texts() -> list[str]:
    """About 500 texts from the repository alone."""
    texts = pd.read_csv(demo_path())["text"].astype(str).tolist()
    for name in ("fairness_sentences.csv", "implicit_references.csv"):
        texts += pd.read_csv(HERE / "data" / name)["text"].astype(str).tolist()
    texts += [t.format(term) for term in load_identity_set("dixon50").terms for t in TEMPLATES]
    return list(dict.fromkeys(texts))


def generate_run() -> Callable[[list[str]], int]:
    """``counterfair.generate(texts, "swap")`` end to end in memory: reading, editing, statuses, records."""
    import counterfair as cf

    return lambda batch: len(cf.generate(batch, ["swap"], identities="dixon50"))


def bias_runs(batch: list[str]) -> tuple[Callable[[list[str]], int], Callable[[list[str]], int]]:
    """``cf.bias`` (guard off, no bootstrap) and ``bias_floor.py``'s floor (the same classifier's scores, a regex per
    group, scikit-learn's AUCs) on the texts with seeded labels (#50)."""
    import numpy as np

    import counterfair as cf
    from bias_floor import floor_aucs

    texts = [f"{text} ({k})" for k in range(20) for text in batch]
    known = dict(zip(texts, np.random.default_rng(0).integers(0, 2, len(texts)), strict=True))

    def ours(texts: list[str]) -> int:
        gold = [int(known[t]) for t in texts]
        return len(cf.bias(texts, gold, bootstrap=0, guard=False, progress=False).by_group)

    def floor(texts: list[str]) -> int:
        return len(floor_aucs(pd.Series(texts), np.array([bool(known[t]) for t in texts])))

    return ours, floor


def measure() -> dict[str, dict[str, Any]]:
    batch = smoke_texts()
    terms = list(load_identity_set("dixon50").terms)
    islam = load_attribute("islam")
    pairs = {
        "swap (grammar, guard)": (editor_run(IdentitySwapEditor(guard="spacy")), floor_swap(terms)),
        "swap (tokens)": (editor_run(IdentitySwapEditor(guard=None, grammar=False)), floor_swap(terms)),
        "ablation": (editor_run(AblationEditor(islam)), floor_ablation(list(islam.terms))),
        "substitution": (editor_run(SubstitutionEditor(islam)), floor_substitution(dict(islam.substitution))),
        "generate swap (in memory)": (generate_run(), floor_swap(terms)),
        "bias, guard off (in memory)": bias_runs(batch),
    }
    measured = {}
    for name, (ours_run, floor) in pairs.items():
        # ablation and substitution touch only the texts with an islam term (a few ms): repeated 20 times so that
        # a timer's jitter or one garbage collection cannot triple a ratio
        texts = batch * (20 if name in ("ablation", "substitution") else 1)
        if name.startswith("bias"):  # 20 distinct copies: counterfair scores a repeated text once, the floor does not
            texts = [f"{text} ({k})" for k in range(20) for text in batch]
        ours, made = median_seconds(ours_run, texts)
        base = median_seconds(floor, texts * 4)[0] / 4  # the floor's few ms, timed on four times the texts
        measured[name] = {"seconds": round(ours, 4), "floor_seconds": round(base, 4), "ratio": round(ours / base, 2),
                          "made": made}  # fmt: skip
    return {"texts": len(batch), "methods": measured}


def regressions(now: dict[str, Any], recorded: dict[str, Any], factor: float) -> list[str]:
    """One sentence per method whose ratio to the floor grew beyond ``factor`` times the recorded one."""
    out = []
    for name, row in now["methods"].items():
        before = recorded.get("methods", {}).get(name)
        if before and row["ratio"] > factor * before["ratio"]:
            out.append(
                f"{name}: {row['ratio']:.1f}x the floor, recorded {before['ratio']:.1f}x "
                f"({row['ratio'] / before['ratio']:.1f} times worse; the limit is {factor:g})"
            )
    return out


def table(now: dict[str, Any], recorded: dict[str, Any] | None) -> str:
    lines = ["| editor | counterfair | floor | ratio | recorded ratio |", "|---|---|---|---|---|"]
    for name, row in now["methods"].items():
        before = (recorded or {}).get("methods", {}).get(name)
        lines.append(
            f"| {name} | {row['seconds']:.3f} s | {row['floor_seconds']:.4f} s | {row['ratio']:.1f}× | "
            + (f"{before['ratio']:.1f}× |" if before else "– |")
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true", help=f"write the measured ratios to {RESULTS.name}")
    parser.add_argument("--factor", type=float, default=3.0, help="fail above this many times the recorded ratio")
    args = parser.parse_args()
    started = time.perf_counter()
    now = measure()
    recorded = json.loads(RESULTS.read_text()) if RESULTS.exists() else None
    now["table"] = table(now, None if args.record else recorded)
    print(now["table"])
    if args.record:
        now["machine"] = {"platform": platform.platform(), "processor": cpu_model(), "cpus": os.cpu_count()}
        write_json(now, RESULTS)
        print(f"recorded {RESULTS}")
        return
    if recorded is None:
        raise SystemExit(f"no recorded ratios in {RESULTS}: run with --record first")
    failed = regressions(now, recorded, args.factor)
    print(f"speed smoke: {now['texts']} texts, {time.perf_counter() - started:.1f} s")
    if failed:
        print("speed regression:\n  " + "\n  ".join(failed), file=sys.stderr)
        raise SystemExit(1)
    print(f"speed smoke passed: every ratio within {args.factor:g}x the recorded one")


if __name__ == "__main__":
    main()
