"""How many implicit references does each attribute detector catch?

The LLM filter of paper 000 rejects a rewrite that still refers to the attribute ("attribute reference ≥ 0.5"). A
keyword detector sees only the attribute's word list: "My Egyptian neighbour shares sweets with everyone during Eid."
passes as "not about Muslims". This script runs the detectors on ``benchmarks/data/implicit_references.csv``: 72
sentences written for counterfair (redistributable with it), 18 per attribute (islam, judaism, lgbq, transgender):
8 that allude to the group without naming it (Eid, a menorah, a husband's husband, a gender marker), 4 that name it,
6 near-misses that refer to no group (a church choir, a birthday candle). The implicit sentences were written so that
none holds a term of the attribute's word list: the keyword detector's 0 there is by construction; the question is
what the LLM detector (App. C's rater question, greedy) catches, and what it costs per text.

``head`` tries the other route to a detector that sees implicit references, with the data available offline: a
logistic-regression head on all-MiniLM-L6-v2 embeddings per attribute, trained on the Civil Comments of
``../shared/data/nlp_ctf`` (MIT) labelled by the attribute's word list with every list term removed from the text (so
the head must learn the context, not the term), and 3,000 identity-free IMDB sentences as negatives.

Usage: python benchmarks/detector_implicit.py [--llms SPEC,SPEC] [--detectors keyword,llm]
Results: benchmarks/results/detector_implicit.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import platform
import time
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.detectors import load_detector
from counterfair.io import write_json
from counterfair.lexicons.attributes import load_attribute

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "implicit_references.csv"
RESULTS = ROOT / "benchmarks" / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--llms",
        default="llamacpp:qwen2.5-coder-0.5b-instruct,llamacpp:qwen2.5-coder-1.5b-instruct",
        help="the LLMs the llm detector runs with, one after another",
    )
    parser.add_argument("--detectors", default="keyword,head,llm")
    args = parser.parse_args()
    frame = pd.read_csv(DATA)
    results: dict[str, Any] = {
        "benchmark": "detector_implicit",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "args": vars(args),
        "texts": len(frame),
        "detectors": {},
    }
    rows = []
    runs = [(spec, None) for spec in args.detectors.split(",") if spec not in ("llm", "head")]
    if "llm" in args.detectors.split(","):
        runs += [("llm", name) for name in args.llms.split(",")]
    for spec, llm_spec in runs:
        llm, key = None, spec
        if llm_spec is not None:
            from counterfair.llm import load_llm
            from counterfair.llm.base import SamplingParams

            llm, key = load_llm(llm_spec), f"llm ({llm_spec.partition(':')[2]})"
            llm.chat([[{"role": "user", "content": "Say ok."}]], SamplingParams(max_tokens=2))  # load before timing
        seconds = 0.0
        for attribute, part in frame.groupby("attribute", sort=False):
            detector = load_detector(spec, load_attribute(str(attribute)), llm=llm)
            t0 = time.perf_counter()
            proba = detector.reference_proba(part["text"].tolist())
            seconds += time.perf_counter() - t0
            for (_, row), p in zip(part.iterrows(), proba, strict=True):
                rows.append({"detector": key, "attribute": attribute, "kind": row["kind"], "text": row["text"]})
                rows[-1]["reference"] = None if p != p else bool(p >= 0.5)
        results["detectors"][key] = {"seconds": round(seconds, 2), "seconds_per_text": round(seconds / len(frame), 3)}
        del llm
    if "head" in args.detectors.split(","):
        t0 = time.perf_counter()
        results["head_training"] = head_detector(frame, rows)
        results["detectors"]["head"] = {"seconds": round(time.perf_counter() - t0, 2), "seconds_per_text": None}
    table = pd.DataFrame(rows)
    lines = ["| detector | implicit caught | explicit caught | near-misses flagged (false) | unparsed | s per text |"]
    lines.append("|---|---|---|---|---|---|")
    for spec, part in table.groupby("detector", sort=False):

        def share(kind: str, part: pd.DataFrame = part) -> str:
            sub = part[part["kind"] == kind]
            return f"{int((sub['reference'] == True).sum())}/{len(sub)}"  # noqa: E712 (None: unparsed)

        unparsed = int(part["reference"].isna().sum())
        per_attribute = {
            str(a): {k: share(k, p) for k in ("implicit", "explicit", "none")} for a, p in part.groupby("attribute")
        }
        results["detectors"][spec] |= {
            "implicit": share("implicit"),
            "explicit": share("explicit"),
            "none_flagged": share("none"),
            "unparsed": unparsed,
            "by_attribute": per_attribute,
        }
        lines.append(
            f"| {spec} | {share('implicit')} | {share('explicit')} | {share('none')} | {unparsed} | "
            f"{results['detectors'][spec]['seconds_per_text'] or 0:.2f} |"
        )
    results["rows"] = rows
    results["table"] = "\n".join(lines)
    print(results["table"])
    for spec, found in results["detectors"].items():
        print(spec, found["by_attribute"])
    write_json(results, RESULTS / "detector_implicit.json")
    print(f"wrote {RESULTS / 'detector_implicit.json'}")


def head_detector(frame: pd.DataFrame, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Train the per-attribute heads (distant labels, terms removed) and add their verdicts on ``frame`` to ``rows``."""
    import sys

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from clp_pair_density import filler_sentences
    from counterfair.detectors import embed
    from counterfair.text import TermMatcher

    civil = ROOT.parent / "shared" / "data" / "nlp_ctf" / "civil_comments"
    files = ("civil_train_data.csv", "civil_toxic_train_data.csv", "civil_test_data.csv")
    comments = pd.concat([pd.read_csv(civil / f)["comment_text"] for f in files]).drop_duplicates().tolist()
    attributes = list(dict.fromkeys(frame["attribute"]))
    matchers = {a: load_attribute(a).matcher() for a in attributes}
    every_term = TermMatcher([t for a in attributes for t in load_attribute(a).terms])
    negatives = filler_sentences(3000, 0)
    x = embed([every_term.replace(c, lambda m: "")[0] for c in comments] + negatives)
    x_eval = embed(frame["text"].tolist())
    info = {"comments": len(comments), "negatives": len(negatives), "positives": {}}
    for attribute in attributes:
        y = np.array([matchers[attribute].contains(c) for c in comments] + [False] * len(negatives))
        info["positives"][attribute] = int(y.sum())
        model = LogisticRegression(max_iter=2000, class_weight="balanced").fit(x, y)
        part = (frame["attribute"] == attribute).to_numpy()
        proba = model.predict_proba(x_eval[part])[:, 1]
        for (_, row), p in zip(frame[part].iterrows(), proba, strict=True):
            rows.append({"detector": "head", "attribute": attribute, "kind": row["kind"], "text": row["text"]})
            rows[-1]["reference"] = bool(p >= 0.5)
    return info


if __name__ == "__main__":
    main()
