"""Consolidation of ratings (paper 000 §3.3, §4.3): one verdict per pair and criterion, agreement, tables.

* Categorical criteria: majority vote over the pair's human ratings; a three-way split (every answer different)
  is discarded (no verdict); a majority of ``unsure`` counts as ``no``.
* Meaning: the mean of the ratings.
* A pair is **good** when fluent = yes, reference = none, same_label = yes and meaning >= ``min_meaning``
  (2 by default), and nobody rejected it (paper 000: the box lets any rater remove an example).
* Krippendorff's alpha per criterion (nominal for the categorical ones, interval for meaning) over the raters.
* Tables per method and per method x topic shaped like paper 000 Tables 3-4: shares fluent, without reference,
  with the same label, and "FAL and meaning n+" for n = 4, 3, 2 — every share over the same denominator, the rated
  pairs, a discarded (undecided) verdict counting as not meeting the criterion.
* When an LLM has rated too (``counterfair rate judge``), its agreement with the human majority per criterion.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Literal, TypedDict

import numpy as np
import pandas as pd

from .store import CATEGORICAL, RatingStore


def majority(values: list[str]) -> str | None:
    """Majority answer; ``None`` for a tie without majority (e.g. a three-way split); ``unsure`` becomes ``no``."""
    if not values:
        return None
    counts = Counter(values).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    winner = counts[0][0]
    return "no" if winner == "unsure" else winner


def consolidate_frame(ratings: pd.DataFrame, pairs: pd.DataFrame, *, min_meaning: float = 2.0) -> pd.DataFrame:
    """One row per pair: verdicts per criterion, mean meaning, number of ratings, ``good``."""
    human = ratings[ratings["source"] != "llm"] if "source" in ratings else ratings
    rows = []
    grouped = {str(pid): g for pid, g in human.groupby("pair_id")}
    for pair in pairs.itertuples():
        group = grouped.get(str(pair.pair_id))
        entry: dict[str, Any] = {
            "pair_id": pair.pair_id,
            "method": pair.method,
            "topic": pair.topic,
            "attribute": pair.attribute,
            "ratings": 0 if group is None else len(group),
        }
        if group is None:
            entry.update(dict.fromkeys([*CATEGORICAL, "meaning", "rejected", "good"], None))
        else:
            for criterion in CATEGORICAL:
                entry[criterion] = majority(group[criterion].tolist())
            entry["meaning"] = float(group["meaning"].mean())
            entry["rejected"] = bool(group["reject"].astype(bool).any())  # any rater may remove an example
            decided = all(entry[c] is not None for c in CATEGORICAL)
            entry["good"] = bool(
                decided
                and entry["fluent"] == "yes"
                and entry["reference"] == "none"
                and entry["same_label"] == "yes"
                and entry["meaning"] >= min_meaning
                and not entry["rejected"]
            )
        rows.append(entry)
    return pd.DataFrame(rows)


def krippendorff_alpha(ratings: pd.DataFrame, criterion: str) -> float:
    """Krippendorff's alpha of the human raters on one criterion (NaN when it cannot be computed)."""
    import krippendorff

    human = ratings[ratings["source"] != "llm"] if "source" in ratings else ratings
    if human.empty:
        return math.nan
    table = human.pivot_table(index="rater", columns="pair_id", values=criterion, aggfunc="first")
    level: Literal["nominal", "interval"]
    if criterion == "meaning":
        data = table.to_numpy(dtype=float)
        level = "interval"
    else:
        codes = {v: i for i, v in enumerate(sorted(set(human[criterion])))}
        data = table.apply(lambda col: col.map(codes)).to_numpy(dtype=float)
        level = "nominal"
    if np.count_nonzero(~np.isnan(data).all(axis=0)) < 2 or len(set(data[~np.isnan(data)].tolist())) < 2:
        return math.nan
    try:
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return math.nan


def _share(values: pd.Series, predicate: Any) -> float | None:
    """Share of the rated pairs whose verdict meets ``predicate``; an undecided (discarded) verdict does not."""
    return None if values.empty else float(predicate(values.fillna("")).mean())


class RatedShares(TypedDict):
    """One line of paper 000's Tables 3-4: the rated pairs and the share of them meeting each criterion."""

    examples: int
    fluent: float | None
    no_attribute_reference: float | None
    same_label: float | None
    fal_meaning_4: float | None
    fal_meaning_3plus: float | None
    fal_meaning_2plus: float | None


class RatingTables(TypedDict):
    """The shares per method, and per method and topic (``"method / topic"``)."""

    by_method: dict[str, RatedShares]
    by_method_and_topic: dict[str, RatedShares]


class CriterionAgreement(TypedDict):
    """An LLM rater against the human majority on one criterion."""

    agreement: float
    kappa: float
    pairs: int


class LLMAgreement(TypedDict):
    """An LLM rater against the human majority: per categorical criterion (None: no pair has a verdict on it)
    and the mean absolute difference of meaning."""

    pairs: int
    fluent: CriterionAgreement | None
    reference: CriterionAgreement | None
    same_label: CriterionAgreement | None
    meaning_mean_abs_diff: float | None


