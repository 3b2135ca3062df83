"""counterfair's deterministic editors against a regex floor written here, in one run (#36).

The floor is what the editors must at least do, in plain ``re``: find the terms (whole words, any case) and write
each variant — for identity swaps, every other term of the set in place of each term found (Φ_A, token for token);
for ablation, the attribute's terms removed; for substitution, each replaced by its counterpart. counterfair's editors
do more (the swap writes nouns, plurals, articles and capitals; the guard parses each ambiguous occurrence with spaCy),
so the targets are ratios: the grammatical swap with the guard ≤ 15× the floor, the token swap (``grammar=False``, no
guard) ≤ 3×, ablation and substitution ≤ 2×. Texts: 1,000 Dixon et al. madlibs and 1,000 Civil Comments
(``../shared/data``; at most 80 words). Each variant is timed three times, alternating, and the median kept; the
machine is shared, so compare the ratios. Results: benchmarks/results/swap_floor.json.
"""

from __future__ import annotations

import os
import platform
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.editors.swap import IdentitySwapEditor
from counterfair.editors.wordlist import AblationEditor, SubstitutionEditor
from counterfair.io import write_json
from counterfair.lexicons.attributes import load_attribute, load_identity_set

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "swap_floor.json"
TARGETS = {"swap (grammar, guard)": 15.0, "swap (tokens)": 3.0, "ablation": 2.0, "substitution": 2.0}


def texts() -> list[str]:
    madlibs = pd.read_csv(DATA / "dixon" / "bias_madlibs_77k.csv")["Text"].astype(str).tolist()[:1000]
    civil = pd.read_csv(DATA / "nlp_ctf" / "civil_comments" / "civil_train_data.csv")["comment_text"].astype(str)
    return madlibs + [t for t in civil.tolist() if len(t.split()) <= 80][:1000]


def terms_regex(terms: list[str]) -> re.Pattern[str]:
    body = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)


def floor_swap(terms: list[str]) -> Callable[[list[str]], int]:
    pattern = terms_regex(terms)

    def run(batch: list[str]) -> int:
        written = 0
        for text in batch:
            found = {m.group(0).lower() for m in pattern.finditer(text)}
            for source in found:
                one = re.compile(rf"(?<!\w){re.escape(source)}(?!\w)", re.IGNORECASE)
                written += len({one.sub(target, text) for target in terms if target != source})
        return written

    return run


def floor_ablation(terms: list[str]) -> Callable[[list[str]], int]:
    pattern = terms_regex(terms)
    return lambda batch: sum(1 for t in batch if pattern.search(t) and pattern.sub("", t) is not None)


def floor_substitution(table: dict[str, str]) -> Callable[[list[str]], int]:
    pattern = terms_regex(list(table))
    lower = {k.lower(): v for k, v in table.items()}
    return lambda batch: sum(
        1 for t in batch if pattern.search(t) and pattern.sub(lambda m: lower[m.group(0).lower()], t)
    )


def editor_run(editor: Any) -> Callable[[list[str]], int]:
    return lambda batch: sum(len(c) for c in editor.edit(batch))


def median_seconds(run: Callable[[list[str]], int], batch: list[str]) -> tuple[float, int]:
    made = run(batch[:50])  # warm up: spaCy, WordNet tables, compiled matchers
    times = []
    for _ in range(3):
        started = time.perf_counter()
        made = run(batch)
        times.append(time.perf_counter() - started)
    return statistics.median(times), made


def main() -> None:
    batch = texts()
    terms = list(load_identity_set("dixon50").terms)
    islam = load_attribute("islam")
    pairs = {
        "swap (grammar, guard)": (IdentitySwapEditor(guard="spacy"), floor_swap(terms)),
        "swap (tokens)": (IdentitySwapEditor(guard=None, grammar=False), floor_swap(terms)),
        "ablation": (AblationEditor(islam), floor_ablation(list(islam.terms))),
        "substitution": (SubstitutionEditor(islam), floor_substitution(dict(islam.substitution))),
    }
    report: dict[str, Any] = {
        "texts": len(batch),
        "rounds": 3,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_1min": os.getloadavg()[0]},
        "methods": {},
    }
    for name, (editor, floor) in pairs.items():
        ours, made = median_seconds(editor_run(editor), batch)
        base, floor_made = median_seconds(floor, batch)
        ratio = ours / base
        report["methods"][name] = {
            "seconds": round(ours, 3),
            "floor_seconds": round(base, 3),
            "ratio": round(ratio, 2),
            "target": TARGETS[name],
            "met": ratio <= TARGETS[name],
            "candidates": made,
            "floor_candidates": floor_made,
        }
        print(f"{name:>22}: {ours:7.2f} s vs floor {base:6.3f} s = {ratio:6.1f}x (target <= {TARGETS[name]:g}x), "
              f"{made} candidates (floor {floor_made})")  # fmt: skip
    report["table"] = table(report["methods"])
    write_json(report, RESULTS)


def table(methods: dict[str, dict[str, Any]]) -> str:
    """The README's table (Markdown), generated from the JSON."""
    lines = [
        "| editor | counterfair | floor | ratio | target | met | candidates (floor) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in methods.items():
        lines.append(
            f"| {name} | {row['seconds']:.2f} s | {row['floor_seconds']:.3f} s | {row['ratio']:.1f}× | "
            f"≤ {row['target']:g}× | {'yes' if row['met'] else 'no'} | "
            f"{row['candidates']:,} ({row['floor_candidates']:,}) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
