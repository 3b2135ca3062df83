"""Wall time and peak memory of ``counterfair audit`` on 2 CPU cores (targets: <= 15 min, <= 4 GiB).

* the demo audit (``counterfair audit --demo``), cold (fresh run directory);
* 200 identity-referencing texts (the 120 real Civil Comments of ``../shared/data/nlp_ctf`` that mention one of the
  four attributes of paper 000, then the benchmark and demo sentences) with ablation, substitution and swap;
* the LLM method on ``--llm-texts`` of them (16 samples each, Qwen2.5-Coder-1.5B via llama.cpp), extrapolated to 200:
  with the default parallel sampling (16 sequences in one llama.cpp batch, 4 texts per call) and, for the before/after
  comparison, ``--llm-parallel 1`` (one sample after another, the path before parallel sampling) on the same texts.

``--end-to-end``: instead, the 200 texts with all four methods (ablation, substitution, swap, llm) in one audit, timed
end to end (#50: not extrapolated), the machine's load before and after, and per attribute the LLM method's quality
(inputs with a counterfactual, candidates passing the filters, the chosen rewrites' BLEU and BERTScore with their
standard errors) for comparisons at the same seed; kept beside the other entries. ``--retry-all-too``: first the
same audit with ``--retry-nearness 0`` (every text without a passing candidate sampled again, the rule before #50), then
the default, side by side in one run: the speed-up and each attribute's quality change in standard errors.

Each audit runs in its own process; peak memory is that process's maximum resident set size.

Usage: python benchmarks/audit_speed.py [--llm-texts 10] [--skip-llm] [--skip-sequential] [--only-llm]
       python benchmarks/audit_speed.py --end-to-end [--retry-all-too]
Results: benchmarks/results/audit_speed.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse of stored results

import argparse
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from cli_run import cpu_model, run_cli
from counterfair.lexicons.attributes import known_attributes, load_attribute
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
CIVIL = ROOT.parent / "shared" / "data" / "nlp_ctf" / "civil_comments"
SENTENCES = ROOT / "benchmarks" / "data" / "fairness_sentences.csv"
RESULTS = ROOT / "benchmarks" / "results"


def texts_200() -> pd.DataFrame:
    frames = [
        pd.read_csv(CIVIL / name)["comment_text"]
        for name in ("civil_train_data.csv", "civil_toxic_train_data.csv", "civil_test_data.csv")
    ]
    texts = pd.concat(frames).astype(str).drop_duplicates().tolist()
    matchers = [load_attribute(a).matcher() for a in known_attributes()]
    chosen = [t for t in texts if any(m.contains(t) for m in matchers) and len(t.split()) <= 120]
    chosen += pd.read_csv(SENTENCES)["text"].tolist()
    from counterfair.commands.audit.options import demo_path

    chosen += pd.read_csv(demo_path())["text"].tolist()
    return pd.DataFrame({"text": list(dict.fromkeys(chosen))[:200]})


def run(args: list[str]) -> dict[str, Any]:
    return run_cli(args)


def end_to_end(data: pd.DataFrame, tmp: Path, extra: tuple[str, ...] = (), name: str = "all") -> dict[str, Any]:
    """The 200 texts with the four methods in one audit: wall time, peak memory, load, and the LLM's quality."""
    data.to_csv(tmp / "texts.csv", index=False)
    load_before = os.getloadavg()[0]
    methods = "ablation,substitution,swap,llm"
    done = run_cli(
        ["audit", str(tmp / "texts.csv"), "--methods", methods, *extra, "--out", str(tmp / name), "-q"],
        ok_codes=(0, 1),
    )
    quality = {}
    for summary_file in sorted((tmp / name / "generate").glob("*/summary.json")):
        llm = json.loads(summary_file.read_text()).get("methods", {}).get("llm")
        if llm:
            quality[summary_file.parent.name] = {
                "inputs": llm["inputs"],
                "share_with_counterfactual": llm["share_with_counterfactual"],
                "candidates": llm["candidates"],
                "candidates_passing_filters": llm["candidates_passing_filters"],
                **{
                    metric: {k: llm[metric][k] for k in ("n", "mean", "std")}
                    | {"se": llm[metric]["std"] / llm[metric]["n"] ** 0.5 if llm[metric]["n"] else None}
                    for metric in ("bleu", "bertscore_f1")
                },
            }
    entry = {
        **done,
        "texts": len(data),
        "methods": methods,
        "options": list(extra),
        "wall_minutes": round(done["wall_s"] / 60, 1),
        "meets_15_min": done["wall_s"] <= 15 * 60,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "llm_quality": quality,
    }
    how = " ".join(extra) or "(defaults)"
    print(f"200 texts x 4 methods end to end {how}: {entry['wall_minutes']} min, peak {done['peak_rss_mib']} MiB")
    return entry


