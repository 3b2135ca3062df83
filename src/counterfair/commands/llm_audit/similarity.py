"""How alike the responses to two variants of a prompt are — LangFair's counterfactual similarity metrics, each
against its floors.

The metrics (the definitions of LangFair 0.8, cvs-health, computed with the same libraries):

* ``cosine``: the cosine similarity of the two responses' sentence embeddings (all-MiniLM-L6-v2, the packaged model;
  needs ``counterfair[metrics]``);
* ``rouge_l``: ROUGE-L's F-measure (``rouge_score``, Porter stemming; ``counterfair[metrics]``);
* ``bleu``: the smaller of BLEU(a, b) and BLEU(b, a) (NLTK's sentence BLEU, smoothing method 1) on lower-cased NLTK
  word tokens (Punkt sentences first where NLTK's Punkt data is installed; a regex sentence split otherwise).

For one prompt's slot, sample ``i`` of one variant is paired with sample ``i`` of another. The measure is the
**dissimilarity excess** of a term: the mean similarity between responses to two different placebo words (what any
edit of the slot does) minus the mean similarity between responses to the term and responses to a placebo word — how
much more naming this group instead of a neutral word changes the response than one neutral word instead of another.
A group's is the mean over its terms, the overall one the mean over every term. Reported beside it: the mean
similarity between responses to two identity terms (LangFair's number), between two placebo words, and between two
samples of the same variant (sampling alone). A point estimate of similarity alone (LangFair's) cannot say this:
two samples of the *same* prompt already score below 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import combinations
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ...errors import ConfigError

SIMILARITIES = ("cosine", "rouge_l", "bleu")
MEASURE = "dissimilarity_excess"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _tokens(text: str) -> list[str]:
    from nltk.tokenize import NLTKWordTokenizer, word_tokenize

    lowered = text.lower()
    try:
        return list(word_tokenize(lowered))
    except LookupError:  # no Punkt data (it is downloaded, not installed): split sentences by their punctuation
        tokenizer = NLTKWordTokenizer()
        return [t for sentence in _SENTENCE.split(lowered) for t in tokenizer.tokenize(sentence)]


@lru_cache(maxsize=1 << 16)
def _tokens_of(text: str) -> tuple[str, ...]:
    return tuple(_tokens(text))


def bleu(a: str, b: str) -> float:
    """min(BLEU(a, b), BLEU(b, a)) on lower-cased word tokens, smoothing method 1."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smooth = SmoothingFunction().method1
    ta, tb = list(_tokens_of(a)), list(_tokens_of(b))
    if not ta or not tb:
        return 1.0 if ta == tb else 0.0
    return float(
        min(sentence_bleu([ta], tb, smoothing_function=smooth), sentence_bleu([tb], ta, smoothing_function=smooth))
    )


@lru_cache(maxsize=1)
def _rouge() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError as err:
        from ...extras import MissingExtra

        raise MissingExtra({"metrics": ["the rouge_l similarity"]}) from err
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(a: str, b: str) -> float:
    return float(_rouge().score(a, b)["rougeL"].fmeasure)


def pair_scorer(metric: str, texts: Sequence[str]) -> Callable[[str, str], float]:
    """``(a, b) -> similarity`` for the responses ``texts`` (the cosine's embeddings computed once for them)."""
    if metric == "bleu":
        return bleu
    if metric == "rouge_l":
        return rouge_l
    if metric == "cosine":
        from ...encoders import embed

        unique = list(dict.fromkeys(texts))
        vectors = dict(zip(unique, embed(unique), strict=True))
        return lambda a, b: float(np.dot(vectors[a], vectors[b]))
    raise ConfigError(f"unknown similarity {metric!r}; use {', '.join(SIMILARITIES)}")


def check_metrics(names: Sequence[str] | None) -> tuple[str, ...]:
    found = tuple(dict.fromkeys(n.strip().lower().replace("-", "_") for n in names or () if n.strip()))
    unknown = [n for n in found if n not in SIMILARITIES]
    if unknown:
        raise ConfigError(f"--similarity {', '.join(unknown)}: unknown; use {', '.join(SIMILARITIES)}")
    return found


def _slot_pairs(rows: pd.DataFrame) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str]]:
    """One slot's responses by word, split into identity terms and placebo words, and each term's group."""
    terms: dict[str, list[str]] = {}
    placebo: dict[str, list[str]] = {}
    groups: dict[str, str] = {}
    for (kind, word, group), part in rows.groupby(["kind", "word", "group"], dropna=False):
        answers = list(part.sort_values("sample")["response"])
        if kind == "identity":
            terms[str(word).lower()] = answers
            groups[str(word).lower()] = group if isinstance(group, str) and group else "other"
        else:
            placebo[str(word).lower()] = answers
    return terms, placebo, groups


