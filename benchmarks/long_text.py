"""Editing time against text length (#35 item 8): is an edit linear in the text's length?

Texts of 12.5, 25, 50 and 100 kB are built from a fixed vocabulary that holds identity terms (gay, Muslim, straight,
old, black) and ordinary words; each is edited alone with ``--max-text-chars 0`` semantics by ablation (islam),
substitution and the identity swap with the guard (dixon50), with the run store off. For each method the script
prints and saves the seconds per length and the ratio of the 100 kB time to the 25 kB time: about 4 for a linear
editor, about 16 for a quadratic one. Before the look-back window (swap's word before, sentence start and title
checks scanned the whole prefix for every occurrence), the swap took 74.7 s on 100 kB; after, 14.2 s (one run each,
same machine, identical outputs). Results: benchmarks/results/long_text.json. Needs no shared data.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

os.environ["COUNTERFAIR_STORE"] = "off"  # every edit computed, none read from the run store

import counterfair as cf
from counterfair.writing import write_json

RESULTS = Path(__file__).resolve().parent / "results" / "long_text.json"
WORDS = (
    "the a man woman gay Muslim people are kind and went to the store with black car old house straight answer".split()
)
LENGTHS = (12_500, 25_000, 50_000, 100_000)


def text_of(chars: int) -> str:
    rng = random.Random(chars)
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars]


def main() -> None:
    cf.generate(["warm up: I am gay."], ["swap"], progress=False)  # spaCy and the tables loaded once, untimed
    seconds: dict[str, dict[int, float]] = {}
    for method, options in (
        ("ablation", {"attribute": "islam"}),
        ("substitution", {"attribute": "islam"}),
        ("swap", {}),
    ):
        seconds[method] = {}
        for chars in LENGTHS:
            started = time.perf_counter()
            records = cf.generate([text_of(chars)], [method], max_text_chars=0, progress=False, **options)
            seconds[method][chars] = round(time.perf_counter() - started, 3)
            print(f"{method:>12} {chars:>7} chars: {seconds[method][chars]:7.2f} s, {len(records)} counterfactuals")
    ratios = {m: round(s[100_000] / max(s[25_000], 1e-9), 2) for m, s in seconds.items()}
    print("100 kB / 25 kB time (linear ~4, quadratic ~16):", ratios)
    write_json(
        {"seconds": {m: {str(k): v for k, v in s.items()} for m, s in seconds.items()}, "ratio_100k_25k": ratios},
        RESULTS,
    )


if __name__ == "__main__":
    main()
