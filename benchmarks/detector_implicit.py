"""How many implicit references does each attribute detector catch?

The LLM filter of paper 000 rejects a rewrite that still refers to the attribute ("attribute reference ≥ 0.5"). A
keyword detector sees only the attribute's word list: "My Egyptian neighbour shares sweets with everyone during Eid."
passes as "not about Muslims". This script runs the detectors on two sets of 72 sentences written for counterfair
(redistributable with it), 18 per attribute (islam, judaism, lgbq, transgender): 8 that allude to the group without
naming it (Eid, a menorah, a husband's husband, a gender marker), 4 that name it, 6 near-misses that refer to no
group or to another one (a church choir, a birthday candle, Easter lamb). ``implicit_references.csv`` (``dev``) is the
set the keyword+llm question was chosen on (three phrasings and one worked pair were tried on it);
``implicit_references_heldout.csv`` (``heldout``) was written and committed before any of that, and is read only
here. The implicit sentences hold no term of the attribute's word list: the keyword detector's 0 there is by
construction; the question is what the LLM detectors catch, how many near-misses they flag, and what they cost per
text. ``keyword+llm`` is refused for an LLM that fails its control questions: the row says so.

``head`` tries the other route to a detector that sees implicit references, with the data available offline: a
logistic-regression head on all-MiniLM-L6-v2 embeddings per attribute, trained on the Civil Comments of
``../shared/data/nlp_ctf`` (MIT) labelled by the attribute's word list with every list term removed from the text (so
the head must learn the context, not the term), and 3,000 identity-free IMDB sentences as negatives.

Usage: python benchmarks/detector_implicit.py [--llms SPEC,SPEC] [--detectors keyword,keyword+llm,llm,head]
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

from counterfair.detectors import DETECTORS_WITH_LLM, load_detector
from counterfair.errors import ConfigError
from counterfair.lexicons.attributes import load_attribute
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "dev": ROOT / "benchmarks" / "data" / "implicit_references.csv",
    "heldout": ROOT / "benchmarks" / "data" / "implicit_references_heldout.csv",
}
RESULTS = ROOT / "benchmarks" / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--llms",
        default="llamacpp:qwen2.5-coder-0.5b-instruct,llamacpp:qwen2.5-coder-1.5b-instruct",
        help="the LLMs the llm and keyword+llm detectors run with, one after another",
    )
    parser.add_argument("--detectors", default="keyword,keyword+llm,llm,head")
    args = parser.parse_args()
    frame = pd.concat([pd.read_csv(path).assign(set=name) for name, path in SETS.items()], ignore_index=True)
    results: dict[str, Any] = {
        "benchmark": "detector_implicit",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "args": vars(args),
        "texts": {name: int((frame["set"] == name).sum()) for name in SETS},
        "detectors": {},
    }
    rows: list[dict[str, Any]] = []
    chosen = args.detectors.split(",")
    with_llm = [d for d in chosen if d in DETECTORS_WITH_LLM]
    runs = [(spec, None) for spec in chosen if spec not in (*DETECTORS_WITH_LLM, "head")]
    runs += [(spec, name) for name in args.llms.split(",") for spec in with_llm]
    llms: dict[str, Any] = {}
    for spec, llm_spec in runs:
        llm, key = None, spec
        if llm_spec is not None:
            if llm_spec not in llms:
                from counterfair.llm import load_llm
                from counterfair.llm.base import SamplingParams

                llms.clear()  # one model in memory at a time
                llms[llm_spec] = load_llm(llm_spec)
                llms[llm_spec].chat([[{"role": "user", "content": "Say ok."}]], SamplingParams(max_tokens=2))
            llm, key = llms[llm_spec], f"{spec} ({llm_spec.partition(':')[2]})"
        results["detectors"][key] = run_detector(spec, llm, frame, key, rows)
    if "head" in chosen:
        t0 = time.perf_counter()
        results["head_training"] = head_detector(frame, rows)
        results["detectors"]["head"] = {"seconds": round(time.perf_counter() - t0, 2), "seconds_per_text": None}
    table = pd.DataFrame(rows)
    lines = [
        "| detector | allusions caught (dev / held-out) | named caught | near-misses flagged, false (dev / held-out) "
        "| F1 (dev / held-out) | unparsed | s per text |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, found in results["detectors"].items():
        if "refused" in found:
            lines.append(f"| {key} | refused: fails its control questions | | | | | |")
            continue
        part = table[table["detector"] == key]

        def share(kind: str, which: str | None = None, part: pd.DataFrame = part) -> str:
            sub = part[(part["kind"] == kind) & ((part["set"] == which) if which else True)]
            return f"{int((sub['reference'] == True).sum())}/{len(sub)}"  # noqa: E712 (None: unparsed)

        def f1(which: str, part: pd.DataFrame = part) -> float:
            """F1 of "refers to the group" (allusions and named ones) against the near-misses; unparsed count as no."""
            sub = part[part["set"] == which]
            said, truth = sub["reference"] == True, sub["kind"] != "none"  # noqa: E712
            hit = int((said & truth).sum())
            return round(2 * hit / (int(said.sum()) + int(truth.sum())), 3)

        found |= {
            "f1": {name: f1(name) for name in SETS},
            "implicit": {name: share("implicit", name) for name in SETS},
            "explicit": share("explicit"),
            "none_flagged": {name: share("none", name) for name in SETS},
            "unparsed": int(part["reference"].isna().sum()),
            "by_attribute": {
                f"{a} ({w})": {k: share(k, w, p) for k in ("implicit", "explicit", "none")}
                for (a, w), p in part.groupby(["attribute", "set"])
            },
        }
        lines.append(
            f"| {key} | {share('implicit', 'dev')} / {share('implicit', 'heldout')} | {share('explicit')} | "
            f"{share('none', 'dev')} / {share('none', 'heldout')} | {found['f1']['dev']:.2f} / "
            f"{found['f1']['heldout']:.2f} | {found['unparsed']} | "
            f"{found['seconds_per_text'] or 0:.2f} |"
        )
    results["rows"] = rows
    results["table"] = "\n".join(lines)
    print(results["table"])
    for key, found in results["detectors"].items():
        print(key, found.get("by_attribute", found.get("refused")))
    write_json(results, RESULTS / "detector_implicit.json")
    print(f"wrote {RESULTS / 'detector_implicit.json'}")


def run_detector(spec: str, llm: Any, frame: pd.DataFrame, key: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One detector over both sets, attribute by attribute; its verdicts appended to ``rows``."""
    seconds = 0.0
    for (attribute, which), part in frame.groupby(["attribute", "set"], sort=False):
        detector = load_detector(spec, load_attribute(str(attribute)), llm=llm)
        t0 = time.perf_counter()
        try:
            proba = detector.reference_proba(part["text"].tolist())
        except ConfigError as refused:  # keyword+llm with an LLM that fails its control questions
            return {"refused": str(refused)}
        seconds += time.perf_counter() - t0
        for (_, row), p in zip(part.iterrows(), proba, strict=True):
            rows.append({"detector": key, "set": which, "attribute": attribute, "kind": row["kind"]})
            rows[-1] |= {"text": row["text"], "p": None if p != p else round(float(p), 4)}
            rows[-1]["reference"] = None if p != p else bool(p >= 0.5)
    return {"seconds": round(seconds, 2), "seconds_per_text": round(seconds / len(frame), 3)}


def head_detector(frame: pd.DataFrame, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Train the per-attribute heads (distant labels, terms removed) and add their verdicts on ``frame`` to ``rows``."""
    import sys

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from clp_pair_density import filler_sentences
    from counterfair.encoders import embed
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
            rows.append({"detector": "head", "set": row["set"], "attribute": attribute, "kind": row["kind"]})
            rows[-1] |= {"text": row["text"], "p": round(float(p), 4)}
            rows[-1]["reference"] = bool(p >= 0.5)
    return info


if __name__ == "__main__":
    main()
