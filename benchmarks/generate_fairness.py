"""Benchmark of ``counterfair generate`` (issue: counterfactual generation for fairness probing).

1. **Throughput** — candidates/s of ablation, substitution and swap on the real Civil Comments of
   ``../shared/data/nlp_ctf/civil_comments/civil_train_data.csv`` (non-toxic, each with a training identity term;
   531 rows as pandas reads the file), and of the LLM editor.
2. **Prefix reuse** — LLM seconds per input for 16 samples with the few-shot prefix's KV state reused and
   without (cache cleared before every call), on the same inputs and seeds (target: >= 2x).
3. **Quality** — on the 40 identity-referencing sentences of ``benchmarks/data/fairness_sentences.csv``
   (written for this benchmark): share of inputs with a counterfactual, share still referencing the attribute
   (keyword detector, and the LLM detector of App. C), BLEU and BERTScore distributions per method.
4. **Guard** — how often the identity guard matters: occurrences of identity terms in the Civil Comments
   texts that it keeps from being swapped, per term, with examples.

Usage: python benchmarks/generate_fairness.py [--llm SPEC] [--reuse-inputs 4] [--skip-llm] [--only PARTS]
Results: benchmarks/results/generate_fairness.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import collections
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.recipe import Generator
from counterfair.commands.generate.shell import run_generate
from counterfair.detectors import KeywordDetector, LLMDetector
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.editors.wordlist import AblationEditor, SubstitutionEditor
from counterfair.lexicons.attributes import load_attribute, load_identity_set
from counterfair.llm import load_llm
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
CIVIL = ROOT.parent / "shared" / "data" / "nlp_ctf" / "civil_comments" / "civil_train_data.csv"
SENTENCES = ROOT / "benchmarks" / "data" / "fairness_sentences.csv"
RESULTS = ROOT / "benchmarks" / "results"


def throughput(texts: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"texts": len(texts)}
    islam = load_attribute("islam")
    for name, editor in (
        ("ablation", AblationEditor(islam)),
        ("substitution", SubstitutionEditor(islam)),
        ("swap (no guard)", IdentitySwapEditor(load_identity_set(), guard=None)),
        ("swap (spaCy guard)", IdentitySwapEditor(load_identity_set(), guard="spacy")),
    ):
        editor.edit(texts[:50])  # warm-up (loads spaCy for the guard)
        started = time.perf_counter()
        candidates = sum(len(c) for c in editor.edit(texts))
        seconds = time.perf_counter() - started
        out[name] = {
            "candidates": candidates,
            "seconds": round(seconds, 3),
            "candidates_per_s": round(candidates / seconds, 1),
            "texts_per_s": round(len(texts) / seconds, 1),
        }
        print(f"{name:20} {candidates:7d} candidates in {seconds:6.2f} s = {candidates / seconds:9.1f}/s")
    return out


def guard_effect(texts: list[str]) -> dict[str, Any]:
    editor = IdentitySwapEditor(load_identity_set(), guard="spacy")
    found = [editor._matcher.find(t) for t in texts]
    kept = editor.identity_matches(texts)
    blocked: collections.Counter[str] = collections.Counter()
    seen: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    for text, f, k in zip(texts, found, kept, strict=True):
        kept_spans = {(m.start, m.end) for m in k}
        for m in f:
            seen[m.term] += 1
            if (m.start, m.end) not in kept_spans:
                blocked[m.term] += 1
                if len(examples[m.term]) < 3:
                    examples[m.term].append(text[max(0, m.start - 60) : m.end + 60])
    total, total_blocked = sum(seen.values()), sum(blocked.values())
    ambiguous = {t: (seen[t], blocked[t]) for t in seen if t in editor.identities.ambiguous}
    texts_changed = sum(1 for f, k in zip(found, kept, strict=True) if len(f) != len(k))
    print(
        f"guard: {total_blocked} of {total} identity-term occurrences blocked ({total_blocked / total:.1%}); "
        f"{texts_changed} of {len(texts)} texts affected"
    )
    return {
        "occurrences": total,
        "blocked": total_blocked,
        "blocked_share": total_blocked / total,
        "texts_affected": texts_changed,
        "texts": len(texts),
        "ambiguous_terms": {t: {"occurrences": n, "blocked": b} for t, (n, b) in sorted(ambiguous.items())},
        "examples_blocked": dict(examples),
    }


def prefix_reuse(llm_spec: str, texts: list[str], samples: int) -> dict[str, Any]:
    from counterfair.editors.llm_rewrite import LLMRewriteEditor

    attribute = load_attribute("islam")
    out: dict[str, Any] = {"inputs": len(texts), "samples": samples, "llm": llm_spec}
    for reuse in (True, False):
        llm = load_llm(llm_spec, reuse_prefix=reuse)
        editor = LLMRewriteEditor(llm, attribute, n=samples)
        editor.sample(["A warm-up sentence about a mosque."])  # loads the model; not timed
        started = time.perf_counter()
        results = editor.sample(texts)
        seconds = time.perf_counter() - started
        key = "with_reuse" if reuse else "without_reuse"
        out[key] = {
            "seconds": round(seconds, 2),
            "seconds_per_input": round(seconds / len(texts), 2),
            "texts": [[c.text for c in cands] for cands in results],
        }
        print(f"LLM {key:14} {seconds / len(texts):6.2f} s per input ({samples} samples)")
        del llm
    out["speedup"] = round(out["without_reuse"]["seconds"] / out["with_reuse"]["seconds"], 2)
    same = sum(
        a == b
        for x, y in zip(out["with_reuse"]["texts"], out["without_reuse"]["texts"], strict=True)
        for a, b in zip(x, y, strict=True)
    )
    out["identical_samples"] = f"{same} of {len(texts) * samples}"
    return out


def quality(llm_spec: str | None, skip_llm: bool) -> dict[str, Any]:
    frame = pd.read_csv(SENTENCES)
    methods = ["ablation", "substitution", "swap"] + ([] if skip_llm else ["llm"])
    report: dict[str, Any] = {}
    llm = None if skip_llm or llm_spec is None else load_llm(llm_spec)
    for attribute, group in frame.groupby("attribute", sort=False):
        options = GenerateOptions(attribute=str(attribute), methods=methods, id_column="id")
        if llm_spec:
            options.llm = llm_spec
        generator = Generator(options)
        if llm is not None:
            generator._llm = llm
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            result = run_generate(group.reset_index(drop=True), tmp, options, generator=generator)
            elapsed = time.perf_counter() - started
        cfs = result.counterfactuals
        detector_llm = LLMDetector(llm, load_attribute(str(attribute))) if llm is not None else None
        keyword = KeywordDetector(load_attribute(str(attribute)))
        per_method = {}
        for method in methods:
            ok = cfs[(cfs["method"] == method) & (cfs["status"] == "ok")]
            texts = ok["text"].astype(str).tolist()
            entry: dict[str, Any] = {
                "with_counterfactual": f"{len(ok)} of {len(group)}",
                "share_with_counterfactual": len(ok) / len(group),
                "still_referencing_keyword": float(keyword.reference_proba(texts).mean()) if texts else None,
                "bleu": ok["bleu"].astype(float).describe().round(3).to_dict(),
                "bertscore_f1": ok["bertscore_f1"].astype(float).describe().round(3).to_dict(),
            }
            if detector_llm is not None and texts:
                answers = detector_llm.classify(texts)
                counts = collections.Counter(a or "unparsed" for a in answers)
                entry["llm_detector"] = dict(counts)
                entry["still_referencing_llm"] = (counts["explicit"] + counts["implicit"]) / len(texts)
            if method == "llm":
                entry["attempts_mean"] = float(cfs[cfs["method"] == "llm"]["attempts"].mean())
                entry["status"] = cfs[cfs["method"] == "llm"]["status"].value_counts().to_dict()
            per_method[method] = entry
        report[str(attribute)] = {
            "methods": per_method,
            "seconds": round(elapsed, 1),
            "examples": cfs[cfs["status"] == "ok"][["input_id", "method", "source_text", "text"]]
            .head(12)
            .to_dict("records"),
        }
        print(
            f"{attribute}: "
            + ", ".join(f"{m} {per_method[m]['with_counterfactual']}" for m in methods)
            + f" ({elapsed:.0f} s)"
        )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default="llamacpp:qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--reuse-inputs", type=int, default=4)
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated parts (throughput, guard, prefix_reuse, quality) to measure again, replacing them in "
        "the existing result (e.g. after a noisy run or a change to one editor)",
    )
    args = parser.parse_args()
    if args.only:
        parts = set(args.only.split(","))
        unknown = parts - {"throughput", "guard", "prefix_reuse", "quality"}
        if unknown:
            parser.error(f"unknown parts {sorted(unknown)}")
        result = json.loads((RESULTS / "generate_fairness.json").read_text())
        civil = pd.read_csv(CIVIL)["comment_text"].astype(str).tolist()
        if "throughput" in parts:
            result["throughput"] = throughput(civil)
        if "guard" in parts:
            result["guard"] = guard_effect(civil)
        if "prefix_reuse" in parts:
            sentences = pd.read_csv(SENTENCES)
            inputs = sentences[sentences.attribute == "islam"]["text"].tolist()[: args.reuse_inputs]
            result["prefix_reuse"] = prefix_reuse(args.llm, inputs, 16)
        if "quality" in parts:
            result["quality"] = quality(None if args.skip_llm else args.llm, args.skip_llm)
        write_json(result, RESULTS / "generate_fairness.json")
        return

    civil = pd.read_csv(CIVIL)["comment_text"].astype(str).tolist()
    result: dict[str, Any] = {
        "benchmark": "generate_fairness",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
    }
    result["throughput"] = throughput(civil)
    result["guard"] = guard_effect(civil)
    if not args.skip_llm:
        sentences = pd.read_csv(SENTENCES)
        inputs = sentences[sentences.attribute == "islam"]["text"].tolist()[: args.reuse_inputs]
        result["prefix_reuse"] = prefix_reuse(args.llm, inputs, 16)
    result["quality"] = quality(None if args.skip_llm else args.llm, args.skip_llm)
    write_json(result, RESULTS / "generate_fairness.json")
    print(f"wrote {RESULTS / 'generate_fairness.json'}")


if __name__ == "__main__":
    main()
