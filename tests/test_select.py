"""Text selection as paper 000 §4.1: each rule's count, in order, on hand-made rows and on real Civil Comments."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from counterfair.errors import ConfigError, InputError
from counterfair.selection import select_texts

from .conftest import SHARED_DATA, run_cli

TEN = "one two three four five six seven eight nine ten"


def _rows() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"text": f"{TEN} mosque", "islam": 0.9, "tox": 0.05},  # kept
            {"text": "too short mosque", "islam": 0.9, "tox": 0.0},  # length
            {"text": " ".join(["word"] * 46), "islam": 0.9, "tox": 0.0},  # length (46 words)
            {"text": f"{TEN} see https://example.org/x", "islam": 0.9, "tox": 0.0},  # url
            {"text": f"{TEN} see www.example.com now", "islam": 0.9, "tox": 0.0},  # url
            {"text": f"{TEN} mosque", "islam": 0.79, "tox": 0.0},  # attribute below 0.8
            {"text": f"{TEN} mosque", "islam": 0.8, "tox": 0.11},  # toxicity above 0.1
            {"text": " ".join(["w"] * 45), "islam": 0.8, "tox": 0.1},  # kept: 45 words, both bounds inclusive
        ]
    )


def test_rules_in_order_with_columns() -> None:
    kept, report = select_texts(_rows(), attribute="islam", attribute_column="islam", toxicity_column="tox")
    assert report["removed"] == {"length": 2, "url": 2, "attribute": 1, "toxicity": 1}
    assert report["kept"] == 2 and kept["words"].tolist() == [11, 45]


def test_detector_and_classifier_instead_of_columns() -> None:
    rows = _rows().drop(columns=["islam"])
    rows.loc[0, "text"] = f"{TEN} garden"  # no islam term: the keyword detector says 0
    kept, report = select_texts(rows, attribute="islam", toxicity_column="tox")
    assert report["removed"]["attribute"] == 2 and report["kept"] == 1  # rows 0 and 7 name no islam term
    kept, report = select_texts(
        rows.drop(columns=["tox"]),
        attribute="islam",
        classifier=lambda texts: [0.0 if "seven" in t else 1.0 for t in texts],
    )
    assert report["kept"] == 2 and set(kept["toxicity"]) == {0.0}


def test_bad_options_and_cells() -> None:
    with pytest.raises(ConfigError, match="toxicity rule needs"):
        select_texts(_rows(), attribute="islam")
    bad = _rows().astype({"islam": object})
    bad.loc[3, "islam"] = "high"
    with pytest.raises(InputError, match="column 'islam' row 5 is not a number"):
        select_texts(bad, attribute="islam", attribute_column="islam", toxicity_column="tox")


def test_real_civil_comments_through_the_cli(tmp_path: Path) -> None:
    source = SHARED_DATA / "nlp_ctf" / "civil_comments" / "civil_train_data.csv"
    if not source.exists():
        pytest.skip("../shared/data is not present")
    out = tmp_path / "selected.csv"
    done = run_cli(
        "select", str(source), "--attribute", "islam", "--text-column", "comment_text", "--out", str(out), timeout=600
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.with_suffix(".summary.json").read_text())
    frame = pd.read_csv(source)
    words = frame["comment_text"].fillna("").str.split().str.len()
    assert report["texts"] == len(frame) == report["kept"] + sum(report["removed"].values())
    assert report["removed"]["length"] == int(((words < 10) | (words > 45)).sum())  # counted here independently
    kept = pd.read_csv(out)
    assert kept["words"].between(10, 45).all() and (kept["attribute_prob"] >= 0.8).all()
    assert (kept["toxicity"] <= 0.1).all() and kept["comment_text"].str.contains("(?i)muslim|islam|mosque").all()


def test_the_allusion_detector_selects_a_text_that_names_no_term() -> None:
    from .fakes import ScriptedLLM

    rows = pd.DataFrame(
        {
            "text": [f"{TEN} during Eid", f"{TEN} mosque", f"{TEN} garden"],
            "tox": [0.0, 0.0, 0.0],
        }
    )
    llm = ScriptedLLM(lambda *_: "", judge=lambda text: 0.97 if "Eid" in text or "about" in text else 0.03)
    kept, report = select_texts(rows, attribute="islam", toxicity_column="tox", detector="keyword+llm", llm=llm)
    assert kept["text"].tolist() == [f"{TEN} during Eid", f"{TEN} mosque"] and report["removed"]["attribute"] == 1
    assert kept["attribute_prob"].tolist() == [pytest.approx(0.97), 1.0]
    assert llm.judged[3:] == [f"{TEN} during Eid", f"{TEN} garden"]  # the term's text was not asked
