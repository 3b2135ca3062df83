"""The classifier stage on a local 2-worker Ray cluster against the local engine (#47, "past one machine").

``audit``, ``ctf``, ``bias`` and ``suite run`` take ``--engine ray``: the classifier's batches go to Ray actors,
each building the classifier from its spec once, and come back in order into the same cache, validation and run store
as a local call (outputs byte-identical: ``tests/test_engine.py``). This measures, in one run with the engines
alternated: ``bias`` on ``--texts`` synthetic labelled sentences (the identity guard off, so the classifier is most of
the work) with the built-in profanity-check, and a slower classifier (``callable:`` profanity-check plus a fixed
``--delay`` per text, standing for a transformer), each as the wall time of the whole command; Ray started once before
(``ray.init(num_cpus=2)``), the actors built per run. The ratio is Ray's time over local's: above 1 Ray costs more
than it gives on one 2-core machine; a cluster adds workers, not cores to this machine.

``--audit`` adds #68's row: an ``audit`` of ``--texts`` synthetic sentences, one in 20 naming an identity (as in a
comment corpus, where most texts name none), against the slow classifier. The audit calls the classifier ~90 times
(one per slot and attribute): the Ray engine keeps one actor pool for the whole run, and the row shows what that pool
costs against the local engine, with pairs.csv compared byte for byte in every round.

``--parts startup`` measures what the Ray engine adds before a run's first batch: ``counterfair audit`` of 6 texts in a
fresh process, ``--engine ray`` (a local Ray started by the command, its actors built) against ``--engine local``,
alternated; the median difference is ``startup_s``, which the audit's up-front estimate adds for ``--engine ray``
(``counterfair.engine.STARTUP_SECONDS``).

    python benchmarks/engine_classifier.py [--texts 20000] [--rounds 3] [--parts bias,audit,startup]

Writes ``benchmarks/results/engine_classifier.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SLOW = """
import time
from profanity_check import predict_prob

