"""Word-list derivation by naive Bayes (paper 000, App. B.1)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from counterfair.errors import InputError
from counterfair.lexicons.attributes import load_attribute
from counterfair.lexicons.derive import derive

from .conftest import SHARED_DATA, run_cli


def _texts() -> pd.DataFrame:
    """Six texts about a mosque (attribute score 0.9) and six about a garden (0.1); 'the' is everywhere."""
    rows = [{"text": f"the mosque imam spoke at prayer number {i}", "muslim": 0.9} for i in range(6)]
    rows += [{"text": f"the garden hose leaked at number {i}", "muslim": 0.1} for i in range(6)]
    rows += [{"text": "the mosque was near the garden", "muslim": 0.2}]  # 'mosque' once on the other side
    return pd.DataFrame(rows)


def test_hand_computed_ratios() -> None:
    derived = derive(_texts(), label_column="muslim", top=4, min_count=5)
    # vocabulary (binary counts): at, garden, hose, imam, leaked, mosque, near, number, prayer, spoke, the, was = 12
    # attribute class: 6 texts x 7 words = 42 counts; imam/prayer/spoke 6 each, mosque 6
    # rest: 6 x 6 + 5 = 41 counts; imam 0, mosque 1
    # log ratio imam = log((6+1)/(42+12)) - log((0+1)/(41+12)) = log(7/54) - log(1/53)
    import math

    expected_imam = math.log(7 / 54) - math.log(1 / 53)
    expected_mosque = math.log(7 / 54) - math.log(2 / 53)
    terms = derived.terms.set_index("term")
    assert list(derived.terms["term"][:3]) == ["imam", "prayer", "spoke"]  # equal ratios, alphabetical
    assert terms.loc["imam", "log_ratio"] == pytest.approx(expected_imam)
    assert terms.loc["mosque", "log_ratio"] == pytest.approx(expected_mosque)
    assert "the" not in terms.index and "number" not in terms.index  # in every text of both classes: ratio < 0
    assert (derived.attribute_texts, derived.other_texts) == (6, 7)


def test_labels_toxicity_and_errors(tmp_path: Path) -> None:
    frame = _texts().assign(label=lambda f: ["yes" if s > 0.5 else "no" for s in f["muslim"]], tox=0.0)
    frame.loc[0, "tox"] = 0.5
    derived = derive(frame, label_column="label", positive="yes", toxicity_column="tox", min_count=5)
    assert derived.removed["toxicity"] == 1 and derived.attribute_texts == 5
    with pytest.raises(InputError, match="row 2 is not a number"):
        derive(frame, label_column="label")
    with pytest.raises(InputError, match="no text has the attribute"):
        derive(frame, label_column="label", positive="maybe")


def test_cli_writes_a_yaml_draft_that_loads(tmp_path: Path) -> None:
    data = tmp_path / "texts.csv"
    _texts().to_csv(data, index=False)
    out = tmp_path / "draft.yaml"
    done = run_cli(
        "wordlist",
        "derive",
        str(data),
        "--label-column",
        "muslim",
        "--top",
        "3",
        "--name",
        "mosques",
        "--out",
        str(out),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert load_attribute(str(out)).ablation == ("imam", "prayer", "spoke")


def test_sentiment_words_of_real_reviews() -> None:
    """On CAD's IMDB reviews (paired, so the topics cancel), the terms of each class are its sentiment words."""
    source = SHARED_DATA / "cad_imdb" / "train_paired.tsv"
    if not source.exists():
        pytest.skip("../shared/data is not present")
    positive = derive(source, text_column="Text", label_column="Sentiment", positive="Positive")
    negative = derive(source, text_column="Text", label_column="Sentiment", positive="Negative")
    assert {"delightful", "superb", "wonderful", "amazing"} <= set(positive.terms["term"])
    assert {"awful", "terrible", "worst", "dull"} <= set(negative.terms["term"])
    assert positive.attribute_texts == negative.other_texts == 1707
