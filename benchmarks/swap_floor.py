"""counterfair's deterministic editors against a regex floor written here, in one run (#36).

The floor is what the editors must at least do, in plain ``re``: find the terms (whole words, any case) and write
each variant — for identity swaps, every other term of the set in place of each term found (Φ_A, token for token);
for ablation, the attribute's terms removed; for substitution, each replaced by its counterpart. counterfair's editors
do more (the swap writes nouns, plurals, articles and capitals; the guard parses each ambiguous occurrence with spaCy),
so the targets are ratios: the grammatical swap with the guard ≤ 15× the floor, the token swap (``grammar=False``, no
guard) ≤ 3×, ablation and substitution ≤ 2×. Texts: 1,000 Dixon et al. madlibs and 1,000 Civil Comments
(``../shared/data``; at most 80 words). The editor and its floor are timed in turn, ``--rounds`` times (7), and the
median of the round-by-round ratios kept with their range: the machine is shared, so compare the ratios.

The guard keeps each text's verdicts in the run store (#50), so a text met again is not parsed again. The first rows
run with the store off (a first run: every ambiguous text parsed); "verdicts stored" runs the guarded swap again with a
store that already holds them (a rerun, or ``bias`` after ``audit`` on the same texts). Beside the guarded row, its
texts' spaCy parse alone (the same pipeline, the same texts) against the floor: what a first run cannot go under.
Results: benchmarks/results/swap_floor.json.
"""

from __future__ import annotations

import os

os.environ["COUNTERFAIR_STORE"] = "off"  # a first run: no stored guard verdicts (the warm row sets its own store)
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import cpu_model
from counterfair.editors.guard import PARSE_BATCH, forget_parses
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.editors.wordlist import AblationEditor, SubstitutionEditor
from counterfair.lexicons.attributes import load_attribute, load_identity_set
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "swap_floor.json"
GUARDED = "swap (grammar, guard)"
WARM = "swap (grammar, guard; verdicts stored)"
TARGETS = {GUARDED: 15.0, WARM: 15.0, "swap (tokens)": 3.0, "ablation": 2.0, "substitution": 2.0}


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
    """The median of three timed runs after a warm-up (``speed_smoke.py``'s measure: its recorded ratios were taken
    this way, parses kept between runs)."""
    made = run(batch[:50])  # warm up: spaCy, WordNet tables, compiled matchers
    times = []
    for _ in range(3):
        started = time.perf_counter()
        made = run(batch)
        times.append(time.perf_counter() - started)
    return statistics.median(times), made


