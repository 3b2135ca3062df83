from __future__ import annotations

import pytest

from counterfair.records import SCHEMA_VERSION, Counterfactual, Edit, make_status, params_hash, status_kind


def test_status_strings() -> None:
    assert make_status("ok") == "ok"
    assert make_status("filtered", "bleu below 0.5") == "filtered:bleu_below_0.5"
    assert status_kind("failed:timeout") == "failed"
    with pytest.raises(ValueError, match="unknown status kind"):
        make_status("dropped")
    with pytest.raises(ValueError, match="malformed"):
        status_kind("nonsense:x")


def test_params_hash_is_stable_and_order_free() -> None:
    assert params_hash({"a": 1, "b": [1, 2]}) == params_hash({"b": [1, 2], "a": 1})
    assert params_hash({"a": 1}) != params_hash({"a": 2})
    assert len(params_hash({})) == 12


def test_counterfactual_validates_status_and_serialises() -> None:
    cf = Counterfactual(
        source_id="1",
        source_text="a Muslim",
        text="a Christian",
        editor="swap",
        params_hash="x",
        status="ok",
        edits=(Edit(2, 8, "Muslim", "Christian"),),
    )
    data = cf.to_dict()
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["edits"][0] == {"start": 2, "end": 8, "old": "Muslim", "new": "Christian"}
    with pytest.raises(ValueError, match="malformed"):
        Counterfactual("1", "a", "b", "e", "x", status="bogus")
