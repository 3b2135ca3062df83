from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from counterfair.errors import InputError, SchemaError
from counterfair.io import read_json, read_table, require_columns
from counterfair.records import SCHEMA_VERSION
from counterfair.writing import atomic_open, write_json, write_table


def test_read_formats_agree(tmp_path: Path) -> None:
    frame = pd.DataFrame({"orig_text": ["a, b", "NA", "null"], "gen_text": ["c", "d", "e"]})
    frame.to_csv(tmp_path / "x.csv", index=False)
    frame.to_csv(tmp_path / "x.tsv", index=False, sep="\t")
    frame.to_json(tmp_path / "x.jsonl", orient="records", lines=True)
    frame.to_json(tmp_path / "x.json", orient="records")
    frame.to_parquet(tmp_path / "x.parquet")
    for name in ("x.csv", "x.tsv", "x.jsonl", "x.json", "x.parquet"):
        got = read_table(tmp_path / name)
        assert got["orig_text"].tolist() == ["a, b", "NA", "null"], name  # "NA" and "null" are texts
    assert read_table(frame)["gen_text"].tolist() == ["c", "d", "e"]


def test_empty_cell_is_missing(tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_text('orig_text,gen_text\n"a",\n"",b\n', encoding="utf-8")
    got = read_table(tmp_path / "x.csv")
    assert got["gen_text"].isna().tolist() == [True, False]
    assert got["orig_text"].isna().tolist() == [False, True]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"   \n\n", "only whitespace"),
        (b"orig_text,gen_text\n", "no data rows"),
        (b"a,a\n1,2\n", "names column 'a' twice"),
        (b"x\x00y\x00z", "binary"),
        (b'orig_text,gen_text\nok,fine\n"caf\xe9",x\n', r"line 3 is not valid utf-8 \(byte 0xe9"),
        (b"orig_text\tgen_text\na\tb\n", "looks tab-separated"),
        (b"a,b\n1,2,3,4\n", "malformed CSV"),
    ],
)
def test_bad_csv_inputs_name_the_problem(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_table(path)


def test_other_encodings_on_request(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("orig_text,gen_text\ncafé,thé\n".encode("latin-1"))
    assert read_table(path, encoding="latin-1")["orig_text"].tolist() == ["café"]


def test_bad_jsonl_names_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": 2\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 2 is not valid JSON"):
        read_table(path)
    path.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 2 is a JSON list"):
        read_table(path)


def test_missing_file_unknown_suffix_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    (tmp_path / "x.xlsx").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="cannot tell the format"):
        read_table(tmp_path / "x.xlsx")
    with pytest.raises(InputError, match="is a directory"):
        read_table(tmp_path)


def test_bad_parquet(tmp_path: Path) -> None:
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="cannot read as Parquet"):
        read_table(tmp_path / "x.parquet")


def test_require_columns_names_option() -> None:
    frame = pd.DataFrame({"text": ["a"]})
    with pytest.raises(
        InputError,
        match=r"missing column 'orig_text' \(set with --text-column, or text_column= in Python\); the columns are: "
        r"'text'",
    ):
        require_columns(frame, {"orig_text": "--text-column"}, origin="f.csv")


def test_write_table_adds_schema_version(tmp_path: Path) -> None:
    frame = pd.DataFrame({"x": [1, 2]})
    for name in ("o.csv", "o.jsonl", "o.parquet"):
        write_table(frame, tmp_path / name)
        back = read_table(tmp_path / name)
        assert back["schema_version"].astype(str).tolist() == [SCHEMA_VERSION] * 2
    assert "schema_version" not in frame  # the caller's frame is untouched


