from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.shell import run_generate
from counterfair.errors import ConfigError, InputError
from counterfair.io import read_table

TEXTS = pd.DataFrame(
    {
        "id": ["a", "b", "c", "d", "e"],
        "text": [
            "So you are saying it's OK? An apologist for Islamic terrorism?",
            "My Muslim neighbour brings us food every Eid.",
            "Nothing about religion here, just a black car.",
            "   ",
            "<script>alert('x')</script> Muslims & the mosque",
        ],
    }
)
OPTS = {"methods": ["ablation", "substitution", "swap"], "id_column": "id"}


def test_outputs_one_row_per_input_and_method(tmp_path: Path) -> None:
    result = run_generate(TEXTS, tmp_path, GenerateOptions(**OPTS))  # type: ignore[arg-type]
    cfs = read_table(tmp_path / "counterfactuals.csv")
    assert len(cfs) == 15
    assert cfs[["input_id", "method"]].values.tolist()[:3] == [["a", "ablation"], ["a", "substitution"], ["a", "swap"]]
    status = {(r.input_id, r.method): r.status for r in cfs.itertuples()}
    assert status[("a", "ablation")] == "ok"
    assert status[("a", "swap")] == "unchanged:no_identity_term"  # "Islamic" is not a Dixon term
    assert status[("c", "ablation")] == "unchanged:no_attribute_term"
    assert status[("c", "swap")] == "unchanged:no_identity_term"  # the guard: "a black car"
    assert status[("d", "swap")] == "skipped:empty_text"
    html = cfs[(cfs.input_id == "e") & (cfs.method == "substitution")]["text"].iloc[0]
    assert html == "<script>alert('x')</script> Christians & the church"  # markup is text, kept as is
    cands = read_table(tmp_path / "candidates.csv")
    swaps = cands[cands.method == "swap"]
    assert len(swaps[swaps.input_id == "b"]) == 49
    assert set(swaps["source_term"].dropna()) == {"muslim"}
    # "Muslims" is matched as the plural of a Dixon term (#20 item 14) and becomes the target's plural
    assert swaps.groupby("input_id")["selected"].apply(lambda s: (s == "True").sum()).tolist() == [1, 1]
    plural = set(swaps[swaps.input_id == "e"]["text"])
    assert "<script>alert('x')</script> Christians & the mosque" in plural
    assert "<script>alert('x')</script> gay people & the mosque" in plural  # not a sentence's first word
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["methods"]["ablation"]["share_with_counterfactual"] == 3 / 4
    assert summary["signatures"]["swap"]["guard_blocked"] == 1
    assert result.summary["methods"]["substitution"]["share_still_referencing"] == 0.0


def test_rerun_resumes_and_refuses_other_options(tmp_path: Path) -> None:
    run_generate(TEXTS, tmp_path, GenerateOptions(**OPTS))  # type: ignore[arg-type]
    lines = (tmp_path / ".work" / "done.jsonl").read_text().splitlines()
    assert len(lines) == 15
    # simulate a crash: drop the last three records and cut the last kept line in half
    kept = [*lines[:11], lines[11][: len(lines[11]) // 2]]
    (tmp_path / ".work" / "done.jsonl").write_text("\n".join(kept) + "\n")
    first = read_table(tmp_path / "counterfactuals.csv")
    result = run_generate(TEXTS, tmp_path, GenerateOptions(**OPTS))  # type: ignore[arg-type]
    assert len((tmp_path / ".work" / "done.jsonl").read_text().splitlines()) == 15
    again = result.counterfactuals.astype(object).fillna("").astype(str)
    assert (
        again[["input_id", "method", "text", "status"]].values.tolist()
        == first.astype(object).fillna("").astype(str)[["input_id", "method", "text", "status"]].values.tolist()
    )
    with pytest.raises(ConfigError, match="holds a run that differs in: options"):
        run_generate(TEXTS, tmp_path, GenerateOptions(methods=["ablation"], id_column="id"))


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown method"):
        GenerateOptions(methods=["mice"])
    with pytest.raises(ConfigError, match="unknown attribute 'caste'"):
        run_generate(TEXTS, tmp_path / "x", GenerateOptions(attribute="caste", methods=["ablation"]))
    with pytest.raises(
        InputError, match=r"missing column 'comment' \(set with --text-column, or text_column= in Python\)"
    ):
        run_generate(TEXTS, tmp_path / "y", GenerateOptions(methods=["ablation"], text_column="comment"))
    dup = pd.DataFrame({"id": ["1", "1"], "text": ["a", "b"]})
    with pytest.raises(InputError, match="rows 0 and 1 share the id '1' in column 'id'"):
        run_generate(dup, tmp_path / "z", GenerateOptions(methods=["ablation"], id_column="id"))


def test_very_long_text(tmp_path: Path) -> None:
    long = "The Muslim community centre " + "and more words " * 5000  # 75,028 characters
    data = pd.DataFrame({"text": [long]})
    result = run_generate(data, tmp_path / "limit", GenerateOptions(methods=["ablation", "swap"]))
    assert result.counterfactuals["status"].tolist() == ["skipped:too_long"] * 2  # over the 20,000-character default
    result = run_generate(data, tmp_path / "whole", GenerateOptions(methods=["ablation", "swap"], max_text_chars=0))
    assert result.counterfactuals["status"].tolist() == ["ok", "ok"]
    assert result.counterfactuals["text"].iloc[0].startswith("The community centre and more")
