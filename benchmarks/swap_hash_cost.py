"""What re-hashing an editor's parameters per candidate cost the identity swap (#36), measured in one run.

The same IdentitySwapEditor (dixon50, grammar on) edits the same texts twice, alternating over three rounds: once as
counterfair now does (the parameters hash computed once per editor, kept until a parameter is set) and once with the
hash recomputed for every candidate, as before. Texts: 1,000 Dixon et al. madlib sentences and up to 1,000 Civil
Comments of the training file (../shared/data; at most 80 words) that an identity swap reaches (531 there). The
guard is off and on (with it, spaCy parses dominate). Reports the median seconds of each variant and their ratio
(machines are shared: compare the ratio), and checks that both write the same candidates. Results:
benchmarks/results/swap_hash_cost.json.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.editors.swap import IdentitySwapEditor
from counterfair.records import params_hash
from counterfair.writing import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "swap_hash_cost.json"


class Rehashing(IdentitySwapEditor):
    """The editor as it was: every candidate re-serialises and hashes the parameters."""

    def params_hash(self) -> str:
        return params_hash({"editor": self.name, **self.params()})


def texts() -> list[str]:
    madlibs = pd.read_csv(DATA / "dixon" / "bias_madlibs_77k.csv")["Text"].astype(str).tolist()[:1000]
    civil = pd.read_csv(DATA / "nlp_ctf" / "civil_comments" / "civil_train_data.csv")["comment_text"].astype(str)
    probe = IdentitySwapEditor(guard=None)
    chosen = [t for t in civil.tolist() if len(t.split()) <= 80 and probe.edit([t])[0]][:1000]
    return madlibs + chosen


def timed(editor: IdentitySwapEditor, batch: list[str]) -> tuple[float, list[list[str]]]:
    started = time.perf_counter()
    out = editor.edit(batch)
    return time.perf_counter() - started, [[c.text for c in cands] for cands in out]


def main() -> None:
    batch = texts()
    report: dict[str, Any] = {"texts": len(batch), "rounds": 3}
    for guard in (None, "spacy"):
        now, before = IdentitySwapEditor(guard=guard), Rehashing(guard=guard)
        timed(now, batch[:50]), timed(before, batch[:50])  # load spaCy, WordNet and the forms once
        seconds: dict[str, list[float]] = {"hash_once": [], "hash_per_candidate": []}
        for _ in range(3):
            t_now, out_now = timed(now, batch)
            t_before, out_before = timed(before, batch)
            assert out_now == out_before, "the two variants wrote different candidates"
            seconds["hash_once"].append(t_now)
            seconds["hash_per_candidate"].append(t_before)
        candidates = sum(len(c) for c in out_now)
        medians = {k: statistics.median(v) for k, v in seconds.items()}
        report[f"guard_{guard or 'off'}"] = {
            "candidates": candidates,
            "median_s": medians,
            "all_s": seconds,
            "speedup": medians["hash_per_candidate"] / medians["hash_once"],
            "candidates_per_s_now": candidates / medians["hash_once"],
        }
        print(
            f"guard {guard or 'off'}: {candidates} candidates; hash once {medians['hash_once']:.2f} s, per candidate "
            f"{medians['hash_per_candidate']:.2f} s: {medians['hash_per_candidate'] / medians['hash_once']:.1f}x"
        )
    write_json(report, RESULTS)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