class Consolidation(TypedDict):
    """``consolidation.json``: counts, Krippendorff's alpha per criterion, the tables, the LLM raters' agreement."""

    command: str
    pairs: int
    rated_pairs: int
    good_pairs: int
    min_meaning: float
    alpha: dict[str, float]
    tables: RatingTables
    llm_agreement: dict[str, LLMAgreement]


def tables(consolidated: pd.DataFrame) -> RatingTables:
    """Shares per method, and per method x topic (paper 000 Tables 3 and 4)."""

    def row(part: pd.DataFrame) -> RatedShares:
        rated = part[part["ratings"] > 0]
        fal = rated[
            (rated["fluent"] == "yes")
            & (rated["reference"] == "none")
            & (rated["same_label"] == "yes")
            & (~rated["rejected"].astype(bool))
        ]
        n = len(rated)
        return {
            "examples": n,
            "fluent": _share(rated["fluent"], lambda s: s == "yes"),
            "no_attribute_reference": _share(rated["reference"], lambda s: s == "none"),
            "same_label": _share(rated["same_label"], lambda s: s == "yes"),
            "fal_meaning_4": (len(fal[fal["meaning"] >= 4]) / n) if n else None,
            "fal_meaning_3plus": (len(fal[fal["meaning"] >= 3]) / n) if n else None,
            "fal_meaning_2plus": (len(fal[fal["meaning"] >= 2]) / n) if n else None,
        }

    by_method = {str(m): row(part) for m, part in consolidated.groupby("method", dropna=False)}
    by_topic = {f"{m} / {t}": row(part) for (m, t), part in consolidated.groupby(["method", "topic"], dropna=False)}
    return {"by_method": by_method, "by_method_and_topic": by_topic}


def _criterion_agreement(merged: pd.DataFrame, criterion: str) -> CriterionAgreement | None:
    """An LLM rater's answers on ``criterion`` against the human majority (share equal, Cohen's kappa)."""
    from sklearn.metrics import cohen_kappa_score

    both = merged[merged[criterion].notna()]
    if both.empty:
        return None
    llm_answer = both[f"{criterion}_llm"].replace({"unsure": "no"})
    kappa = (
        float(cohen_kappa_score(llm_answer, both[criterion]))
        if len(set(both[criterion]) | set(llm_answer)) > 1
        else math.nan
    )
    return {"agreement": float((llm_answer == both[criterion]).mean()), "kappa": kappa, "pairs": len(both)}


def llm_agreement(ratings: pd.DataFrame, consolidated: pd.DataFrame) -> dict[str, LLMAgreement]:
    """Agreement of each LLM rater with the human majority per criterion (share equal, Cohen's kappa)."""
    llm = ratings[ratings["source"] == "llm"] if "source" in ratings else ratings.iloc[0:0]
    out: dict[str, LLMAgreement] = {}
    for rater, part in llm.groupby("rater"):
        merged = part.merge(consolidated, on="pair_id", suffixes=("_llm", ""))
        both = merged[merged["meaning"].notna()]
        out[str(rater)] = {
            "pairs": len(merged),
            "fluent": _criterion_agreement(merged, "fluent"),
            "reference": _criterion_agreement(merged, "reference"),
            "same_label": _criterion_agreement(merged, "same_label"),
            "meaning_mean_abs_diff": (
                float((both["meaning_llm"] - both["meaning"]).abs().mean()) if len(both) else None
            ),
        }
    return out


def consolidate(store: RatingStore, *, min_meaning: float = 2.0) -> Consolidation:
    """Consolidate a project; writes ``consolidated.csv`` and ``consolidation.json`` beside the database."""
    from ..writing import write_json, write_table

    ratings = store.ratings_frame()
    consolidated = consolidate_frame(ratings, store.pairs(), min_meaning=min_meaning)
    report: Consolidation = {
        "command": "rate consolidate",
        "pairs": len(consolidated),
        "rated_pairs": int((consolidated["ratings"] > 0).sum()),
        "good_pairs": int(consolidated["good"].fillna(False).astype(bool).sum()),
        "min_meaning": min_meaning,
        "alpha": {c: krippendorff_alpha(ratings, c) for c in (*CATEGORICAL, "meaning")},
        "tables": tables(consolidated),
        "llm_agreement": llm_agreement(ratings, consolidated),
    }
    write_table(consolidated, store.directory / "consolidated.csv")
    write_json(report, store.directory / "consolidation.json")
    return report


def good_pair_ids(directory: Any) -> set[str]:
    """Pair ids judged good in a consolidated rating project (for audits restricted to good pairs)."""
    return {pid for pid, rating in pair_ratings(directory).items() if rating == "good"}


def pair_ratings(directory: Any) -> dict[str, str]:
    """Each rated pair's verdict in a consolidated rating project: ``good`` or ``poor`` (rated, not good); pairs
    nobody rated, or whose verdict was undecided, are left out."""
    from ..io import read_table

    frame = read_table(f"{directory}/consolidated.csv")
    good = frame["good"].astype(str)
    decided = good.isin(["True", "False"])
    return {
        str(pid): "good" if verdict == "True" else "poor"
        for pid, verdict in zip(frame.loc[decided, "pair_id"], good[decided], strict=True)
    }