def paired_seconds(
    ours: Callable[[list[str]], int], floor: Callable[[list[str]], int], batch: list[str], rounds: int
) -> dict[str, Any]:
    """Both runs timed in turn, ``rounds`` times (after a warm-up of each): the medians, and the median of the
    round-by-round ratios (a machine whose speed drifts moves both sides of a round alike)."""
    ours(batch[:50])  # warm up: spaCy, WordNet tables, compiled matchers
    floor(batch[:50])
    times: dict[str, list[float]] = {"ours": [], "floor": []}
    made = {}
    for _ in range(rounds):
        for name, run in (("ours", ours), ("floor", floor)):
            forget_parses()  # each round parses its texts, as a run does once (2,000 texts fit the kept 2,048)
            started = time.perf_counter()
            made[name] = run(batch)
            times[name].append(time.perf_counter() - started)
    ratios = [a / b for a, b in zip(times["ours"], times["floor"], strict=True)]
    return {
        "seconds": statistics.median(times["ours"]),
        "floor_seconds": statistics.median(times["floor"]),
        "ratio": statistics.median(ratios),
        "ratio_range": (min(ratios), max(ratios)),
        "candidates": made["ours"],
        "floor_candidates": made["floor"],
    }


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    batch = texts()
    terms = list(load_identity_set("dixon50").terms)
    islam = load_attribute("islam")
    pairs = {
        GUARDED: (IdentitySwapEditor(guard="spacy"), floor_swap(terms)),
        WARM: (IdentitySwapEditor(guard="spacy"), floor_swap(terms)),
        "swap (tokens)": (IdentitySwapEditor(guard=None, grammar=False), floor_swap(terms)),
        "ablation": (AblationEditor(islam), floor_ablation(list(islam.terms))),
        "substitution": (SubstitutionEditor(islam), floor_substitution(dict(islam.substitution))),
    }
    report: dict[str, Any] = {
        "texts": len(batch),
        "rounds": rounds,
        "machine": {
            "platform": platform.platform(),
            "processor": cpu_model(),
            "cpus": os.cpu_count(),
            "load_1min": os.getloadavg()[0],
        },
        "methods": {},
    }
    store = tempfile.TemporaryDirectory()
    for name, (editor, floor) in pairs.items():
        if name == WARM:  # the verdicts stored by one run first, as a rerun finds them
            os.environ["COUNTERFAIR_STORE"] = str(Path(store.name) / "store.sqlite")
            editor.edit(batch)
        timed = paired_seconds(editor_run(editor), floor, batch, rounds)
        os.environ["COUNTERFAIR_STORE"] = "off"
        ratio = timed["ratio"]
        report["methods"][name] = {
            "seconds": round(timed["seconds"], 3),
            "floor_seconds": round(timed["floor_seconds"], 3),
            "ratio": round(ratio, 2),
            "ratio_range": [round(r, 2) for r in timed["ratio_range"]],
            "target": TARGETS[name],
            "met": ratio <= TARGETS[name],
            "candidates": timed["candidates"],
            "floor_candidates": timed["floor_candidates"],
        }
        if name == GUARDED:
            parse = parse_seconds(editor, batch)
            report["methods"][name]["parse_seconds"] = round(parse, 3)
            report["methods"][name]["parse_ratio"] = round(parse / timed["floor_seconds"], 2)
        print(f"{name:>22}: {timed['seconds']:7.3f} s vs floor {timed['floor_seconds']:6.3f} s = {ratio:6.1f}x "
              f"(rounds {timed['ratio_range'][0]:.1f}-{timed['ratio_range'][1]:.1f}x; target <= {TARGETS[name]:g}x), "
              f"{timed['candidates']} candidates (floor {timed['floor_candidates']})")  # fmt: skip
    report["table"] = table(report["methods"])
    write_json(report, RESULTS)


def parse_seconds(editor: IdentitySwapEditor, batch: list[str]) -> float:
    """The median of three parses of the texts the guard parses (an ambiguous term in them), alone."""
    from counterfair.models import spacy_small

    guard = editor.identities.ambiguous
    todo = list(dict.fromkeys(t for t in batch if any(m.term.lower() in guard for m in editor.find(t))))
    nlp = spacy_small(("lemmatizer",))  # the guard's pipeline (one per process)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        for _doc in nlp.pipe(todo, batch_size=PARSE_BATCH):
            pass
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def table(methods: dict[str, dict[str, Any]]) -> str:
    """The README's table (Markdown), generated from the JSON."""
    lines = [
        "| editor | counterfair | floor | ratio (rounds' range) | target | met | candidates (floor) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in methods.items():
        lines.append(
            f"| {name} | {row['seconds']:.3f} s | {row['floor_seconds']:.3f} s | {row['ratio']:.1f}× "
            f"({row['ratio_range'][0]:.1f}–{row['ratio_range'][1]:.1f}) | "
            f"≤ {row['target']:g}× | {'yes' if row['met'] else 'no'} | "
            f"{row['candidates']:,} ({row['floor_candidates']:,}) |"
        )
        if "parse_seconds" in row:
            lines.append(
                f"| its spaCy parse alone | {row['parse_seconds']:.3f} s | {row['floor_seconds']:.3f} s | "
                f"{row['parse_ratio']:.1f}× | | | the floor of a first guarded run |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