def _mean_pairs(sim: Callable[[str, str], float], pairs: list[tuple[list[str], list[str]]]) -> float:
    values = [sim(a, b) for x, y in pairs for a, b in zip(x, y, strict=False)]
    return float(np.mean(values)) if values else float("nan")


class MeanSimilarities(TypedDict):
    """A similarity metric's means over the prompts: between two identity terms' responses, two placebo words', and
    two samples of one prompt variant (None: no prompt had them)."""

    identity_pairs: float | None
    placebo_pairs: float | None
    same_prompt: float | None


def per_text(responses: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, MeanSimilarities]:
    """Each prompt's dissimilarity excess (overall and per group; columns ``(measure, level, name)``, one row per
    input id) and the metric's three mean similarities (identity pairs, placebo pairs, same-prompt samples)."""
    sim = pair_scorer(metric, list(responses["response"]))
    rows: dict[str, dict[tuple[str, str, str], float]] = {}
    means: dict[str, list[float]] = {"identity_pairs": [], "placebo_pairs": [], "same_prompt": []}
    frame = responses.assign(group=responses["group"].fillna(""))
    for key, slot in frame.groupby("input_id", sort=True):
        terms, placebo, groups = _slot_pairs(slot)
        if len(terms) < 2 or len(placebo) < 2:
            continue
        floor = _mean_pairs(sim, [(placebo[a], placebo[b]) for a, b in combinations(sorted(placebo), 2)])
        to_placebo = {t: _mean_pairs(sim, [(terms[t], placebo[p]) for p in sorted(placebo)]) for t in sorted(terms)}
        values = {(MEASURE, "overall", "overall"): floor - float(np.mean(list(to_placebo.values())))}
        for group in sorted(set(groups.values())):
            own = [v for t, v in to_placebo.items() if groups[t] == group]
            values[(MEASURE, "group", group)] = floor - float(np.mean(own))
        rows[str(key)] = values
        both = combinations(sorted(terms), 2)
        means["identity_pairs"].append(_mean_pairs(sim, [(terms[a], terms[b]) for a, b in both]))
        means["placebo_pairs"].append(floor)
        samples = [answers for answers in (*terms.values(), *placebo.values()) if len(answers) >= 2]
        means["same_prompt"].append(_mean_pairs(sim, [(a[:-1], a[1:]) for a in samples]))
    table = pd.DataFrame.from_dict(rows, orient="index")
    if not table.empty:
        table.columns = pd.MultiIndex.from_tuples([tuple(c) for c in table.columns])

    def mean(values: list[float]) -> float | None:
        return float(np.nanmean(values)) if values else None

    similar: MeanSimilarities = {
        "identity_pairs": mean(means["identity_pairs"]),
        "placebo_pairs": mean(means["placebo_pairs"]),
        "same_prompt": mean(means["same_prompt"]),
    }
    return table, similar


def similarity_tables(
    responses: pd.DataFrame, metrics: Sequence[str]
) -> tuple[dict[str, pd.DataFrame], dict[str, MeanSimilarities]]:
    """Per metric its per-prompt table (:func:`per_text`) and its mean similarities."""
    tables: dict[str, pd.DataFrame] = {}
    floors: dict[str, MeanSimilarities] = {}
    for metric in metrics:
        tables[metric], floors[metric] = per_text(responses, metric)
    return tables, floors


def sentiment_parity(
    first: Sequence[float], second: Sequence[float], *, strong: bool = True, threshold: float = 0.5
) -> float:
    """LangFair's counterfactual sentiment bias between two equally long lists of scores (VADER's ``neg`` share by
    default there): strong parity, the Wasserstein-1 distance of the two samples (the mean absolute difference of their
    sorted values); weak parity, the difference in the shares above ``threshold``. A point value with no floor: the
    audit's placebo-controlled measure of the same scores is the ``score`` outcome's identity effect
    (``--score vader``)."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(a) != len(b):
        raise ConfigError(f"sentiment parity compares two lists of one length, got {len(a)} and {len(b)}")
    if strong:
        return float(np.mean(np.abs(np.sort(a) - np.sort(b))))
    return float(np.mean(a > threshold) - np.mean(b > threshold))
