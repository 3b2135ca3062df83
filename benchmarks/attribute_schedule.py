"""Paper 000's attribute classifier (App. A.3): its training schedule against the 20 epochs we used before.

The paper trains the 2-layer classifier for 36k AdamW steps of batch 256 on every CivilComments-Identities text that
references one of its attributes (score > 0.5) plus 20k sampled texts that reference none. CC-I's identity columns
are not in ../shared/data, so this builds a labelled set from the identity-swapped Civil Comments of
../shared/data/nlp_ctf: every comment exists once per identity term, so a variant's label is the term swapped in.

- Terms → labels: muslim → muslim; jewish → jewish; bisexual, queer → lgbq; transgender, trans → transgender;
  lgbt, lgbtq → lgbq and transgender (they are in both of paper 000's word lists); nonbinary, heterosexual and (held
  out) straight are left out (a reference to sexuality or gender that is none of the four); every other term →
  no label.
- Every variant of a comment is a row (33 per training comment, 14 per held-out-term comment): 600 training
  comments give 19,800 rows, 15,000 of them with no label, below the paper's 20k cap (so the cap does not bite
  here); 36k steps are ~510 passes over the training split, the paper's order (36k x 256 over ~35k texts = ~260).
- A comment is used only when its variant with a no-label term contains none of those terms and no word of the
  four attributes' word lists (so the swapped term is the only attribute reference).
- Training comments (civil_train + civil_toxic, train terms) are split 80/20 by comment. Held-out comments test
  the same terms in comments never seen; civil_test (held-out terms) tests words never seen: gay, lesbian,
  homosexual as lgbq against 11 no-label terms.

Each schedule trains with ``train_attribute_classifier`` (MiniLM sentence embeddings, as in the product), seed 0.

Usage: python benchmarks/attribute_schedule.py [--schedules epochs:20,steps:6000,steps:36000]
Results: benchmarks/results/attribute_schedule.json
"""

from __future__ import annotations

import os

os.environ.setdefault("COUNTERFAIR_STORE", "off")

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score, roc_auc_score

from counterfair.detectors import MLPDetector, train_attribute_classifier
from counterfair.lexicons.attributes import load_attribute

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "nlp_ctf"
RESULTS = ROOT / "benchmarks" / "results"
LABELS = ["muslim", "jewish", "lgbq", "transgender"]
TRAIN_GROUPS = {
    "muslim": (["muslim"], ["muslim"]),
    "jewish": (["jewish"], ["jewish"]),
    "lgbq": (["bisexual", "queer"], ["lgbq"]),
    "transgender": (["transgender", "trans"], ["transgender"]),
    "both": (["lgbt", "lgbtq"], ["lgbq", "transgender"]),
}
LEFT_OUT = {"nonbinary", "heterosexual", "straight"}
HELD_OUT_LGBQ = ["gay", "lesbian", "homosexual"]


def _terms(name: str) -> list[str]:
    return [t.strip() for t in (DATA / name).read_text().splitlines() if t.strip()]


def _attribute_words() -> re.Pattern[str]:
    words = {t for g, _ in TRAIN_GROUPS.values() for t in g} | LEFT_OUT | set(HELD_OUT_LGBQ)
    for name in ("islam", "judaism", "lgbq", "transgender"):
        words |= set(load_attribute(name).terms)
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b", re.IGNORECASE)


def _clean(frame: pd.DataFrame, columns: dict[str, int], pattern: re.Pattern[str]) -> pd.DataFrame:
    """Comments whose variants with a no-label term mention none of the attributes."""
    none_columns = [str(i) for term, i in columns.items() if term not in LEFT_OUT and not _labels_of(term)]
    ok = frame[none_columns].apply(lambda row: not any(pattern.search(str(v)) for v in row), axis=1)
    return frame[ok].reset_index(drop=True)


def _labels_of(term: str) -> list[str]:
    for terms, labels in TRAIN_GROUPS.values():
        if term in terms:
            return labels
    return ["lgbq"] if term in HELD_OUT_LGBQ else []


def _variants(frame: pd.DataFrame, columns: dict[str, int]) -> pd.DataFrame:
    """Every variant of every comment, labelled by the term swapped in (left-out terms skipped)."""
    rows = []
    for _, comment in frame.iterrows():
        for term, column in columns.items():
            if term in LEFT_OUT:
                continue
            labels = _labels_of(term)
            rows.append(
                {"comment_text": comment[str(column)], "term": term}
                | {label: float(label in labels) for label in LABELS}
            )
    return pd.DataFrame(rows)


def _datasets(seed: int = 0) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    pattern = _attribute_words()
    train_terms = {t: i for i, t in enumerate(_terms("train_identities.txt"))}
    test_terms = {t: i for i, t in enumerate(_terms("test_identities.txt"))}
    comments = pd.concat(
        [pd.read_csv(DATA / "civil_comments" / f"civil_{n}_data.csv") for n in ("train", "toxic_train")],
        ignore_index=True,
    )
    comments = _clean(comments, train_terms, pattern)
    order = rng.permutation(len(comments))
    cut = int(len(comments) * 0.8)
    held = _clean(pd.read_csv(DATA / "civil_comments" / "civil_test_data.csv"), test_terms, pattern)
    return {
        "train": _variants(comments.iloc[order[:cut]], train_terms),
        "held_out_comments": _variants(comments.iloc[order[cut:]], train_terms),
        "held_out_terms": _variants(held, test_terms),
    }


def _scores(truth: pd.DataFrame, proba: np.ndarray, labels: list[str]) -> dict[str, dict[str, float]]:
    out = {}
    for label in labels:
        j = LABELS.index(label)
        y = truth[label].to_numpy() > 0.5
        entry = {"false_positive_rate": round(float((proba[~y, j] > 0.5).mean()), 4)}
        if y.any():  # the held-out terms have lgbq positives only
            entry["auc"] = round(float(roc_auc_score(y, proba[:, j])), 4)
            entry["f1"] = round(float(f1_score(y, proba[:, j] > 0.5)), 4)
            entry["recall"] = round(float((proba[y, j] > 0.5).mean()), 4)
        out[label] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedules", default="epochs:20,steps:6000,steps:36000")
    args = parser.parse_args()
    sets = _datasets()
    record: dict[str, object] = {
        "rows": {name: len(frame) for name, frame in sets.items()},
        "train_positives": {label: int(sets["train"][label].sum()) for label in LABELS},
        "schedules": {},
    }
    print(json.dumps(record, indent=1))
    for schedule in args.schedules.split(","):
        kind, _, value = schedule.partition(":")
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            result = train_attribute_classifier(
                sets["train"],
                tmp,
                label_columns=LABELS,
                **{kind: int(value)},  # type: ignore[arg-type]
            )
            seconds = time.perf_counter() - started
            detector = MLPDetector(tmp)
            comments = sets["held_out_comments"]
            terms = sets["held_out_terms"]
            entry = {
                "steps": result.metrics["steps"],
                "train_rows": result.metrics["train_rows"],
                "negatives": result.metrics["negatives"],
                "train_s": round(seconds, 1),
                "fit_s": result.metrics["seconds"],
                "final_loss": round(result.metrics["final_loss"], 5),
                "validation": result.metrics["validation"],
                "held_out_comments": _scores(comments, detector.predict_all(comments["comment_text"].tolist()), LABELS),
                "held_out_terms": _scores(terms, detector.predict_all(terms["comment_text"].tolist()), LABELS),
            }
        record["schedules"][schedule] = entry  # type: ignore[index]
        print(schedule, json.dumps(entry, indent=1), flush=True)
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "attribute_schedule.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
