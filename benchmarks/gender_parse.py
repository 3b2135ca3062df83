"""The gender swap's cost on real comments, and how many texts spaCy parses (#86 item 1), now and before.

The texts: the calibration pool (the Civil Comments of ``../shared/data/nlp_ctf`` that name a Dixon identity term and
the CAD-IMDB reviews that name a first name; 1,059 texts, about two in five with a gendered word), numbered into
``--texts`` distinct ones. Each variant runs :class:`~counterfair.editors.gender.GenderSwapEditor` ``.edit`` over them
in a fresh process (spaCy loaded first, outside the timing) and reports the CPU seconds of the edit, the texts spaCy
parsed (one at a time and in ``nlp.pipe`` batches), the candidates written and a digest of their texts (the same
before and after); beside them, the floor: one batched ``nlp.pipe`` over the texts the swap needs parsed. With
``--before-src DIR`` (the ``src`` folder of an older checkout, e.g. a ``git worktree``) the same runs on that code in
the same invocation, alternating, so the ratio is fair on a shared machine.

Usage: python benchmarks/gender_parse.py [--texts 3000] [--rounds 2] [--before-src /tmp/before/src]
Results: benchmarks/results/gender_parse.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_run import before_commit, cpu_model, markdown_table, save_result

RESULTS = Path(__file__).resolve().parent / "results" / "gender_parse.json"

ONE_RUN = r"""
import json, sys, time
sys.path.insert(0, BENCH)
import spacy.language
from counterfair.editors.gender import GenderSwapEditor
from counterfair.editors.guard import _spacy_model
texts = json.load(open(TEXTS))
counts = {"one": 0, "piped": 0}
call, pipe = spacy.language.Language.__call__, spacy.language.Language.pipe
def counted_call(self, text, *a, **k):
    counts["one"] += 1
    return call(self, text, *a, **k)
def counted_pipe(self, texts, *a, **k):
    for doc in pipe(self, texts, *a, **k):
        counts["piped"] += 1
        yield doc
spacy.language.Language.__call__ = counted_call
spacy.language.Language.pipe = counted_pipe
editor = GenderSwapEditor()
nlp = _spacy_model()
nlp("warm the model up")
counts["one"] = 0
started = time.process_time()
out = editor.edit(texts)
seconds = time.process_time() - started
wanted = [t for t in texts if editor._matcher.contains(t)]
counted = dict(counts)
started = time.process_time()
list(pipe(nlp, wanted, batch_size=256))
floor = time.process_time() - started
import hashlib
digest = hashlib.sha256("\n".join(c.text for cands in out for c in cands).encode()).hexdigest()[:16]
print(json.dumps({"candidates_sha256": digest, "seconds": seconds, "parsed_one_at_a_time": counted["one"],
                  "parsed_in_batches": counted["piped"], "candidates": sum(map(len, out)),
                  "texts_with_gender_words": len(wanted), "floor_seconds": floor}))
"""


def texts(n: int) -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from calibration import pool_texts

    pool = pool_texts(1100, 1000)
    return [
        t if i < len(pool) else f"{t} ({i // len(pool)})" for i, t in enumerate(pool[i % len(pool)] for i in range(n))
    ]


def one_run(src: str | None, data: Path) -> dict[str, Any]:
    code = ONE_RUN.replace("BENCH", repr(str(Path(__file__).resolve().parent))).replace("TEXTS", repr(str(data)))
    env = {**os.environ, "COUNTERFAIR_STORE": "off"}
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before-src", help="the src folder of the code to compare with")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    data = Path("/tmp") / f"gender_parse_{args.texts}.json"
    data.write_text(json.dumps(texts(args.texts)))
    variants = [("now", None)] + ([("before", args.before_src)] if args.before_src else [])
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in variants}
    for _ in range(args.rounds):
        for name, src in variants:
            runs[name].append(one_run(src, data))
            print(name, runs[name][-1], flush=True)
    summary = {}
    for name, found in runs.items():
        seconds = statistics.median(r["seconds"] for r in found)
        floor = statistics.median(r["floor_seconds"] for r in found)
        summary[name] = {**found[-1], "seconds": round(seconds, 2), "floor_seconds": round(floor, 2),
                         "times_the_floor": round(seconds / floor, 2)}  # fmt: skip
    rows = [
        (name, s["seconds"], s["times_the_floor"], s["parsed_one_at_a_time"], s["parsed_in_batches"], s["candidates"])
        for name, s in summary.items()
    ]
    document: dict[str, Any] = {
        "benchmark": "gender_parse",
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
        "texts": args.texts,
        "rounds": args.rounds,
        "before_commit": before_commit(args.before_src) if args.before_src else None,
        "results": summary,
        "runs": runs,
    }
    if "before" in summary:
        document["speedup"] = round(summary["before"]["seconds"] / summary["now"]["seconds"], 2)
        document["same_candidates"] = summary["before"]["candidates_sha256"] == summary["now"]["candidates_sha256"]
    columns = ("code", "gender swap CPU s", "× one batched parse", "parsed one at a time", "parsed in batches",
               "candidates")  # fmt: skip
    document["table"] = markdown_table(columns, rows)
    save_result(document, args.out)


if __name__ == "__main__":
    main()