def test_json_roundtrip_and_schema_check(tmp_path: Path) -> None:
    path = write_json({"value": float("nan"), "n": 3}, tmp_path / "s.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"schema_version": SCHEMA_VERSION, "value": None, "n": 3}
    assert read_json(path)["n"] == 3
    path.write_text(json.dumps({"schema_version": "0", "n": 1}), encoding="utf-8")
    with pytest.raises(SchemaError, match="schema_version '0'"):
        read_json(path)


def test_atomic_write_keeps_old_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old", encoding="utf-8")

    def write_then_fail() -> None:
        with atomic_open(target, "w", encoding="utf-8") as handle:
            handle.write("half of the new")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_then_fail()
    assert target.read_text(encoding="utf-8") == "old"
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind


def test_cells_that_are_not_text_get_a_status_and_broken_unicode_never_crashes(tmp_path: Path) -> None:
    """#35 item 7: lists, mappings, booleans and bytes in a text column were edited as their Python repr; a JSONL
    lone surrogate (\\ud800) crashed the run; a NUL in the first 8 KB refused the file while later it was a row's."""
    import counterfair as cf

    jsonl = tmp_path / "cells.jsonl"
    lines = ['{"text": ["a", "list"]}', '{"text": {"a": 1}}', '{"text": true}', '{"text": 5}']
    lines.append('{"text": "gay \\ud800"}')
    jsonl.write_text("\n".join([*lines, '{"text": "Muslims pray."}']) + "\n")
    records = cf.generate(str(jsonl), ["swap"], identities="muslim,christian,gay,straight", progress=False)
    status = {r.source_id: r.status for r in records if r.status != "ok"}
    assert status == {
        "0": "skipped:not_text",
        "1": "skipped:not_text",
        "2": "skipped:not_text",
        "3": "unchanged:no_identity_term",  # a number in a text column is its digits
    }
    swapped: dict[str, set[str]] = {}
    for r in records:
        if r.status == "ok":
            swapped.setdefault(r.source_id, set()).add(r.text)
    assert "Straight \ufffd" in swapped["4"]  # the half pair became U+FFFD
    assert {"Christians pray.", "Straight people pray."} <= swapped["5"]
    # in memory: a surrogate is a status (it cannot be written as UTF-8)
    frame = pd.DataFrame({"text": ["I am gay \ud800 ok", "Muslims pray.", b"bytes"]})
    statuses = [r.status for r in cf.generate(frame, ["swap"], identities="muslim,christian", progress=False)]
    assert statuses[0] == "skipped:invalid_unicode" and statuses[-1] == "skipped:not_text"
    # one NUL rule: a NUL in the first row is that row's status, wherever it is; a binary file is refused
    csv = tmp_path / "nul.csv"
    csv.write_bytes(b"text\nI am gay\x00 ok\nMuslims pray.\n")
    rows = cf.generate(str(csv), ["swap"], identities="muslim,christian,gay,straight", progress=False)
    assert [r.status for r in rows if r.source_id == "0"] == ["skipped:control_characters"]
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"text\n" + bytes(range(256)) * 4)
    with pytest.raises(InputError, match="binary"):
        read_table(binary)


def test_encodings_are_named_and_the_hint_suggests_cp1252(tmp_path: Path) -> None:
    path = tmp_path / "windows.csv"
    path.write_bytes("text\ncafé \u201cquoted\u201d Muslims\n".encode("cp1252"))
    with pytest.raises(InputError, match=r"line 2 is not valid utf-8 .*--encoding \(e\.g\. cp1252 for a Windows file"):
        read_table(path)
    assert read_table(path, encoding="cp1252")["text"][0] == "café \u201cquoted\u201d Muslims"
    with pytest.raises(InputError, match="--encoding 'nonsense': not an encoding Python knows"):
        read_table(path, encoding="nonsense")


def test_read_csv_columns_reads_what_read_table_reads_in_blocks(tmp_path: Path) -> None:
    """#47: the report reads pairs.csv's columns block by block (a large run's table is gigabytes): the same cells
    as the whole-file reader, index = row in the file, a row subset, a header alone, a missing file named."""
    from counterfair.io import read_csv_columns, read_table
    from counterfair.writing import write_table

    frame = pd.DataFrame(
        {
            "method": ["swap", "ablation", "swap", "swap", "swap"],
            "source_text": ["a b", "c", "", "e, f", 'say "g"'],
            "diff": [0.1, -0.25, None, 1e-17, 0.3],
            "input_id": ["007", "1", "2", "3", "4"],
        }
    )
    path = write_table(frame, tmp_path / "pairs.csv")
    whole = read_table(path)
    got = read_csv_columns(path, ["input_id", "diff", "method", "not_there"], block_rows=2)
    pd.testing.assert_frame_equal(got, whole[["input_id", "diff", "method"]])  # the caller's order, ids as written
    assert got["input_id"].iloc[0] == "007" and pd.isna(got["diff"].iloc[2])
    rows = read_csv_columns(path, ["source_text"], block_rows=2, rows=[1, 3, 4])
    assert rows.index.tolist() == [1, 3, 4] and rows["source_text"].tolist() == ["c", "e, f", 'say "g"']
    header = write_table(frame.iloc[:0], tmp_path / "empty.csv")
    assert read_csv_columns(header, ["method", "diff"]).columns.tolist() == ["method", "diff"]
    with pytest.raises(InputError, match="no such file"):
        read_csv_columns(tmp_path / "gone.csv", ["method"])


