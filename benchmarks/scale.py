"""How the cost of generate (non-LLM methods) and evaluate grows with the number of texts, local vs Ray, and what
the run store saves on a repeated run. Each measurement runs in its own process (peak memory is its own).

Texts: Dixon et al.'s template sentences, the nlp_ctf Civil Comments and the demo sentences, repeated with a
number appended until there are 100,000 distinct texts (short texts: 9 words on average). Sizes 1k, 10k, 100k.

* generate, ablation + substitution (Islam word lists) + swap (guarded), candidates not scored: 1k and 10k; 100k
  with ablation + substitution only (swap makes ~49 variants per identity text: 4.9 M rows at 100k).
* evaluate with distance, diversity, BLEU and the profanity-check flip/probability change: 1k, 10k, 100k; with
  BERTScore: 1k and 10k; with Gemma perplexity: 1k (at ~200 tokens/s it would take hours at 100k on 2 cores).
* local vs Ray (2 local workers) for evaluate with BERTScore at 10k.
* the run store: the same evaluate (BERTScore, 10k) twice with a fresh store.

Usage: python benchmarks/scale.py [--sizes 1000,10000,100000]
Results: benchmarks/results/scale.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")  # measure computation, not reuse (except where stated)

import argparse
import json
import platform
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from cli_run import run_cli
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def make_texts(n: int) -> pd.DataFrame:
    from counterfair.commands.audit.options import demo_path

    pool = pd.read_csv(DATA / "dixon" / "bias_madlibs_77k.csv")["Text"].astype(str).tolist()
    pool += (
        pd.read_csv(DATA / "nlp_ctf" / "civil_comments" / "civil_train_data.csv")["comment_text"].astype(str).tolist()
    )
    pool += pd.read_csv(demo_path())["text"].tolist()
    texts = [pool[i % len(pool)] + ("" if i < len(pool) else f" ({i // len(pool)})") for i in range(n)]
    return pd.DataFrame({"text": texts})


def make_pairs(n: int) -> pd.DataFrame:
    texts = make_texts(n)["text"]
    return pd.DataFrame(
        {
            "orig_text": texts,
            "gen_text": texts.str.replace(" ", " really ", n=1),
            "gen_text_2": texts.str.replace(" ", " very ", n=1),
        }
    )


def run(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    result = run_cli([*args, "-q"], env=env, ok_codes=(0, 1))  # 1: finished, with rows that have a status
    result.pop("stdout_tail")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument(
        "--cheap-evaluate-only",
        action="store_true",
        help="measure only the cheap-metric evaluation at --sizes again and replace those entries in scale.json",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.cheap_evaluate_only:
        previous = json.loads((RESULTS / "scale.json").read_text())
        with tempfile.TemporaryDirectory() as tmp:
            for n in sizes:
                make_pairs(n).to_csv(Path(tmp) / f"pairs_{n}.csv", index=False)
                args_ = ["evaluate", f"{tmp}/pairs_{n}.csv", "--metrics", "distance,diversity,bleu,flip,prob_change"]
                ev = run([*args_, "--out", f"{tmp}/ev_{n}"])
                ev |= {"pairs": n, "pairs_per_s": round(n / ev["wall_s"], 1), "remeasured": True}
                previous["evaluate"][f"{n}:cheap"] = ev
                print(f"evaluate {n:>7} (cheap, again): {ev['wall_s']} s, peak {ev['peak_rss_mib']} MiB", flush=True)
        write_json(previous, RESULTS / "scale.json")
        return
    result: dict[str, Any] = {
        "benchmark": "scale",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "generate": {},
        "evaluate": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in sizes:
            make_texts(n).to_csv(work / f"texts_{n}.csv", index=False)
            make_pairs(n).to_csv(work / f"pairs_{n}.csv", index=False)
            methods = "ablation,substitution,swap"
            g = run(
                [
                    "generate",
                    str(work / f"texts_{n}.csv"),
                    "--methods",
                    methods,
                    "--score-methods",
                    "none",
                    "--out",
                    str(work / f"gen_{n}"),
                ]
            )
            made = json.loads((work / f"gen_{n}" / "summary.json").read_text())["methods"]
            g |= {
                "texts": n,
                "methods": methods,
                "texts_per_s": round(n / g["wall_s"], 1),
                "candidates": {m: made[m]["candidates"] for m in made},
            }
            result["generate"][str(n)] = g
            print(
                f"generate {n:>7} ({methods}): {g['wall_s']:8.1f} s, {g['texts_per_s']:8.1f} texts/s, "
                f"peak {g['peak_rss_mib']} MiB",
                flush=True,
            )
            for kind, metrics, label in (
                ("cheap", "distance,diversity,bleu,flip,prob_change", "distance, diversity, BLEU, flip"),
                ("bertscore", "distance,bertscore", "BERTScore"),
            ):
                if kind == "bertscore" and n > 10_000:
                    continue
                ev = run(
                    [
                        "evaluate",
                        str(work / f"pairs_{n}.csv"),
                        "--metrics",
                        metrics,
                        "--out",
                        str(work / f"ev_{kind}_{n}"),
                    ]
                )
                ev |= {"pairs": n, "pairs_per_s": round(n / ev["wall_s"], 1)}
                result["evaluate"][f"{n}:{kind}"] = ev
                print(
                    f"evaluate {n:>7} ({label}): {ev['wall_s']:8.1f} s, {ev['pairs_per_s']:8.1f} pairs/s, "
                    f"peak {ev['peak_rss_mib']} MiB",
                    flush=True,
                )
            if n <= 1_000:
                pp = run(
                    [
                        "evaluate",
                        str(work / f"pairs_{n}.csv"),
                        "--metrics",
                        "perplexity",
                        "--out",
                        str(work / f"evp_{n}"),
                    ]
                )
                tokens = int(pd.read_csv(work / f"evp_{n}" / "rows.csv")["ppl_tokens"].sum())
                pp |= {"pairs": n, "tokens": tokens, "tokens_per_s": round(tokens / pp["wall_s"], 1)}
                result["evaluate"][f"{n}:perplexity"] = pp
                print(
                    f"evaluate {n:>7} (perplexity): {pp['wall_s']:8.1f} s, {pp['tokens_per_s']:8.1f} tokens/s",
                    flush=True,
                )
        if 10_000 in sizes:
            ray = run(
                [
                    "evaluate",
                    str(work / "pairs_10000.csv"),
                    "--metrics",
                    "distance,bertscore",
                    "--engine",
                    "ray",
                    "--out",
                    str(work / "evb_ray"),
                ]
            )
            local = result["evaluate"]["10000:bertscore"]
            result["ray_vs_local_bertscore_10k"] = {
                "local": local,
                "ray": ray,
                "ray_over_local_wall": round(ray["wall_s"] / local["wall_s"], 2),
            }
            print(f"ray vs local (BERTScore 10k): {ray['wall_s']} s vs {local['wall_s']} s", flush=True)
            store = str(work / "store.sqlite")
            first = run(
                [
                    "evaluate",
                    str(work / "pairs_10000.csv"),
                    "--metrics",
                    "distance,bertscore,flip",
                    "--out",
                    str(work / "st1"),
                ],
                env={"COUNTERFAIR_STORE": store},
            )
            second = run(
                [
                    "evaluate",
                    str(work / "pairs_10000.csv"),
                    "--metrics",
                    "distance,bertscore,flip",
                    "--out",
                    str(work / "st2"),
                ],
                env={"COUNTERFAIR_STORE": store},
            )
            same = (
                json.loads((work / "st1" / "summary.json").read_text())["metrics"]["bertscore_f1"]["all"]["mean"]
                == json.loads((work / "st2" / "summary.json").read_text())["metrics"]["bertscore_f1"]["all"]["mean"]
            )
            result["run_store_10k"] = {
                "first": first,
                "second": second,
                "same_values": same,
                "speedup": round(first["wall_s"] / second["wall_s"], 2),
            }
            print(
                f"run store: first {first['wall_s']} s, repeat {second['wall_s']} s (same values: {same})", flush=True
            )
    write_json(result, RESULTS / "scale.json")
    print(f"wrote {RESULTS / 'scale.json'}")


if __name__ == "__main__":
    main()
