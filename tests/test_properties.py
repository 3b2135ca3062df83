"""Property-based checks of the text utilities and metrics (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from counterfair.metrics import functional as F
from counterfair.text import TermMatcher, word_distance

words = st.lists(st.sampled_from(["a", "b", "c", "cat", "dog", "!", "n't"]), max_size=12)


@given(words, words)
def test_distance_symmetric_and_bounded(a: list[str], b: list[str]) -> None:
    d = word_distance(a, b)
    assert d == word_distance(b, a)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))
    assert (d == 0) == (a == b)


@given(words, words, words)
def test_distance_triangle_inequality(a: list[str], b: list[str], c: list[str]) -> None:
    assert word_distance(a, c) <= word_distance(a, b) + word_distance(b, c)


probas = st.integers(min_value=1, max_value=20).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n), st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)
    )
)


@given(probas)
def test_rates_and_changes_in_range(pair: tuple[list[float], list[float]]) -> None:
    a = np.stack([1 - np.array(pair[0]), np.array(pair[0])], axis=1)
    b = np.stack([1 - np.array(pair[1]), np.array(pair[1])], axis=1)
    rate = F.flip_rate(F.predicted_labels(a), F.predicted_labels(b))
    assert 0.0 <= rate <= 1.0
    change = F.prob_change(a, b)
    assert ((change >= -1) & (change <= 1)).all()


@settings(max_examples=50)
@given(
    st.lists(st.sampled_from(["muslim", "christian", "Muslim", "CHRISTIAN", "the", "a", "anti-muslim"]), max_size=10)
)
def test_swapping_twice_returns_the_original(tokens: list[str]) -> None:
    text = " ".join(tokens)
    matcher = TermMatcher(["muslim", "christian"])
    swap = {"muslim": "christian", "christian": "muslim"}
    once, _ = matcher.replace(text, swap)
    twice, _ = matcher.replace(once, swap)
    assert twice == text