def test_csv_column_blocks_keep_names_as_categories_and_check_each_block(tmp_path: Path) -> None:
    """#47: the report reads pairs.csv block by block, its names as categories, each block checked as it is read (a
    bad cell named by its row in the file, not in its block); stacked, the blocks' categories are their union."""
    from counterfair.analysis.compare import checked_pairs
    from counterfair.io import csv_column_blocks, stacked
    from counterfair.writing import write_table

    frame = pd.DataFrame({"method": ["swap", "swap", "ablation", "swap", "llm"], "diff": [0.1, 0.2, 0.3, 0.4, 0.5]})
    path = write_table(frame, tmp_path / "pairs.csv")
    blocks = list(csv_column_blocks(path, ["method", "diff"], block_rows=2, categories=["method"]))
    assert [len(b) for b in blocks] == [2, 2, 1] and [b.index[0] for b in blocks] == [0, 2, 4]
    assert all(isinstance(b["method"].dtype, pd.CategoricalDtype) for b in blocks)
    got = stacked(blocks)
    assert list(got["method"].cat.categories) == ["ablation", "llm", "swap"]  # every block's, sorted
    assert got["method"].tolist() == frame["method"].tolist()
    assert got["diff"].tolist() == ["0.1", "0.2", "0.3", "0.4", "0.5"]  # cells as written, unless a check converts
    damaged = frame.astype({"diff": object})
    damaged.loc[3, "diff"] = "oops"
    bad = write_table(damaged, tmp_path / "bad.csv")
    read = csv_column_blocks(bad, ["diff"], block_rows=2, check=lambda block, first: checked_pairs(block, bad, first))
    assert len(next(read)) == 2  # the first block is good
    with pytest.raises(InputError, match="row 4, column diff: 'oops' is not a number"):
        next(read)


def test_a_lone_carriage_return_survives_every_csv_we_write(tmp_path: Path) -> None:
    """Python's csv writer leaves a bare "\\r" unquoted (it quotes the line terminator's "\\n"), and readers take it
    for a line end: the fuzz test's id "0\\r" came back as "0" and an empty row, and the audit crashed. A table with
    one is written with its texts quoted; one without keeps the minimal quoting byte for byte."""
    from counterfair.writing import csv_writer

    frame = pd.DataFrame({"input_id": ["0\r", "b"], "text": ["a\rb", "c\r\nd"], "score": [0.25, None]})
    table = write_table(frame, tmp_path / "t.csv")
    with csv_writer(tmp_path / "s.csv", ["input_id", "text", "score"]) as write:
        write(frame.iloc[:1])
        write(frame.iloc[1:])
    for path in (table, tmp_path / "s.csv"):
        back = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert back["input_id"].tolist() == ["0\r", "b"] and back["text"].tolist() == ["a\rb", "c\r\nd"]
        assert back["score"].tolist() == ["0.25", ""]
    import csv

    from counterfair.writing import csv_quoting

    assert csv_quoting(frame) == csv.QUOTE_NONNUMERIC and csv_quoting(frame.iloc[1:]) == csv.QUOTE_NONNUMERIC
    plain = pd.DataFrame({"input_id": ["a", "b"], "text": ["x, y", "z"], "score": [0.5, 1.0]})
    assert csv_quoting(plain) == csv.QUOTE_MINIMAL
    write_table(plain, tmp_path / "p.csv")
    expected = plain.assign(schema_version=SCHEMA_VERSION).to_csv(index=False)
    assert (tmp_path / "p.csv").read_text(encoding="utf-8") == expected


