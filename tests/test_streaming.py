"""Large inputs read in blocks (#35 item 8): ``generate`` on a file of ``stream_threshold()`` bytes or more holds one
block of it at a time, keeps only file offsets of its checkpoint, writes its tables block by block, and gives the same
files as the run that reads the input whole. Here the threshold is 0 and blocks are 7 rows, so small inputs cross
many blocks; the memory it saves is measured in benchmarks/generate_stream.py, not asserted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import counterfair.io as cio
from counterfair.checkpoint import RowCheckpoint
from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.shell import run_generate
from counterfair.errors import InputError

TEXTS = [
    "Some people are gay.",
    "My Muslim neighbour waved at me.",
    "It rained all day.",
    "The mosque on our street opened a school for Islam studies.",
    "Jews and Christians met at the interfaith dinner.",
    "",
    "A black car parked outside.",
    "Muslims pray five times a day.",
    "I met a trans woman at the library.",
    "Islam is one of the world's religions.",
] * 3


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cio, "BLOCK_ROWS", 7)


def _run(source: Path, out: Path, *, stream: bool, monkeypatch: pytest.MonkeyPatch, **options: object):
    monkeypatch.setenv("COUNTERFAIR_STREAM_BYTES", "0" if stream else str(1 << 40))
    return run_generate(source, out, GenerateOptions(**options))  # type: ignore[arg-type]


def _summary(out: Path) -> dict:
    found = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    found.pop("timing_s")
    for entry in found["methods"].values():
        entry.pop("seconds_this_run")
        entry.pop("candidates_per_s_this_run")
    return found


@pytest.mark.parametrize(
    ("suffix", "options"),
    [
        (".csv", {"methods": ["swap"], "score_methods": []}),
        (".jsonl", {"attribute": "islam", "methods": ["ablation", "substitution"], "id_column": "key"}),
    ],
)
def test_a_streamed_run_writes_what_the_whole_run_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_blocks: None, suffix: str, options: dict
) -> None:
    frame = pd.DataFrame({"key": [f"k{i}" for i in range(len(TEXTS))], "text": TEXTS})
    source = tmp_path / f"in{suffix}"
    if suffix == ".csv":
        frame.to_csv(source, index=False)
    else:
        frame.to_json(source, orient="records", lines=True)
    whole = _run(source, tmp_path / "whole", stream=False, monkeypatch=monkeypatch, **options)
    streamed = _run(source, tmp_path / "stream", stream=True, monkeypatch=monkeypatch, **options)
    for name in ("candidates.csv", "counterfactuals.csv"):
        assert (tmp_path / "stream" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert _summary(tmp_path / "stream") == _summary(tmp_path / "whole")
    assert len(pd.read_csv(tmp_path / "stream" / "counterfactuals.csv")) == len(TEXTS) * len(options["methods"])
    # the result reads its counterfactuals from the file: the same rows and values as the whole run's
    columns = ["input_id", "row", "method", "text", "status", "n_candidates"]
    mine = streamed.counterfactuals[columns].astype(str).reset_index(drop=True)
    assert mine.equals(whole.counterfactuals[columns].astype(str).reset_index(drop=True))
    assert len(streamed.candidates) == len(whole.candidates) > 0


def test_a_streamed_run_resumes_from_its_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_blocks: None
) -> None:
    source = tmp_path / "in.csv"
    pd.DataFrame({"text": TEXTS}).to_csv(source, index=False)
    out = tmp_path / "run"
    _run(source, out, stream=True, monkeypatch=monkeypatch, methods=["swap"], score_methods=[])
    first = (out / "candidates.csv").read_bytes()
    done = out / ".work" / "done.jsonl"
    lines = done.read_bytes().splitlines(keepends=True)
    done.write_bytes(b"".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:10])  # killed mid-write
    checkpoint = RowCheckpoint(done, key=lambda r: (r["method"], int(r["row"])))
    assert len(checkpoint) == len(lines) // 2 and done.read_bytes().endswith(b"\n")  # the torn line is dropped
    with pytest.raises(TypeError, match="keeps no records in memory"):
        checkpoint.done  # noqa: B018 - nothing is kept, so nothing may be read as if it were
    kept = {int(json.loads(line)["row"]) for line in lines[: len(lines) // 2]}
    assert all(("swap", row) in checkpoint for row in kept)
    assert not any(("swap", row) in checkpoint for row in set(range(len(TEXTS))) - kept)
    _run(source, out, stream=True, monkeypatch=monkeypatch, methods=["swap"], score_methods=[])
    assert (out / "candidates.csv").read_bytes() == first
    assert len(done.read_bytes().splitlines()) == len(TEXTS)  # each unit once: the kept ones were not redone


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        # the same sentences the whole reader gives, naming rows across blocks
        (
            "key,text\n" + "".join(f"k{i},t{i}\n" for i in range(9)) + "k3,again\n",
            ".csv",
            "rows 3 and 9 share the id 'k3'",
        ),
        (
            "key,text\n" + "".join(f"k{i},t{i}\n" for i in range(8)) + ",empty id\n",
            ".csv",
            "row 8 has no value in the id",
        ),
        ("other\nx\n", ".csv", "missing column 'text' (set with --text-column, or text_column= in Python)"),
        ("".join(json.dumps({"key": f"k{i}", "text": "t"}) + "\n" for i in range(9)) + "[1]\n", ".jsonl", "line 10 is"),
        ("key,text\n", ".csv", "no data rows"),
    ],
)
def test_bad_input_is_named_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_blocks: None, content: str, suffix: str, message: str
) -> None:
    source = tmp_path / f"in{suffix}"
    source.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(message)):
        _run(source, tmp_path / "run", stream=True, monkeypatch=monkeypatch, methods=["swap"], id_column="key")
    assert not (tmp_path / "run" / ".work").exists()  # refused before the run was claimed or begun


def test_the_whole_reader_and_the_blocks_agree_on_the_rows(tmp_path: Path, small_blocks: None) -> None:
    source = tmp_path / "in.csv"
    source.write_bytes('text,id\n"NA",a\n,b\n"two\nlines",c\n42,d\n"caf\u00e9",e\n'.encode("cp1252"))
    whole = cio.read_texts(source, id_column="id", encoding="cp1252")
    blocks = cio.read_text_blocks(source, id_column="id", encoding="cp1252", block_rows=2)
    read = [(i, t) for _, ids, texts in blocks for i, t in zip(ids, texts, strict=True)]
    assert blocks.rows == 5 and read == list(zip(whole.ids, whole.texts, strict=True))
    assert read[0] == ("a", "NA") and read[1] == ("b", None) and read[4] == ("e", "caf\u00e9")


def test_the_command_line_says_a_file_is_read_in_blocks(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    source = tmp_path / "in.csv"
    pd.DataFrame({"text": TEXTS}).to_csv(source, index=False)
    env = {**os.environ, "COUNTERFAIR_STREAM_BYTES": "0", "COUNTERFAIR_STORE": "off"}
    for size in ("COLUMNS", "LINES"):  # piped, as a user's log sees it (a test worker may set an 80-column terminal)
        env.pop(size, None)
    command = [sys.executable, "-m", "counterfair.cli", "generate", str(source), "--attribute", "islam"]
    done = subprocess.run(
        [*command, "--methods", "ablation", "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert f"{source}: 0 MB, read in blocks of 10,000 rows; checking every row first" in done.stdout
    assert len(pd.read_csv(tmp_path / "run" / "counterfactuals.csv")) == len(TEXTS)


@pytest.mark.parametrize("mark", [b"", b"\xef\xbb\xbf"], ids=["plain", "byte-order mark"])
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_bad_byte_is_named_by_line_and_offset_as_the_whole_reader_names_it(
    tmp_path: Path, suffix: str, mark: bytes
) -> None:
    """#47 item 14: the block reader said only "not valid utf-8"; #69 item 7: after a byte-order mark both readers
    named the byte 3 places before the bad one, and its offset 3 too small."""
    rows = [f"row {i} with café" for i in range(3000)]
    lines = ["text", *rows] if suffix == ".csv" else [json.dumps({"text": r}, ensure_ascii=False) for r in rows]
    raw = mark + ("\n".join(lines) + "\n").encode("utf-8")
    cut = raw.index(b"row 2500 ")  # far past the first buffer of either reader
    source = tmp_path / f"in{suffix}"
    source.write_bytes(raw[:cut] + b"caf\xe9 " + raw[cut:])
    line = 2502 if suffix == ".csv" else 2501
    expected = f"line {line} is not valid utf-8{'-sig' if mark else ''} (byte 0xe9 at offset {cut + 3})"
    with pytest.raises(InputError, match=re.escape(expected)):
        cio.read_texts(source)
    with pytest.raises(InputError, match=re.escape(expected)):
        cio.read_text_blocks(source, block_rows=100)