def slow(texts):
    time.sleep(DELAY * len(texts))
    return predict_prob(list(texts))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.0005)
    parser.add_argument("--parts", default="bias,audit,startup", help="bias, audit, startup (the JSON keeps the rest)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "engine_classifier.json")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    import ray

    from counterfair.commands.audit.core import AuditOptions
    from counterfair.commands.audit.shell import run_audit
    from counterfair.commands.bias.core import BiasOptions
    from counterfair.commands.bias.shell import run_bias

    os.environ["COUNTERFAIR_STORE"] = "off"  # every run predicts every text
    scratch = Path(tempfile.mkdtemp(prefix="counterfair-engine-"))
    slow = scratch / "slow.py"
    slow.write_text(SLOW.replace("DELAY", repr(args.delay)))
    words = ("gay", "Muslim", "tall", "Jewish", "old", "quiet")
    texts = [f"The {words[i % 6]} neighbour number {i} said hello." for i in range(args.texts)]
    data = pd.DataFrame({"text": texts, "label": [i % 2 for i in range(args.texts)]})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    times: dict[str, dict[str, list[float]]] = {}
    slow_name = f"+{args.delay * 1000:g} ms a text"
    for name, spec in (
        (
            ("profanity-check", "profanity-check"),
            (slow_name, f"callable:{slow}:slow"),
        )
        if "bias" in parts
        else ()
    ):
        times[name] = {"local": [], "ray": []}
        for r in range(args.rounds):
            for engine in ("local", "ray") if r % 2 == 0 else ("ray", "local"):
                out = scratch / f"{name}-{engine}-{r}".replace(" ", "_")
                start = time.perf_counter()
                run_bias(data, out, BiasOptions(classifier=spec, engine=engine, guard=False, bootstrap=0))
                times[name][engine].append(time.perf_counter() - start)
            same = (scratch / f"{name}-local-{r}".replace(" ", "_") / "rows.csv").read_bytes() == (
                scratch / f"{name}-ray-{r}".replace(" ", "_") / "rows.csv"
            ).read_bytes()
            assert same, "the Ray engine's rows.csv differs from the local one"
    audit_pairs = 0
    if "audit" in parts:
        audit_name = f"audit, {slow_name}"
        times[audit_name] = {"local": [], "ray": []}
        identity = ("gay", "Muslim", "Jewish", "Black", "Christian")
        plain = ("tall", "quiet", "new", "kind", "busy")
        audit_texts = pd.DataFrame(
            {
                "text": [
                    f"The {identity[(i // 20) % 5] if i % 20 == 0 else plain[i % 5]} neighbour number {i} said hello."
                    for i in range(args.texts)
                ]
            }
        )
        for r in range(args.rounds):
            for engine in ("local", "ray") if r % 2 == 0 else ("ray", "local"):
                out = scratch / f"audit-{engine}-{r}"
                start = time.perf_counter()
                run_audit(audit_texts, out, AuditOptions(classifier=f"callable:{slow}:slow", engine=engine))
                times[audit_name][engine].append(time.perf_counter() - start)
                print(f"audit {engine} round {r}: {times[audit_name][engine][-1]:.1f} s", flush=True)
            local_pairs = (scratch / f"audit-local-{r}" / "pairs.csv").read_bytes()
            assert local_pairs == (scratch / f"audit-ray-{r}" / "pairs.csv").read_bytes(), (
                "the Ray engine's pairs.csv differs from the local one"
            )
            audit_pairs = local_pairs.count(b"\n") - 1
    ray.shutdown()
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    startup = startup_seconds(scratch, args.rounds) if "startup" in parts else previous.get("startup")
    lines = ["| classifier | texts | local (median) | Ray, 2 workers (median) | Ray / local |", "|---|---|---|---|---|"]
    results = {name: value for name, value in previous.get("results", {}).items() if name not in times}
    for name, by in times.items():
        local, remote = statistics.median(by["local"]), statistics.median(by["ray"])
        results[name] = {"local_s": by["local"], "ray_s": by["ray"], "ratio": remote / local}
        if name.startswith("audit"):
            results[name]["pairs"] = audit_pairs
    for name, value in results.items():
        local, remote = statistics.median(value["local_s"]), statistics.median(value["ray_s"])
        lines.append(f"| {name} | {args.texts:,} | {local:.1f} s | {remote:.1f} s | {remote / local:.2f}× |")
    document = {
        "benchmark": "engine_classifier",
        "machine": {"cores": len(os.sched_getaffinity(0)), "load_before": [round(x, 2) for x in os.getloadavg()]},
        "texts": args.texts,
        "rounds": args.rounds,
        "results": results,
        "startup": startup,
        "table": "\n".join(lines),
    }
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(document["table"])


def startup_seconds(scratch: Path, rounds: int) -> dict[str, object]:
    """What ``--engine ray`` adds to a small audit run in a fresh process (a local Ray started, actors built)."""
    import subprocess

    tiny = scratch / "tiny.csv"
    pd.DataFrame(
        {"text": [f"My {w} neighbour waved." for w in ("Muslim", "Jewish", "gay", "Black", "old", "Sikh")]}
    ).to_csv(tiny, index=False)
    runs: dict[str, list[float]] = {"local": [], "ray": []}
    for r in range(rounds):
        for engine in ("local", "ray") if r % 2 == 0 else ("ray", "local"):
            command = [str(Path(sys.executable).with_name("counterfair")), "audit", str(tiny), "--engine", engine, "-q"]
            start = time.perf_counter()
            subprocess.run([*command, "--out", str(scratch / f"tiny-{engine}-{r}")], check=True, capture_output=True)
            runs[engine].append(time.perf_counter() - start)
    local, remote = statistics.median(runs["local"]), statistics.median(runs["ray"])
    print(f"a 6-text audit: local {local:.1f} s, ray {remote:.1f} s", flush=True)
    return {"local_s": runs["local"], "ray_s": runs["ray"], "startup_s": round(remote - local, 1)}


if __name__ == "__main__":
    main()