def test_a_csv_table_becomes_parquet_block_by_block_with_types_settled_over_all_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--parquet converts a run's CSV tables in blocks (a pairs.csv larger than memory): a column's type is settled
    over every block, not the first: integers then a missing cell is a float, an empty then text column is text, and
    integers then text is text."""
    import counterfair.writing as cio

    monkeypatch.setattr(cio, "TABLE_BLOCK_ROWS", 2)
    source = tmp_path / "pairs.csv"
    source.write_text('n,later_text,mixed,score\n1,,7,0.5\n2,,8,0.25\n3,hello,x,\n4,"a, b\n c",9,1.0\n')
    table = pd.read_parquet(cio.csv_to_parquet(source, tmp_path / "pairs.parquet"))
    assert table["n"].tolist() == [1, 2, 3, 4] and str(table["n"].dtype) == "int64"
    assert table["later_text"].tolist()[2:] == ["hello", "a, b\n c"]
    assert table["later_text"].isna().tolist()[:2] == [True, True]
    assert table["mixed"].tolist() == ["7", "8", "x", "9"]
    assert table["score"].tolist()[:2] == [0.5, 0.25] and pd.isna(table["score"].iloc[2])


def test_parquet_keeps_ids_and_texts_as_the_csv_wrote_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#87 B6: --parquet made ids "NA", "None" and "n/a" missing and "007" and "1e5" the numbers 7.0 and 100000.0.
    Only an empty cell is missing; id and text columns stay strings; a number column is numbers over every block."""
    import counterfair.writing as cio

    monkeypatch.setattr(cio, "TABLE_BLOCK_ROWS", 2)
    source = tmp_path / "pairs.csv"
    source.write_text(
        "input_id,source_text,score_orig,flipped,note\n007,NA,0.5,True,None\n1e5,None,,False,x\n"
        "n/a,007,0.25,True,\nNA,n/a,1,False,NA\n"
    )
    table = pd.read_parquet(cio.csv_to_parquet(source, tmp_path / "pairs.parquet"))
    assert table["input_id"].tolist() == ["007", "1e5", "n/a", "NA"]
    assert table["source_text"].tolist() == ["NA", "None", "007", "n/a"]
    assert table["score_orig"].tolist()[::2] == [0.5, 0.25] and pd.isna(table["score_orig"].iloc[1])
    assert table["flipped"].tolist() == [True, False, True, False]
    assert table["note"].tolist()[:2] == ["None", "x"] and table["note"].iloc[3] == "NA"


def test_a_rerun_without_parquet_removes_the_copy_its_csv_would_contradict(tmp_path: Path) -> None:
    """#87 B6: a re-measure rewrote responses.csv and left the old responses.parquet beside it, disagreeing."""
    from counterfair.runs import parquet_copies

    frame = pd.DataFrame({"id": ["a"], "response": ["yes"]})
    parquet_copies(tmp_path, (), {"responses": frame})
    assert (tmp_path / "responses.parquet").exists()
    parquet_copies(tmp_path, ("pairs.csv",), {"responses": frame}, wanted=False)
    assert not (tmp_path / "responses.parquet").exists()


def test_a_csv_whose_lines_end_in_a_carriage_return_and_a_parquet_column_of_lists_are_data_not_bugs(
    tmp_path: Path,
) -> None:
    """#87 B11: CR-only line ends (a classic Mac file) were an internal error in the header check (exit 3), and a
    Parquet text column of lists crashed the input's hash (``pd.isna`` of a list is an array)."""
    from counterfair.io import read_table, row_strings

    source = tmp_path / "mac.csv"
    source.write_bytes(b"id,text\rA,My gay neighbour waved.\rB,Some people are straight.\r")
    frame = read_table(source)
    assert frame["text"].tolist() == ["My gay neighbour waved.", "Some people are straight."]
    lists = pd.DataFrame({"text": [["a", "b"], "plain", None, float("nan")]})
    assert row_strings(lists) == ["['a', 'b']", "plain", "", ""]