def quality_change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per attribute, the LLM's quality after minus before: in the chosen rewrites' BLEU and BERTScore, the change of
    the mean in standard errors of before's mean (#50: within one); the inputs with a counterfactual and the
    candidates drawn."""
    out: dict[str, Any] = {}
    for attribute, old in before["llm_quality"].items():
        new = after["llm_quality"].get(attribute)
        if new is None:
            continue
        row: dict[str, Any] = {
            "with_counterfactual": round(new["share_with_counterfactual"] * new["inputs"])
            - round(old["share_with_counterfactual"] * old["inputs"]),
            "share_with_counterfactual_change": round(
                new["share_with_counterfactual"] - old["share_with_counterfactual"], 4
            ),
            "candidates": [old["candidates"], new["candidates"]],
        }
        for metric in ("bleu", "bertscore_f1"):
            se = old[metric]["se"]
            delta = new[metric]["mean"] - old[metric]["mean"]
            row[f"{metric}_change"] = round(delta, 4)
            row[f"{metric}_change_in_se"] = round(delta / se, 2) if se else None
        out[attribute] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm-texts", type=int, default=10)
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--skip-sequential", action="store_true", help="no --llm-parallel 1 run (before/after)")
    parser.add_argument("--only-llm", action="store_true", help="keep the other entries of the results file")
    parser.add_argument("--end-to-end", action="store_true", help="the 200 texts x 4 methods in one audit, timed")
    parser.add_argument(
        "--retry-all-too",
        action="store_true",
        help="with --end-to-end: first the same audit with --retry-nearness 0 (every text without a passing candidate "
        "sampled again up to 5 attempts, the rule before #50), side by side in this run",
    )
    parser.add_argument(
        "--as",
        dest="suffix",
        default="",
        help="with --end-to-end: keep the run under texts_200_all_4_methods_end_to_end_SUFFIX (another machine's run "
        "beside the recorded one)",
    )
    parser.add_argument(
        "--before-src",
        help="the src/ folder of a checkout from before parallel sampling (git worktree add /tmp/before 8cfeff9): its "
        "LLM audit runs on the same texts in this run, as the 'before'",
    )
    args = parser.parse_args()
    path = RESULTS / "audit_speed.json"
    keep = args.only_llm or args.end_to_end
    result: dict[str, Any] = json.loads(path.read_text()) if keep and path.exists() else {}
    result |= {"benchmark": "audit_speed", "targets": {"wall_minutes": 15, "peak_gib": 4}}
    if not args.suffix:  # another machine's run names its processor in its own entry
        result["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        data = texts_200()
        if args.end_to_end:
            if args.retry_all_too:
                before = end_to_end(data, Path(tmp), ("--retry-nearness", "0"), "retry_all")
                result["texts_200_all_4_methods_end_to_end_retry_all"] = before
            after = end_to_end(data, Path(tmp)) | {"processor": cpu_model()}
            result["texts_200_all_4_methods_end_to_end" + (f"_{args.suffix}" if args.suffix else "")] = after
            if args.retry_all_too:
                result["retry_rule_speedup"] = round(before["wall_s"] / after["wall_s"], 3)
                result["retry_rule_quality_change"] = quality_change(before, after)
                print(f"retry rule: {result['retry_rule_speedup']}x faster; quality change (in SE of before):")
                print(json.dumps(result["retry_rule_quality_change"], indent=1))
            write_json(result, RESULTS / "audit_speed.json")
            return
        if not args.only_llm:
            demo = run(["audit", "--demo", "--out", f"{tmp}/demo", "-q"])
            result["demo"] = demo
            print(f"demo audit: {demo['wall_s']} s, peak {demo['peak_rss_mib']} MiB")
            data.to_csv(f"{tmp}/texts.csv", index=False)
            fast = run(
                ["audit", f"{tmp}/texts.csv", "--methods", "ablation,substitution,swap", "--out", f"{tmp}/fast", "-q"]
            )
            result["texts_200_wordlists_and_swap"] = {**fast, "texts": len(data)}
            print(f"200 texts, ablation+substitution+swap: {fast['wall_s']} s, peak {fast['peak_rss_mib']} MiB")
        fast_s = result["texts_200_wordlists_and_swap"]["wall_s"]
        if not args.skip_llm:
            n = args.llm_texts
            data.head(n).to_csv(f"{tmp}/llm.csv", index=False)
            runs = [("llm_subset", [])] + ([] if args.skip_sequential else [("llm_subset_sequential", ["1"])])
            runs += [("llm_subset_before", ["before"])] if args.before_src else []
            for key, parallel in runs:
                before = parallel == ["before"]
                extra = ["--llm-parallel", *parallel] if parallel and not before else []
                env = {"PYTHONPATH": args.before_src} if before else None
                audit = ["audit", f"{tmp}/llm.csv", "--methods", "llm", "--out", f"{tmp}/{key}", "-q", *extra]
                llm = run_cli(audit, env=env)
                per_text = llm["wall_s"] / n
                result[key] = {
                    **llm,
                    "texts": n,
                    "llm_parallel": "code before parallel sampling" if before else int(parallel[0]) if parallel else 16,
                    "seconds_per_text": round(per_text, 1),
                    "extrapolated_200_texts_minutes": round(per_text * 200 / 60, 1),
                }
                total = fast_s + per_text * 200
                print(
                    f"{key}: llm on {n} texts: {llm['wall_s']} s ({per_text:.1f} s per text), peak "
                    f"{llm['peak_rss_mib']} MiB; 200 texts x 4 methods ~ {total / 60:.0f} min"
                )
            per_text = result["llm_subset"]["seconds_per_text"]
            result["texts_200_all_4_methods_estimate_minutes"] = round((fast_s + per_text * 200) / 60, 1)
            if "llm_subset_sequential" in result:
                before = result["llm_subset_sequential"]["seconds_per_text"]
                result["texts_200_all_4_methods_sequential_estimate_minutes"] = round((fast_s + before * 200) / 60, 1)
                result["llm_speedup_parallel_vs_sequential"] = round(before / per_text, 2)
            if "llm_subset_before" in result:
                old = result["llm_subset_before"]["seconds_per_text"]
                result["texts_200_all_4_methods_before_estimate_minutes"] = round((fast_s + old * 200) / 60, 1)
                result["llm_speedup_vs_before"] = round(old / per_text, 2)
    write_json(result, RESULTS / "audit_speed.json")
    print(f"wrote {RESULTS / 'audit_speed.json'}")


if __name__ == "__main__":
    main()
