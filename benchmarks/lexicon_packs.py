"""Benchmark of the lexicon packs (#19): gender, first names and nationality swaps on real comments.

On the Civil Comments of ``../shared/data/nlp_ctf/civil_comments`` (non-toxic training comments, toxic training
comments and held-out test comments; the text column only):

1. **Reach** — how many comments each pack finds, and how many get a variant (binary gender swap, non-binary
   variant, name swap, nationality swap); the statuses of the comments that get none (why not).
2. **Speed** — comments per second of each pack's editor (one run, 2 CPU cores; spaCy parses are cached per text,
   so every pack starts from a cleared cache).
3. **Samples** — 15 binary and 15 non-binary gender variants, 10 name and 10 nationality variants drawn with a fixed
   seed, printed and saved for reading by hand (the README's benchmark table says what the reading found).

Usage: python benchmarks/lexicon_packs.py [--limit N]
Results: benchmarks/results/lexicon_packs.json
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import random
import time
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.editors.gender import GenderSwapEditor
from counterfair.editors.guard import forget_parses
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.lexicons.attributes import load_swap_set

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "nlp_ctf" / "civil_comments"
FILES = ("civil_train_data.csv", "civil_toxic_train_data.csv", "civil_test_data.csv")
OUT = Path(__file__).resolve().parent / "results" / "lexicon_packs.json"


def comments(limit: int | None) -> list[str]:
    texts: list[str] = []
    for name in FILES:
        frame = pd.read_csv(DATA / name)
        column = "comment_text" if "comment_text" in frame else frame.columns[0]
        texts += [str(t) for t in frame[column].dropna().tolist()]
    unique = list(dict.fromkeys(texts))
    return unique[:limit] if limit else unique


def run_gender(texts: list[str]) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    forget_parses()
    editor = GenderSwapEditor()
    t0 = time.perf_counter()
    out = editor.edit(texts)
    seconds = time.perf_counter() - t0
    found = sum(1 for n, _ in editor.last_counts if n)
    directions = collections.Counter(c.meta["direction"] for cands in out for c in cands)
    notes = collections.Counter(
        n.rsplit(":", 1)[0] if "unknown_name" in n or "no_form" in n else n for ns in editor.last_notes for n in ns
    )
    samples = [(c.meta["direction"], t, c.text) for t, cands in zip(texts, out, strict=True) for c in cands]
    return {
        "texts_with_gender_words": found,
        "binary_variants": directions["swap"],
        "neutral_variants": directions["neutral"],
        "binary_share": round(directions["swap"] / found, 3) if found else None,
        "neutral_share": round(directions["neutral"] / found, 3) if found else None,
        "left_out": dict(notes.most_common()),
        "unknown_names_top": collections.Counter(
            n.rsplit(":", 1)[1] for ns in editor.last_notes for n in ns if "unknown_name" in n
        ).most_common(15),
        "seconds": round(seconds, 2),
        "texts_per_second": round(len(texts) / seconds, 1),
    }, samples


def run_identity(name: str, texts: list[str]) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    forget_parses()
    editor = IdentitySwapEditor(load_swap_set(name))
    t0 = time.perf_counter()
    out = editor.edit(texts)
    seconds = time.perf_counter() - t0
    reached = sum(1 for cands in out if cands)
    terms = collections.Counter(c.meta["source_term"] for cands in out for c in cands[:1])
    samples = [(c.meta["target_term"], t, c.text) for t, cands in zip(texts, out, strict=True) for c in cands]
    return {
        "texts_with_terms": sum(1 for n, _ in editor.last_counts if n),
        "texts_with_variants": reached,
        "variants": sum(len(c) for c in out),
        "guard_blocked": editor.blocked,
        "source_terms_top": terms.most_common(15),
        "seconds": round(seconds, 2),
        "texts_per_second": round(len(texts) / seconds, 1),
    }, samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="Only the first N comments.")
    args = parser.parse_args()
    texts = comments(args.limit)
    rng = random.Random(0)
    result: dict[str, Any] = {"machine": platform.processor() or platform.machine(), "comments": len(texts)}
    gender, gender_samples = run_gender(texts)
    result["gender"] = gender
    short = [s for s in gender_samples if len(s[1]) < 220]
    result["gender_samples"] = {d: rng.sample([s[1:] for s in short if s[0] == d], 15) for d in ("swap", "neutral")}
    for name in ("names", "nationality"):
        stats, samples = run_identity(name, texts)
        result[name] = stats
        result[f"{name}_samples"] = rng.sample([s[1:] for s in samples if len(s[1]) < 220], min(10, len(samples)))
    print(json.dumps({k: v for k, v in result.items() if not k.endswith("samples")}, indent=1))
    for key in ("gender_samples", "names_samples", "nationality_samples"):
        groups = result[key].items() if isinstance(result[key], dict) else [(key, result[key])]
        for label, rows in groups:
            print(f"\n== {label}")
            for before, after in rows:
                print(f"- {before}\n  -> {after}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {OUT}")


if __name__ == "__main__":
    main()
