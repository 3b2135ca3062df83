"""What the default detector of an LLM run (keyword+llm, #34 item 2) costs and changes, against keyword.

The same LLM rewrites (paper 000's settings: 16 samples, up to 5 attempts, seeded) of the demo's texts that reference
a word-list attribute (islam, judaism, lgbq, transgender; up to ``--per-attribute`` each) are filtered once with
``--detector keyword`` and once with the default (``auto``, which is keyword+llm for the llm method). Reports each
run's wall time, the seconds spent in the detector, how many distinct rewrites its LLM was asked about (only those
every other filter passed), how many chosen rewrites differ, and the rewrites keyword passed and chose that keyword+llm
rejects as still referring to the group (with the LLM's probability), so they can be read.

Usage: python benchmarks/detector_cost.py [--llm SPEC] [--per-attribute 3]
Results: benchmarks/results/detector_cost.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.commands.audit.options import demo_path
from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.recipe import Generator
from counterfair.commands.generate.shell import run_generate
from counterfair.lexicons.attributes import load_attribute
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
ATTRIBUTES = ("islam", "judaism", "lgbq", "transgender")


def timed_detector(generator: Generator) -> list[float]:
    """Wrap the filter's detector so the seconds it spends are counted (in the returned list's first cell)."""
    spent = [0.0]
    detector = generator.filter.detector
    assert detector is not None
    inner = detector.reference_proba

    def reference_proba(texts: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return inner(texts)
        finally:
            spent[0] += time.perf_counter() - t0

    detector.reference_proba = reference_proba  # type: ignore[method-assign]
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default="llamacpp:qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--per-attribute", type=int, default=3)
    args = parser.parse_args()
    demo = pd.read_csv(demo_path())
    results: dict[str, Any] = {
        "benchmark": "detector_cost",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "args": vars(args),
        "attributes": {},
    }
    totals = {"keyword": 0.0, "auto": 0.0, "detector_keyword": 0.0, "detector_auto": 0.0}
    changed: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for attribute in ATTRIBUTES:
            matcher = load_attribute(attribute).matcher()
            texts = [t for t in demo["text"] if matcher.contains(t)][: args.per_attribute]
            frame = pd.DataFrame({"text": texts})
            chosen: dict[str, pd.DataFrame] = {}
            entry: dict[str, Any] = {"texts": len(texts)}
            for detector in ("keyword", "auto"):
                options = GenerateOptions(attribute=attribute, methods=["llm"], llm=args.llm, detector=detector)
                generator = Generator(options)
                spent = timed_detector(generator)
                t0 = time.perf_counter()
                result = run_generate(frame, Path(tmp) / f"{attribute}-{detector}", options, generator=generator)
                seconds = time.perf_counter() - t0
                totals[detector] += seconds
                totals[f"detector_{detector}"] += spent[0]
                cands = result.candidates
                entry[detector] = {
                    "detector": options.detector,
                    "seconds": round(seconds, 1),
                    "detector_seconds": round(spent[0], 1),
                    "candidates": len(cands),
                    "rejected_as_referring": int((cands["status"] == "filtered:references_attribute").sum()),
                    # distinct rewrites put to the LLM: only those every other filter passed
                    "asked_llm": getattr(generator.filter.detector, "asked", 0),
                    "with_counterfactual": int((result.counterfactuals["status"] == "ok").sum()),
                    "attempts": int(result.counterfactuals["attempts"].sum()),
                }
                chosen[detector] = result.counterfactuals
                if detector == "auto":
                    probs = cands.drop_duplicates("text").set_index("text")["attribute_prob"]
            before, after = chosen["keyword"], chosen["auto"]
            entry["chosen_differs"] = int((before["text"].fillna("") != after["text"].fillna("")).sum())
            for (_, b), (_, a) in zip(before.iterrows(), after.iterrows(), strict=True):
                if b["text"] != a["text"]:
                    prob = probs.get(b["text"]) if isinstance(b["text"], str) else None
                    changed.append(
                        {
                            "attribute": attribute,
                            "source": b["source_text"],
                            "keyword_chose": b["text"],
                            "its_llm_probability": None if prob is None else round(float(prob), 3),
                            "keyword_llm_chose": a["text"] if a["status"] == "ok" else None,
                            "keyword_llm_status": a["status"],
                        }
                    )
            results["attributes"][attribute] = entry
            print(attribute, entry, flush=True)
    results["totals"] = {k: round(v, 1) for k, v in totals.items()}
    results["totals"]["wall_ratio"] = round(totals["auto"] / totals["keyword"], 3)
    results["changed"] = changed
    print(results["totals"])
    for row in changed:
        print(row)
    write_json(results, RESULTS / "detector_cost.json")
    print(f"wrote {RESULTS / 'detector_cost.json'}")


if __name__ == "__main__":
    main()
