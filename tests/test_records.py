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


def test_fast_builders_make_the_records_the_constructors_make() -> None:
    """#50: ``Edit.of`` and ``Candidate.of`` skip the frozen dataclasses' per-field checks on the swap's hot path; what
    they build equals, hashes, pickles and stays frozen like a constructed record."""
    import dataclasses
    import pickle

    from counterfair.records import Candidate, Edit

    edit = Edit.of(3, 9, "Muslim", "atheist")
    assert edit == Edit(3, 9, "Muslim", "atheist") and hash(edit) == hash(Edit(3, 9, "Muslim", "atheist"))
    built = Candidate.of("an atheist", "swap", "h", (edit,), {"source_term": "muslim"})
    made = Candidate(text="an atheist", editor="swap", params_hash="h", edits=(edit,), meta={"source_term": "muslim"})
    assert built == made and pickle.loads(pickle.dumps(built)) == made
    assert dataclasses.asdict(built) == dataclasses.asdict(made)
    assert Candidate.of("x", "swap", "h") == Candidate(text="x", editor="swap", params_hash="h")
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.text = "changed"  # type: ignore[misc]
