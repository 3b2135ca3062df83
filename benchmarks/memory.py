"""Peak memory of the main commands as the input grows (#47): ``audit``, ``ctf`` and ``bias`` on 1k, 10k, 100k and
200k short texts, each in its own process, its resident memory sampled every 0.5 s from ``/proc``
(``generate_stream.watched``).

Texts: ``scale.py``'s (Dixon's madlibs, the nlp_ctf Civil Comments, the demo sentences; numbered once repeated;
9 words on average; the madlibs come first, so nearly every text of the smaller sizes names an identity term).
Labels for ``bias``: seeded coin flips (memory does not depend on them). ``audit`` runs its default methods
(ablation, substitution, swap) with the default classifier; ``ctf`` and ``bias`` their defaults. A size is skipped
for a command once the previous sizes' rate puts its peak above ``--max-gib`` (the machine's memory is shared).

Reported per run: wall time, peak RSS, RSS at 25 / 50 / 90 % of the wall time and at each tenth, the highest RSS after
the first quarter against the RSS at 25 % (flat from 25 % to 100 % of the run: near 1×), KiB per text between the two
largest sizes run, and the peak extrapolated linearly to 200,000 texts.

``--as NAME`` keeps the other entries of the results file and stores this run (one command) under NAME, beside
the entries of earlier code (e.g. ``--commands ctf --as "ctf, tallied"``).

Usage: python benchmarks/memory.py [--sizes 1000,10000,100000,200000] [--commands audit,ctf,bias] [--max-gib 8]
       [--as NAME]
Results: benchmarks/results/memory.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure the work, not the run store's reuse

import argparse
import json
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from counterfair.writing import write_json
from generate_stream import watched
from scale import make_texts

RESULTS = Path(__file__).resolve().parent / "results" / "memory.json"
TARGET_TEXTS, TARGET_GIB = 200_000, 2.0  # #47: 200,000 texts under 2 GiB, flat from 25 % to 100 % of the run


def command_args(command: str, data: Path, out: Path) -> list[str]:
    extra = {"bias": ["--label-column", "label"]}.get(command, [])
    return [command, str(data), *extra, "--out", str(out), "-q"]


def extrapolate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """KiB per text between the two largest runs and the peak that rate gives at :data:`TARGET_TEXTS`."""
    if len(runs) < 2:
        return {"kib_per_text": None, "peak_gib_at_200k": None}
    a, b = runs[-2], runs[-1]
    per_text = (b["peak_rss_mib"] - a["peak_rss_mib"]) * 1024 / (b["texts"] - a["texts"])
    at_target = (b["peak_rss_mib"] + per_text * (TARGET_TEXTS - b["texts"]) / 1024) / 1024
    return {"kib_per_text": round(per_text, 1), "peak_gib_at_200k": round(at_target, 2)}


def table(report: dict[str, Any]) -> str:
    """The README's table (Markdown), generated from the JSON."""
    lines = [
        "| command | texts | wall | peak RSS | RSS at 25 / 50 / 90 % | highest after 25 % (× RSS at 25 %) "
        "| KiB per text | peak at 200k (meets 2 GiB?) |",
        "|---|---:|---:|---:|---|---|---:|---|",
    ]
    for command, entry in report["commands"].items():
        for i, r in enumerate(entry["runs"]):
            last = i == len(entry["runs"]) - 1
            rate = entry["kib_per_text"] if last and entry["kib_per_text"] is not None else ""
            at = entry["peak_gib_at_200k"] if last else None
            where = "" if at is None else f"{at} GiB ({'yes' if at <= TARGET_GIB else 'no'})"
            after = r.get("peak_after_25pct_mib")  # flat from 25 % to 100 %: near 1× (runs before it: not recorded)
            flat = "" if after is None else f"{after} MiB ({after / r['rss_at_25pct_mib']:.2f}×)"
            lines.append(
                f"| {command} | {r['texts']:,} | {r['wall_s']} s | {r['peak_rss_mib']} MiB | {r['rss_at_25pct_mib']} / "
                f"{r['rss_at_50pct_mib']} / {r['rss_at_90pct_mib']} MiB | {flat} | {rate} | {where} |"
            )
    return "\n".join(lines)


def _commit() -> str:
    import subprocess

    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=RESULTS.parent)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000,200000")
    parser.add_argument("--commands", default="audit,ctf,bias")
    parser.add_argument("--max-gib", type=float, default=8.0)
    parser.add_argument("--as", dest="name", help="store the one command's runs under this name, keeping the others")
    args = parser.parse_args()
    if args.name and "," in args.commands:
        parser.error("--as names the runs of one command")
    sizes = sorted(int(s) for s in args.sizes.split(","))
    report: dict[str, Any] = {
        "benchmark": "memory",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "args": vars(args),
        "target": {"texts": TARGET_TEXTS, "peak_gib": TARGET_GIB},
        "commands": {},
    }
    if args.name and RESULTS.exists():  # the other entries stay, with the machine and arguments they were run with
        kept = json.loads(RESULTS.read_text(encoding="utf-8"))
        report["commands"] = {k: v for k, v in kept.get("commands", {}).items() if k != args.name}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for command in args.commands.split(","):
            runs: list[dict[str, Any]] = []
            for n in sizes:
                guess = extrapolate(runs)
                if guess["kib_per_text"] is not None:
                    grown = guess["kib_per_text"] * (n - runs[-1]["texts"]) / 1024
                    expected = (runs[-1]["peak_rss_mib"] + grown) / 1024
                    if expected > args.max_gib:
                        print(f"{command:5} {n:>7} texts: skipped (about {expected:.1f} GiB expected)", flush=True)
                        continue
                frame = make_texts(n)
                frame["label"] = np.random.default_rng(0).integers(0, 2, n)
                data = tmp / f"texts-{n}.csv"
                frame.to_csv(data, index=False)
                run = watched(command_args(command, data, tmp / f"{command}-{n}"), "whole") | {"texts": n}
                run.pop("mode")
                runs.append(run)
                print(
                    f"{command:5} {n:>7} texts: {run['wall_s']:7.1f} s, peak {run['peak_rss_mib']} MiB, RSS at "
                    f"25/50/90 % {run['rss_at_25pct_mib']}/{run['rss_at_50pct_mib']}/{run['rss_at_90pct_mib']} MiB",
                    flush=True,
                )
            report["commands"][args.name or command] = {
                "runs": runs,
                **extrapolate(runs),
                "machine": report["machine"],
                "commit": _commit(),
            }
            write_json(report, RESULTS)  # what is measured so far survives a later size's failure
    report["table"] = table(report)
    write_json(report, RESULTS)
    print(report["table"])


if __name__ == "__main__":
    main()
