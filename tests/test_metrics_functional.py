"""Pure metric functions on small cases whose values were computed by hand (shown in comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from counterfair.metrics import functional as F
from counterfair.text import tokenize_batch


def test_predicted_labels_argmax_and_threshold() -> None:
    p = np.array([[0.9, 0.1], [0.3, 0.7], [0.55, 0.45]])
    assert F.predicted_labels(p).tolist() == [0, 1, 0]
    assert F.predicted_labels(p, threshold=0.4).tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match="binary"):
        F.predicted_labels(np.full((2, 3), 1 / 3), threshold=0.5)


def test_flip_rate_by_hand() -> None:
    # labels change in rows 1 and 3 of 4 -> 2/4
    assert F.flip_rate([0, 1, 1, 0], [0, 0, 1, 1]) == 0.5
    with pytest.raises(ValueError, match="undefined"):
        F.flip_rate([], [])
    with pytest.raises(ValueError, match="shape"):
        F.flip_rate([0, 1], [0])


def test_flipped_from_probabilities() -> None:
    orig = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    cf = np.array([[0.3, 0.7], [0.1, 0.9], [0.7, 0.3]])
    assert F.flipped(orig, cf).tolist() == [True, False, False]


def test_prob_change_binary_by_hand() -> None:
    orig = np.array([[0.9, 0.1], [0.2, 0.8]])
    cf = np.array([[0.3, 0.7], [0.6, 0.4]])
    # row 0: contrast = label 1: 0.7 - 0.1 = 0.6 ; row 1: contrast = label 0: 0.6 - 0.2 = 0.4
    np.testing.assert_allclose(F.prob_change(orig, cf), [0.6, 0.4])
    # moving away from the contrast label is negative: 0.05 - 0.1
    np.testing.assert_allclose(F.prob_change([[0.9, 0.1]], [[0.95, 0.05]]), [-0.05])


def test_contrast_labels_multiclass_rules() -> None:
    p = np.array([[0.6, 0.3, 0.1], [0.1, 0.2, 0.7]])
    assert F.contrast_labels(p).tolist() == [1, 1]  # second most probable
    assert F.contrast_labels(p, rule="least").tolist() == [2, 0]
    cf = np.array([[0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])
    np.testing.assert_allclose(F.prob_change(p, cf), [0.4, 0.0])  # 0.7-0.3, 0.2-0.2


def test_proba_validation() -> None:
    with pytest.raises(ValueError, match="NaN"):
        F.prob_change([[np.nan, 0.5]], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="shape"):
        F.predicted_labels([0.1, 0.9])


def test_token_distances_by_hand() -> None:
    orig = tokenize_batch(["the cat sat", "It is great !"])
    cf = tokenize_batch(["the dog sat down", "It is great !"])
    raw, norm = F.token_distances(orig, cf)
    assert raw.tolist() == [2.0, 0.0]  # cat->dog, +down
    np.testing.assert_allclose(norm, [2 / 3, 0.0])
    with pytest.raises(ValueError, match="no tokens"):
        F.token_distances([[]], [["a"]])


def test_diversity_by_hand() -> None:
    # cf1 "the dog sat" vs cf2 "a dog sat down": a/the substitution + insertion = 2; original has 3 tokens
    raw, norm = F.diversity([["the", "dog", "sat"]], [["a", "dog", "sat", "down"]], [3])
    assert raw.tolist() == [2.0]
    np.testing.assert_allclose(norm, [2 / 3])


def test_perplexity_from_nll_by_hand() -> None:
    # two tokens each with probability 1/4: nll = 2*ln 4, ppl = exp(ln 4) = 4
    np.testing.assert_allclose(F.perplexity_from_nll([2 * math.log(4)], [2]), [4.0])
    with pytest.raises(ValueError, match="at least one"):
        F.perplexity_from_nll([1.0], [0])


def test_sentence_bleu_by_hand() -> None:
    got = F.sentence_bleu(
        ["the cat sat on a mat", "the dog sat", "the cat sat on the mat", "the cat sat"],
        ["the cat sat on the mat", "the cat sat", "the cat sat on the mat", "the cat sat on the mat"],
    )
    # 1: precisions 5/6, 3/5, 2/4, 1/3, no brevity penalty -> (5/6*3/5*1/2*1/3)**(1/4)
    # 2: effective order 3; 1-grams 2/3; 2- and 3-grams have no match: exp smoothing gives
    #    1/(2*2) and 1/(4*1) -> (2/3 * 1/4 * 1/4)**(1/3)
    # 3: identical -> 1
    # 4: all precisions 1, brevity penalty exp(1 - 6/3)
    expected = [(5 / 6 * 3 / 5 * 1 / 2 * 1 / 3) ** 0.25, (2 / 3 * 1 / 4 * 1 / 4) ** (1 / 3), 1.0, math.exp(-1)]
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert F.bleu_signature().startswith("nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:")


def test_bootstrap_ci_properties() -> None:
    assert F.bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    low, high = F.bootstrap_ci([1.0])
    assert math.isnan(low)
    assert math.isnan(high)
    values = np.arange(100, dtype=float)
    low, high = F.bootstrap_ci(values, seed=1)
    # mean 49.5, standard error 29.01/sqrt(100) = 2.9: a 95% interval is about 49.5 +- 5.7
    assert 42.0 < low < 46.0
    assert 53.0 < high < 57.0
    assert F.bootstrap_ci(values, seed=1) == (low, high)  # seeded: reproducible


def test_cluster_bootstrap_ci_edges_and_reproducible() -> None:
    assert F.cluster_bootstrap_ci([6.0, 2.0], [3, 1]) == (2.0, 2.0)  # every text's mean is 2
    assert all(math.isnan(v) for v in F.cluster_bootstrap_ci([5.0], [4]))  # one text: no interval over texts
    assert all(math.isnan(v) for v in F.cluster_bootstrap_ci([5.0, math.nan], [4, 2]))  # one finite text
    with pytest.raises(ValueError, match="3 sums but 2 sizes"):
        F.cluster_bootstrap_ci([1.0, 2.0, 3.0], [1, 1])
    sums, sizes = np.arange(40.0), np.full(40, 2.0)
    low, high = F.cluster_bootstrap_ci(sums, sizes, seed=3)
    assert low < sums.sum() / sizes.sum() < high
    # the texts' means 0, 0.5, ..., 19.5: standard error 5.84 / sqrt(40) = 0.92, a 95 % interval about +-1.8
    assert 1.4 < (high - low) / 2 < 2.2
    assert F.cluster_bootstrap_ci(sums, sizes, seed=3) == (low, high)


def test_cluster_bootstrap_covers_where_the_pair_bootstrap_does_not() -> None:
    """Planted clusters: 60 texts of 20 pairs each, a text's pairs sharing most of their change (as a text's swaps
    share its original's score). Over 150 seeds the interval over texts holds the true mean about 95 % of the time;
    resampling pairs as if independent gives an interval about three times too narrow, which misses it most times."""
    texts, per_text, rounds = 60, 20, 150
    covered_texts = covered_pairs = 0
    for seed in range(rounds):
        rng = np.random.default_rng(seed)
        changes = rng.normal(0.0, 1.0, texts)[:, None] + rng.normal(0.0, 0.5, (texts, per_text))  # true mean 0
        low, high = F.cluster_bootstrap_ci(changes.sum(axis=1), np.full(texts, per_text), n_resamples=400, seed=seed)
        covered_texts += low <= 0.0 <= high
        low, high = F.bootstrap_ci(changes.ravel(), n_resamples=400, seed=seed)
        covered_pairs += low <= 0.0 <= high
    assert 0.89 <= covered_texts / rounds <= 0.99
    assert covered_pairs / rounds < 0.6


def test_summarize_ignores_nan_and_counts() -> None:
    s = F.summarize([1.0, 2.0, np.nan, 3.0, 6.0])
    assert s["n"] == 4
    assert s["mean"] == 3.0
    assert s["median"] == 2.5
    assert s["min"] == 1.0
    assert s["max"] == 6.0
    assert s["std"] == pytest.approx(np.std([1, 2, 3, 6], ddof=1))
    assert s["ci_low"] <= 3.0 <= s["ci_high"]
    empty = F.summarize([np.nan])
    assert empty["n"] == 0
    assert math.isnan(empty["mean"])


def test_grouped_summary() -> None:
    out = F.grouped_summary([1.0, 3.0, 10.0, 20.0], ["a", "a", "b", "b"])
    assert list(out) == ["a", "b"]
    assert out["a"]["mean"] == 2.0
    assert out["b"]["mean"] == 15.0
    with pytest.raises(ValueError, match="length"):
        F.grouped_summary([1.0], ["a", "b"])


def test_bootstrap_in_batches_matches_the_all_at_once_draw() -> None:
    """3000 values: resamples come in two batches, the interval is the one scipy draws all at once."""
    from scipy.stats import bootstrap

    values = np.random.default_rng(0).random(3000)
    whole = bootstrap(
        (values,), np.mean, n_resamples=2000, method="percentile", vectorized=True, rng=np.random.default_rng(0)
    ).confidence_interval
    assert F.bootstrap_ci(values) == (whole.low, whole.high)


def test_group_rows_splits_as_pandas_groupby_iterates() -> None:
    import numpy as np
    import pandas as pd

    from counterfair.metrics.fairness import group_rows

    frame = pd.DataFrame(
        {"a": ["y", "x", None, "y", "x", "z"], "b": ["q", "p", "p", "q", "r", "p"], "v": [1.0, 2, 3, 4, 5, 6]}
    )
    for keys, sort in (("a", True), ("a", False), (["a", "b"], True), (["a", "b"], False)):
        order, bounds = group_rows(frame, keys, sort=sort)
        parts = [part.tolist() for part in np.split(frame["v"].to_numpy()[order], bounds)]
        assert parts == [group["v"].tolist() for _, group in frame.groupby(keys, sort=sort)], (keys, sort)
    order, bounds = group_rows(frame.iloc[:0], "a", sort=True)
    assert order.size == 0 and bounds.size == 0


def test_bootstrap_intervals_do_not_depend_on_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """#47: the resamples are drawn in batches to bound memory; a smaller batch gives the same interval to the bit
    (one generator, drawn in order; each resample's statistic is its own row's), so past runs' summaries stand."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=4_001)
    sums, sizes = rng.normal(size=2_999) * 3, rng.integers(1, 9, size=2_999).astype(float)
    monkeypatch.setattr(F, "BOOTSTRAP_BATCH_VALUES", 10**9)  # every resample at once
    whole = (
        F.bootstrap_ci(values, n_resamples=300, seed=5),
        F.cluster_bootstrap_ci(sums, sizes, n_resamples=300, seed=5),
    )
    monkeypatch.setattr(F, "BOOTSTRAP_BATCH_VALUES", 3 * 4_001 + 17)  # three resamples a batch, odd sizes
    batched = (
        F.bootstrap_ci(values, n_resamples=300, seed=5),
        F.cluster_bootstrap_ci(sums, sizes, n_resamples=300, seed=5),
    )
    assert batched == whole and whole[0][0] < values.mean() < whole[0][1]
