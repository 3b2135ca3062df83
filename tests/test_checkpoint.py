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


def _damaged_lines(good: dict[str, Any]) -> list[tuple[str, bytes]]:
    import json

    first, last = next(iter(good)), list(good)[-1]
    return [
        ("a JSON list", b"[1, 2]\n"),
        ("an empty object", b"{}\n"),
        ("a JSON string", b'"text"\n'),
        ("null", b"null\n"),
        ("every value of the wrong type", json.dumps({k: [] for k in good}).encode() + b"\n"),
        ("bytes that are not UTF-8", b"\xff\xfe{\n"),
        ("NUL bytes", b"\x00\x00\x00\n"),
        ("a blank line", b"\n"),
        ("a number where a key's value was", json.dumps({**good, first: 12345}).encode() + b"\n"),
        ("a key missing", json.dumps({k: v for k, v in good.items() if k != last}).encode() + b"\n"),
        ("a boolean for a value", json.dumps({**good, **_boolean(good)}).encode() + b"\n"),
    ]  # fmt: skip


def _boolean(good: dict[str, Any]) -> dict[str, Any]:
    """A record's number, or else its first value, as a boolean (JSON's true is no probability nor row)."""
    return {"p": [True, False]} if "p" in good else {"row": True} if "row" in good else {next(iter(good)): True}


@pytest.mark.parametrize("kind", ["scores.jsonl", ".work/done.jsonl", "responses.jsonl"])
def test_a_damaged_line_of_any_checkpoint_is_redone_never_a_crash(tmp_path: Path, kind: str) -> None:
    """#87 B11: seven kinds of damaged checkpoint line ended a resume in exit 3 (a JSON list, an object without the
    key, a value of the wrong type...). Each of these is read as damage: the records before it are kept, it and what
    follows are redone (the file is cut there), whatever the checkpoint."""
    import json

    from counterfair.checkpoint import ScoreCheckpoint
    from counterfair.commands.generate.shell import DONE_SHAPE

    def opened(path: Path) -> Any:
        if kind == "scores.jsonl":
            return ScoreCheckpoint(path)
        if kind == "responses.jsonl":
            return JsonlCheckpoint(path, key=lambda r: r["variant"], shape={"variant": str, "responses": list})
        return JsonlCheckpoint(path, key=lambda r: (r["method"], int(r["row"])), shape=DONE_SHAPE)

    records = {
        "scores.jsonl": [{"text": f"text {i}", "p": [0.25, 0.75]} for i in range(3)],
        "responses.jsonl": [{"variant": f"v{i}", "responses": ["yes", "no"]} for i in range(3)],
        ".work/done.jsonl": [
            {"method": "swap", "row": i, "counterfactual": {"text": "x"}, "candidates": []} for i in range(3)
        ],
    }[kind]
    lines = [json.dumps(r).encode() + b"\n" for r in records]
    for why, bad in _damaged_lines(records[1]):
        path = tmp_path / why.replace(" ", "_") / "c.jsonl"
        path.parent.mkdir()
        path.write_bytes(lines[0] + bad + lines[2])
        checkpoint = opened(path)
        assert len(checkpoint) == 1, why  # the first record kept; the damaged one and the one after it redone
        assert path.read_bytes() == lines[0], why
        if kind == "scores.jsonl":
            assert checkpoint.missing(["text 0", "text 1", "text 2"]) == ["text 1", "text 2"]
            checkpoint.close()
