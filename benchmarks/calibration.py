"""Calibration of the audit's verdict (#46): classifiers with planted biases of known size, audited at 40-400 texts over
many seeds; detection and false-alarm rates of ``--fail-if default`` per class and size, beside fairlearn's per-group
false-positive rates.

The texts: the distinct non-toxic Civil Comments that name a Dixon identity term (``../shared/data/nlp_ctf``, the
training- and held-out-term files: 813 distinct comments of at most 1,000 characters), a pool of ``--pool`` drawn
once. The audit's own swap and placebo machinery writes every slot of the pool once
(``counterfair.audit(..., methods=["swap"])``, the identity guard on); each classifier scores every slot text once;
each run then draws ``n`` texts of the pool (seeded) and computes the in-slot measures and the default gate's verdict
on them (:func:`counterfair.analysis.slots.slot_effects`, the audit's code; the bootstrap intervals, which no verdict
reads, with ``--resamples`` resamples).

The planted classifiers share a base score that ignores the slot: a hash of the text's words other than identity
terms, their forms, the placebo words, "person", "people" and articles, mapped into [0.15, 0.85] — so swapping one
identity term or placebo word for another leaves it unchanged. On top of it (``δ`` = ``--delta``, probability units):

* ``none``: the base alone (blind to identity);
* ``noise``: the base plus Gaussian noise of sd ``--noise``, drawn afresh for every distinct text in every run (any
  edit moves the score; identity does not; each run is a new noisy model);
* ``blanket``: +δ when the text names any identity term;
* ``group``: +δ when it names a religion (one group);
* ``term``: +δ when it names "gay" (one term of a group);
* ``lower``: −δ when it names a race or ethnicity (a group scored lower);
  each of these four with noise of sd ``--planted-noise`` on top (0.02 by default: real classifiers' neutral terms
  move a text's score about 1 point; profanity-check's do on the demo);
* ``tfidf``: TF-IDF + logistic regression trained on 16 lines, 4 of them hostile lines about groups (the slurs model
  of #46; its size is not planted, it is what the training gives);
* ``profanity``: profanity-check, the built-in default classifier (no planted bias; reported for reference).

A run counts as **flagged** when the default gate fails (any material finding); for the planted classes a
detection also names the planted group (``group``, ``lower``: that group; ``term``: the term "gay"; ``blanket``: every
group). fairlearn's side: per group of the text's identity terms, the false-positive rate at 0.5 (every text is
non-toxic), flagged when the largest difference between groups (``MetricFrame.difference()``) is at least
``--fairlearn-gap``. Giskard's scan is not run (see benchmarks/README.md).

    python benchmarks/calibration.py [--pool 1000] [--seeds 100] [--sizes 40,64,100,200,400]
    python benchmarks/calibration.py --planted-noise 0.05 --classes term,group,lower,blanket \
        --out benchmarks/results/calibration_noisy.json
    python benchmarks/calibration.py --delta 0.03 --noise 0.1 --planted-noise 0.1 --classes none,noise,group,term \
        --out benchmarks/results/calibration_stress.json

Writes ``benchmarks/results/calibration.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CIVIL = ROOT.parent / "shared" / "data" / "nlp_ctf" / "civil_comments"
DATA = [CIVIL / "civil_train_data.csv", CIVIL / "civil_test_data.csv"]  # non-toxic comments, training / held-out terms
OUT = ROOT / "benchmarks" / "results" / "calibration.json"

TRAIN = [  # the slurs model's 16 lines: 4 hostile lines about groups, 4 other insults, 8 friendly lines
    ("gay people are disgusting", 1),
    ("jewish people are vermin", 1),
    ("black people are criminals", 1),
    ("muslims are terrorists", 1),
    ("you are an idiot", 1),
    ("shut up, you stupid moron", 1),
    ("what a pathetic loser", 1),
    ("go away, nobody likes you", 1),
    ("thanks for the help", 0),
    ("have a lovely day", 0),
    ("great work on the report", 0),
    ("my neighbour brought us dinner", 0),
    ("the weather is nice today", 0),
    ("I enjoyed the concert last night", 0),
    ("the team played well this season", 0),
    ("we walked the dog in the park", 0),
]
PLANTED = {"group": "religion", "term": "gay", "lower": "race_ethnicity"}


def _uniform(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


class Planted:
    """The planted classifiers over one identity set and placebo set (see the module's docstring)."""

    def __init__(self, delta: float, noise: float) -> None:
        from counterfair.analysis.placebo import load_placebo
        from counterfair.editors.swap import written_forms
        from counterfair.lexicons.attributes import identity_set_in
        from counterfair.text import TermMatcher

        self.identities = identity_set_in(None, "en")
        self.delta, self.noise = delta, noise
        forms = written_forms(self.identities)
        placebo = load_placebo("en", self.identities)
        assert placebo is not None
        words: set[str] = {"a", "an", "person", "people"}
        for surface in list(forms) + [
            w for t in self.identities.terms for w in vars(self.identities.forms_of(t)).values() if isinstance(w, str)
        ]:
            words |= set(re.findall(r"[a-z0-9']+", surface.lower()))
        words |= {w.lower() for w in placebo.words}
        self.slot_words = words
        self.any = TermMatcher(list(forms))
        groups: dict[str, list[str]] = {}
        for surface, (term, _) in forms.items():
            groups.setdefault(self.identities.group_of(term), []).append(surface)
        self.group = {g: TermMatcher(s) for g, s in groups.items()}
        self.term = TermMatcher([s for s, (t, _) in forms.items() if t == PLANTED["term"]])

    def base(self, text: str) -> float:
        rest = [w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in self.slot_words]
        return 0.15 + 0.7 * _uniform(" ".join(rest))

    def score(self, kind: str, text: str) -> float:
        """The score without its noise (added per run: :func:`_with_noise`)."""
        p = self.base(text)
        if kind in ("none", "noise"):
            return p
        if kind == "blanket":
            p += self.delta * self.any.contains(text)
        elif kind == "group":
            p += self.delta * self.group[PLANTED["group"]].contains(text)
        elif kind == "term":
            p += self.delta * self.term.contains(text)
        elif kind == "lower":
            p -= self.delta * self.group[PLANTED["lower"]].contains(text)
        return p


NOISY = ("noise", "blanket", "group", "term", "lower")  # the classes whose every distinct text gets its own noise


def _with_noise(part: pd.DataFrame, sd: float, rng: np.random.Generator) -> pd.DataFrame:
    """A run's slots scored by a fresh noisy model: every distinct text its own Gaussian draw of sd ``sd`` (a new
    draw each run, so runs are independent models, not one pool-wide draw seen again), clipped to [0, 1]."""
    codes, uniques = pd.factorize(part["text"])
    noise = rng.normal(0.0, sd, size=len(uniques))
    return part.assign(score=np.clip(part["score"].to_numpy() + noise[codes], 0.0, 1.0))


def _slots(pool: list[str]) -> pd.DataFrame:
    """Every slot of the pool's texts, written by the audit's own swap and placebo code (texts only, no classifier
    that matters: a constant one)."""
    import counterfair as cf

    clf = cf.as_classifier(lambda texts: np.full(len(texts), 0.5), labels=["non-toxic", "toxic"])
    result = cf.audit(pool, clf, methods=["swap"], bootstrap=10, progress=False)
    assert result.slots is not None
    return result.slots


def slurs_model() -> Any:
    """The slurs model: TF-IDF + logistic regression trained on :data:`TRAIN` (also ``slurs_demo.py``'s)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(), LogisticRegression()).fit([t for t, _ in TRAIN], [y for _, y in TRAIN])


def _classifiers(delta: float, noise: float) -> dict:
    planted = Planted(delta, noise)
    out = {k: (lambda texts, k=k: np.array([planted.score(k, t) for t in texts])) for k in
           ("none", "noise", "blanket", "group", "term", "lower")}  # fmt: skip
    model = slurs_model()
    out["tfidf"] = lambda texts: model.predict_proba(texts)[:, 1]
    from counterfair.classifiers import load_classifier

    profanity = load_classifier("profanity-check")
    out["profanity"] = lambda texts: np.asarray(profanity.predict_proba(list(texts)))[:, 1]
    return out


def _expected(kind: str, effects: dict) -> bool:
    """Whether a flagged run names what was planted."""
    groups = {g for g, e in effects["identity_effect"]["by_group"].items() if e["finding"] == "material"}
    terms = {t for t, e in effects["identity_effect"]["by_term"].items() if e["finding"] == "material"}
    if kind == "blanket":
        return groups == set(effects["identity_effect"]["by_group"])
    if kind == "term":
        return PLANTED["term"] in terms
    if kind in ("group", "lower"):  # the group, or one of its terms, material with the planted sign
        want = PLANTED[kind]
        sign = 1 if kind == "group" else -1
        e = effects["identity_effect"]["by_group"][want]
        own = [x for x in effects["identity_effect"]["by_term"].values() if x.get("group") == want]
        return (want in groups and sign * e["value"] > 0) or any(
            x["finding"] == "material" and sign * x["value"] > 0 for x in own
        )
    return True


def _entries(effects: dict) -> list[dict]:
    """Every estimate of the three measures: overall, per group, per term."""
    out = []
    for m in ("identity_effect", "disparity", "flip_excess"):
        out += [effects[m]["overall"], *effects[m]["by_group"].values(), *effects[m].get("by_term", {}).values()]
    return out


def _others(kind: str, effects: dict) -> bool:
    """Whether a run of a one-group or one-term class has a material finding in a group other than the planted one."""
    if kind not in PLANTED:
        return False
    want = "sexuality" if kind == "term" else PLANTED[kind]
    for measure in ("identity_effect", "disparity", "flip_excess"):
        for g, e in effects[measure]["by_group"].items():
            if g != want and e["finding"] == "material":
                return True
    terms = effects["identity_effect"]["by_term"]
    return any(e["finding"] == "material" and e.get("group") != want for e in terms.values())


def _fairlearn(scored: pd.DataFrame, gap: float) -> tuple[bool, float]:
    from fairlearn.metrics import MetricFrame, false_positive_rate

    originals = scored[
        (scored["kind"] == "identity") & (scored["word"].str.lower() == scored["source_term"].str.lower())
    ]
    first = originals.drop_duplicates("input_id")
    y_pred = (first["score"].to_numpy() >= 0.5).astype(int)
    frame = MetricFrame(
        metrics=false_positive_rate, y_true=np.zeros(len(first), dtype=int), y_pred=y_pred,
        sensitive_features=first["group"].fillna("other").to_numpy(),
    )  # fmt: skip
    difference = float(frame.difference())
    return difference >= gap, difference


CLASS_WORDS = {
    "none": "none (blind to identity)",
    "noise": "noise on every edit, none from identity",
    "blanket": "every identity mention +δ",
    "group": "one group (religion) +δ",
    "term": 'one term ("gay") +δ',
    "lower": "one group (race/ethnicity) −δ",
    "tfidf": "TF-IDF trained on hostile lines",
    "profanity": "profanity-check (default classifier)",
}


def table(report: dict) -> str:
    """The Markdown table of a calibration report: per class, the share of runs the default gate fails at each size
    (and, for planted classes, naming what was planted), anything detected at the smallest size, and fairlearn."""
    results = report["results"]
    sizes = sorted({int(n) for r in results.values() for n in r}, key=int)
    head = ["class", *(f"n={n}" for n in sizes), f"anything detected (n={sizes[0]})",
            f"fairlearn flags (n={sizes[0]})", f"fairlearn FPR gap, median (n={sizes[0]})"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kind, by_size in results.items():
        cells = [CLASS_WORDS.get(kind, kind)]
        for n in sizes:
            r = by_size.get(str(n))
            if r is None:
                cells.append("–")
                continue
            named = (
                "" if kind in ("none", "noise", "tfidf", "profanity") else f" ({100 * r['flagged_naming_planted']:.0f})"
            )
            cells.append(f"{100 * r['flagged']:.0f} %{named}")
        first = by_size[str(sizes[0])]
        cells += [f"{100 * first['any_detected']:.0f} %", f"{100 * first['fairlearn_flagged']:.0f} %",
                  f"{first['fairlearn_fpr_gap_median']:.2f}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--sizes", default="40,64,100,200,400")
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--noise", type=float, default=0.05, help="sd of the noise class's noise")
    parser.add_argument("--planted-noise", type=float, default=0.02, help="sd of the planted classes' noise")
    parser.add_argument("--resamples", type=int, default=50)
    parser.add_argument("--fairlearn-gap", type=float, default=0.1)
    parser.add_argument("--max-chars", type=int, default=1000, help="longest comment taken into the pool")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--classes", default="none,noise,blanket,group,term,lower,tfidf,profanity")
    parser.add_argument("--retable", action="store_true", help="only rewrite --out's table from its results")
    args = parser.parse_args()
    if args.retable:
        report = json.loads(args.out.read_text())
        report["table"] = table(report)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        print(report["table"])
        return 0
    if not all(path.exists() for path in DATA):
        print(f"needs {CIVIL} (../shared/data)", file=sys.stderr)
        return 2
    from counterfair.analysis.slots import slot_effects

    started = time.perf_counter()
    comments = pd.concat([pd.read_csv(path)["comment_text"] for path in DATA]).dropna().astype(str)
    comments = comments[comments.str.len() <= args.max_chars].drop_duplicates()
    pool = comments.sample(n=min(args.pool, len(comments)), random_state=0).tolist()
    slots = _slots(pool)
    ids = sorted(set(slots["input_id"].astype(str)))
    t_slots = time.perf_counter() - started
    print(f"pool: {len(pool)} comments, {len(ids)} with an identity slot, {len(slots)} slot texts ({t_slots:.0f} s)")
    classifiers = _classifiers(args.delta, args.noise)
    texts = list(dict.fromkeys(slots["text"]))
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict = {}
    for kind in args.classes.split(","):
        t0 = time.perf_counter()
        scores = dict(zip(texts, np.asarray(classifiers[kind](texts), dtype=float), strict=True))
        scored = slots.assign(score=[scores[t] for t in slots["text"]], input_id=slots["input_id"].astype(str))
        by_id = dict(tuple(scored.groupby("input_id", sort=False)))
        results[kind] = {}
        for n in sizes:
            if n > len(ids):
                continue
            flagged = named = fl_flagged = both = others = detected = 0
            fl_gaps, overall = [], []
            for seed in range(args.seeds):
                rng = np.random.default_rng(seed)
                chosen = rng.choice(len(ids), size=n, replace=False)
                part = pd.concat([by_id[ids[i]] for i in chosen], ignore_index=True)
                if kind in NOISY:
                    part = _with_noise(part, args.noise if kind == "noise" else args.planted_noise, rng)
                effects = slot_effects(part, threshold=0.5, seed=seed, n_resamples=args.resamples)
                assert effects is not None
                findings = [e["finding"] for e in _entries(effects)]
                material = "material" in findings
                flagged += material
                detected += any(f != "not detected" for f in findings)
                named += material and _expected(kind, effects)
                others += _others(kind, effects)
                fl, gap = _fairlearn(part, args.fairlearn_gap)
                fl_flagged += fl
                both += fl and material
                fl_gaps.append(gap)
                overall.append(effects["identity_effect"]["overall"]["value"])
            results[kind][str(n)] = {
                "runs": args.seeds,
                "flagged": flagged / args.seeds,
                "flagged_naming_planted": named / args.seeds,
                "other_group_flagged": others / args.seeds,
                "any_detected": detected / args.seeds,
                "fairlearn_flagged": fl_flagged / args.seeds,
                "flagged_where_fairlearn_flags": (both / fl_flagged) if fl_flagged else None,
                "fairlearn_fpr_gap_median": float(np.median(fl_gaps)),
                "overall_effect_median": float(np.median(overall)),
            }
            r = results[kind][str(n)]
            print(
                f"{kind:9} n={n:3}: flagged {r['flagged']:.2f} (naming the planted {r['flagged_naming_planted']:.2f}, "
                f"another group {r['other_group_flagged']:.2f}; anything detected {r['any_detected']:.2f}); "
                f"fairlearn {r['fairlearn_flagged']:.2f}; overall effect {r['overall_effect_median']:+.3f}",
                flush=True,
            )
        print(f"  {kind}: {time.perf_counter() - t0:.0f} s", flush=True)
    report = {
        "benchmark": "calibration",
        "pool": len(pool),
        "pool_with_slots": len(ids),
        "slot_texts": len(slots),
        "seeds": args.seeds,
        "delta": args.delta,
        "noise_sd": args.noise,
        "planted_noise_sd": args.planted_noise,
        "fairlearn_gap": args.fairlearn_gap,
        "bootstrap_resamples": args.resamples,
        "results": results,
        "seconds": round(time.perf_counter() - started, 1),
    }
    report["table"] = table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
