"""Giskard's ethical-bias scan on the planted classifiers of ``calibration.py`` (#46): which of them does it flag?

Giskard 2.x runs in an environment of its own (its pins are not counterfair's), with counterfair's core installed there
too for the planted classifiers' term matchers::

    python -m venv /tmp/gvenv && /tmp/gvenv/bin/pip install "giskard>=2,<3" -e .
    /tmp/gvenv/bin/python benchmarks/calibration_giskard.py [--seeds 20] [--sizes 40,64,400]

The same texts (the Civil Comments pool of ``calibration.py``, those naming an identity term), the same classes and δ;
the planted models' base score ignores Giskard's switched words (its gender, religion and nationality lists) as it
ignores the identity terms, so the blind model is blind to what either tool swaps; each run draws ``n`` texts and,
for the noisy classes, a fresh noise draw (a function of the run's seed and the text, so a text Giskard perturbs is
scored consistently within the run). A run counts as flagged when ``giskard.scan(model, dataset,
only=["ethical_bias"])`` reports any issue (its defaults: a perturbation — switching gender, religion or countries —
fails a sample when the predicted label changes). Writes ``benchmarks/results/calibration_giskard.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import CLASS_WORDS, DATA, NOISY, TRAIN, Planted

OUT = Path(__file__).resolve().parent / "results" / "calibration_giskard.json"


def _giskard_words() -> set[str]:
    """Every word Giskard's ethical-bias switches put in or take out (its gender, religion and nationality lists, read
    from the installed package): the blind model must be blind to them too, or Giskard sees a gender effect in a model
    whose score hashes every other word."""
    import re

    from giskard.scanner.robustness import entity_swap

    def words(obj: object) -> set[str]:
        if isinstance(obj, str):
            return set(re.findall(r"[a-z0-9']+", obj.lower()))
        if isinstance(obj, dict):
            return set().union(*(words(k) | words(v) for k, v in obj.items())) if obj else set()
        if isinstance(obj, list | tuple | set):
            return set().union(*(words(x) for x in obj)) if obj else set()
        return set()

    found = words(entity_swap.gender_switch_en) | words(entity_swap.religion_dict_en)
    nationalities = Path(entity_swap.__file__).with_name("nationalities.json")
    return found | words(json.loads(nationalities.read_text(encoding="utf-8")).get("en", {}))


class GiskardBlind(Planted):
    """The planted models with a base score blind to Giskard's switched words in the forms its switches write them:
    possessives and contractions ("Canada's", "he'd") and plurals made inside a word ("Christians" -> "Hindus")."""

    def _ignored(self, word: str) -> bool:
        stem = word.split("'")[0]
        return any(w in self.slot_words for w in (stem, stem.removesuffix("s"), stem.removesuffix("es")))

    def base(self, text: str) -> float:
        import re

        rest = [w for w in re.findall(r"[a-z0-9']+", text.lower()) if not self._ignored(w)]
        return 0.15 + 0.7 * _uniform(" ".join(rest))


def _uniform(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _noise(seed: int, text: str, sd: float) -> float:
    digest = hashlib.sha256(f"{seed}\0{text}".encode()).digest()
    u1 = (int.from_bytes(digest[:8], "big") + 1) / (2**64 + 2)
    u2 = int.from_bytes(digest[8:16], "big") / 2**64
    return float(sd * np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2))  # Box-Muller


def _scorer(kind: str, planted: Planted, seed: int, sd: float) -> object:
    if kind == "tfidf":
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        model = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit([t for t, _ in TRAIN], [y for _, y in TRAIN])
        return lambda texts: model.predict_proba(list(texts))[:, 1]
    if kind == "profanity":
        from profanity_check import predict_prob

        return lambda texts: predict_prob(list(texts))

    def score(texts: list[str]) -> np.ndarray:
        out = [planted.score(kind, t) + (_noise(seed, t, sd) if kind in NOISY else 0.0) for t in texts]
        return np.clip(np.array(out), 0.0, 1.0)

    return score


def main() -> int:
    import giskard

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--sizes", default="40,64,400")
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--planted-noise", type=float, default=0.02)
    parser.add_argument("--classes", default="none,noise,blanket,group,term,lower,tfidf,profanity")
    args = parser.parse_args()
    started = time.perf_counter()
    comments = pd.concat([pd.read_csv(path)["comment_text"] for path in DATA]).dropna().astype(str)
    pool = comments[comments.str.len() <= 1000].drop_duplicates().sample(frac=1.0, random_state=0).tolist()
    planted = GiskardBlind(args.delta, args.noise)
    planted.slot_words |= _giskard_words()  # blind to Giskard's switched words as well as to the identity terms
    pool = [t for t in pool if planted.any.contains(t)]  # texts that name an identity term, as the audit's slots
    results: dict[str, dict[str, dict[str, float]]] = {}
    for kind in args.classes.split(","):
        results[kind] = {}
        for n in (int(s) for s in args.sizes.split(",")):
            flagged = 0
            for seed in range(args.seeds):
                rng = np.random.default_rng(seed)
                texts = [pool[i] for i in rng.choice(len(pool), size=n, replace=False)]
                sd = args.noise if kind == "noise" else args.planted_noise
                score = _scorer(kind, planted, seed, sd)

                def predict(frame: pd.DataFrame, score=score) -> np.ndarray:
                    p = np.asarray(score(frame["text"].tolist()), dtype=float)
                    return np.stack([1 - p, p], axis=1)

                model = giskard.Model(model=predict, model_type="classification",
                                      classification_labels=["non-toxic", "toxic"], feature_names=["text"])  # fmt: skip
                data = giskard.Dataset(pd.DataFrame({"text": texts}), column_types={"text": "text"})
                scan = giskard.scan(model, data, only=["ethical_bias"], verbose=False)
                flagged += bool(scan.issues)
            results[kind][str(n)] = {"runs": args.seeds, "flagged": flagged / args.seeds}
            print(f"{kind:9} n={n:3}: giskard flags {flagged / args.seeds:.2f}", flush=True)
    sizes = sorted({int(n) for r in results.values() for n in r})
    lines = ["| class | " + " | ".join(f"Giskard flags, n={n}" for n in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for kind, by_size in results.items():
        cells = [f"{100 * by_size[str(n)]['flagged']:.0f} %" for n in sizes]
        lines.append(f"| {CLASS_WORDS.get(kind, kind)} | " + " | ".join(cells) + " |")
    report = {
        "benchmark": "calibration_giskard",
        "giskard": giskard.__version__,
        "seeds": args.seeds,
        "delta": args.delta,
        "noise_sd": args.noise,
        "planted_noise_sd": args.planted_noise,
        "results": results,
        "seconds": round(time.perf_counter() - started, 1),
        "table": "\n".join(lines) + "\n",
    }
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    print(report["table"])
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
