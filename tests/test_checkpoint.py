from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from counterfair.checkpoint import JsonlCheckpoint, claim_run_dir
from counterfair.errors import ConfigError


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "n": len(record["items"])}


def test_slim_records_in_memory_whole_records_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    cp = JsonlCheckpoint(path, key=lambda r: r["id"], slim=_slim)
    # a text with a Unicode line separator must not split a record when the file is read back
    cp.add([{"id": 1, "items": ["a", "b\u2028c"]}, {"id": 2, "items": []}])
    cp.add([{"id": 3, "items": ["é"] * 3}])
    assert cp.done[1] == {"id": 1, "n": 2} and 2 in cp and 4 not in cp
    assert cp.full([3, 1]) == [{"id": 3, "items": ["é"] * 3}, {"id": 1, "items": ["a", "b\u2028c"]}]
    again = JsonlCheckpoint(path, key=lambda r: r["id"], slim=_slim)
    assert again.done == cp.done
    assert again.full([1])[0]["items"][1] == "b\u2028c"


def test_torn_last_line_is_dropped_and_redone(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    cp = JsonlCheckpoint(path, key=lambda r: r["id"])
    cp.add([{"id": 1}, {"id": 2}])
    with open(path, "ab") as handle:
        handle.write(b'{"id": 3')  # killed mid-write
    resumed = JsonlCheckpoint(path, key=lambda r: r["id"])
    assert list(resumed.done) == [1, 2]
    resumed.add([{"id": 3}])
    assert JsonlCheckpoint(path, key=lambda r: r["id"]).full([3, 2]) == [{"id": 3}, {"id": 2}]
    assert path.read_text().count("\n") == 3


def test_complete_json_without_newline_counts_as_torn(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": 2}')
    cp = JsonlCheckpoint(path, key=lambda r: r["id"])
    assert list(cp.done) == [1]
    cp.add([{"id": 2}])
    assert path.read_bytes() == b'{"id": 1}\n{"id": 2}\n'


def test_run_dir_refuses_another_run(tmp_path: Path) -> None:
    claim_run_dir(tmp_path / "r", {"options_fingerprint": "a", "input_sha256": "x"}, {"note": 1})
    claim_run_dir(tmp_path / "r", {"options_fingerprint": "a", "input_sha256": "x"}, {"note": 2})  # same run: fine
    with pytest.raises(ConfigError, match="holds a run that differs in: options"):
        claim_run_dir(tmp_path / "r", {"options_fingerprint": "b", "input_sha256": "x"}, {})


def test_candidates_are_packed_as_one_table_and_read_back_exactly(tmp_path) -> None:
    """#36: a unit's candidates share most values (an identity swap's 49 variants of one text): written once."""
    import json

    from counterfair.checkpoint import JsonlCheckpoint, pack, unpack

    candidates = [
        {"row": 3, "text": f"variant {i}", "passed": True, "bleu": None, "score": 1 if i else 1.0, "flag": i == 1}
        for i in range(49)
    ]
    record = {"method": "swap", "row": 3, "candidates": candidates, "empty": [], "one": [{"a": 1}]}
    assert unpack(pack(record)) == record
    assert [type(c["score"]) for c in unpack(pack(record))["candidates"][:2]] == [float, int]  # 1.0 and 1 kept apart
    table = pack(record)["candidates"]["__table__"]
    assert table["same"] == {"row": 3, "passed": True, "bleu": None}
    assert table["rows"][1] == ["variant 1", 1, True]
    checkpoint = JsonlCheckpoint(tmp_path / "done.jsonl", key=lambda r: r["row"])
    checkpoint.add([record])
    written = (tmp_path / "done.jsonl").read_text(encoding="utf-8")
    assert len(written) < len(json.dumps(record)) / 2
    assert JsonlCheckpoint(tmp_path / "done.jsonl", key=lambda r: r["row"]).full([3]) == [record]
    (tmp_path / "old.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")  # written before packing
    assert JsonlCheckpoint(tmp_path / "old.jsonl", key=lambda r: r["row"]).full([3]) == [record]


def test_score_checkpoint_holds_digests_not_texts(tmp_path: Path) -> None:
    """#47: the audit's score cache keeps a digest and the probabilities of each text in an index on disk, found again
    after merges, on resume, past a torn last line; a digest ending in a zero byte is found too ('t380'); the index
    leaves no file behind, and a text scored again (a resumed block) is one text."""
    from counterfair.checkpoint import ScoreCheckpoint, text_digest

    assert text_digest("t380").endswith(b"\x00")
    path = tmp_path / "scores.jsonl"
    first = ScoreCheckpoint(path)
    first.MERGE = 3  # merged into the index every 3 texts
    texts = [f"t{i}" for i in range(370, 390)]
    first.add([{"text": t, "p": [1 - i / 100, i / 100]} for i, t in enumerate(texts)])
    assert len(first) == 20 and "t380" in first and "t1" not in first
    assert first.probabilities(["t380", "t370"]) == {"t380": [0.9, 0.1], "t370": [1.0, 0.0]}
    with pytest.raises(TypeError, match="no texts in memory"):
        _ = first.done
    with open(path, "ab") as handle:
        handle.write(b'{"text": "torn", "p": [0.5')  # a kill mid-line
    again = ScoreCheckpoint(path)
    assert len(again) == 20 and "torn" not in again
    assert again.probabilities(texts) == first.probabilities(texts)
    with pytest.raises(KeyError):
        again.probabilities(["never scored"])
    assert again.missing(["t381", "never scored", "t389", "new"]) == ["never scored", "new"]
    again.add([{"text": "t381", "p": [0.25, 0.75]}])  # the same text again: the later probabilities, one entry
    assert len(again) == 20 and again.probabilities(["t381"]) == {"t381": [0.25, 0.75]}
    with pytest.raises(ValueError, match="probabilities of 2 and of 3 labels"):
        again.add([{"text": "wide", "p": [0.2, 0.3, 0.5]}])
    first.close()
    again.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.jsonl"]  # no index file left in the run directory


def test_an_index_write_that_fails_is_a_clear_error_and_keeps_the_scores(tmp_path: Path) -> None:
    """#47: the score index on disk failing (a full disk) is an OutputError naming the folder and the fix, not a raw
    sqlite error; the scores already written stay in scores.jsonl and a rerun finds them."""
    import sqlite3

    from counterfair.checkpoint import ScoreCheckpoint
    from counterfair.errors import OutputError

    path = tmp_path / "scores.jsonl"
    scores = ScoreCheckpoint(path)
    scores.MERGE = 2
    scores.add([{"text": "a", "p": [0.5, 0.5]}])

    class FullDisk:
        def execute(self, sql: str, *args: object) -> object:
            if sql == "BEGIN":
                return None
            raise sqlite3.OperationalError("database or disk is full")

        executemany = execute

    real, scores._db = scores._db, FullDisk()  # type: ignore[assignment]
    with pytest.raises(OutputError, match=r"index of scored texts could not be written.*rerun the same command"):
        scores.add([{"text": "b", "p": [0.25, 0.75]}])
    scores._db = real
    scores.close()
    again = ScoreCheckpoint(path)
    assert again.probabilities(["a", "b"]) == {"a": [0.5, 0.5], "b": [0.25, 0.75]}  # both reached the file
    again.close()
