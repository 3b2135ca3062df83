"""The report's and the rating app's edit highlighter: the earlier difflib version against the current one.

Three cases per size: an identity swap of every occurrence in a repetitive text (a sentence repeated; the case that
made the difflib version super-linear), two swaps in running text (words drawn with a fixed seed from a 400-word
vocabulary), and a rewrite (another such text). The difflib version is timed up to 28.8 KB. Writes
benchmarks/results/edit_html_speed.json.
"""

from __future__ import annotations

import difflib
import html
import json
import time
from pathlib import Path

from counterfair.views.report import edit_html

RESULTS = Path(__file__).resolve().parent / "results" / "edit_html_speed.json"
VOCABULARY = [f"word{i}" for i in range(400)]
UNIT = "The Muslim family next door invited us to dinner and the food was wonderful, we talked for hours. "


def running_text(n_bytes: int, seed: int = 0) -> str:
    import random

    rng = random.Random(seed)
    words: list[str] = []
    size = 0
    while size < n_bytes:
        words.append(rng.choice(VOCABULARY))
        size += len(words[-1]) + 1
    middle = len(words) // 2
    words[middle] = "Muslim"
    words[-20] = "wonderful"
    return " ".join(words)


def difflib_version(original: str, counterfactual: str) -> str:
    """The highlighter as it was before this change (kept here only to measure against)."""
    a, b = original.split(), counterfactual.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(html.escape(" ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(f"<del>{html.escape(' '.join(a[i1:i2]))}</del>")
        if j2 > j1:
            out.append(f"<ins>{html.escape(' '.join(b[j1:j2]))}</ins>")
    return " ".join(out)


def timed(fn: object, a: str, b: str) -> float:
    started = time.perf_counter()
    fn(a, b)  # type: ignore[operator]
    return round(time.perf_counter() - started, 4)


def main() -> None:
    rows = []
    for size_kb in (3.6, 7.2, 14.4, 28.8, 1000.0):
        text = running_text(int(size_kb * 1000))
        cf = text.replace("Muslim", "Christian", 1).replace("wonderful", "fine", 1)
        rewrite = running_text(int(size_kb * 1000), seed=1)  # an LLM-style rewrite: nearly every word differs
        repeated = UNIT * int(size_kb * 1000 / len(UNIT))
        cases = (
            ("swap every occurrence", repeated, repeated.replace("Muslim", "Christian")),
            ("two swaps", text, cf),
            ("rewrite", text, rewrite),
        )
        for case, one, other in cases:
            row = {"case": case, "kb": size_kb, "current_s": timed(edit_html, one, other)}
            row["html_chars"] = len(edit_html(one, other))
            if size_kb <= 28.8:
                row["difflib_s"] = timed(difflib_version, one, other)
                row["speedup"] = round(row["difflib_s"] / max(row["current_s"], 1e-6), 1)
            rows.append(row)
            print(json.dumps(row))
    RESULTS.write_text(json.dumps({"rows": rows}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
