"""Reading tables and JSON documents.

Inputs: CSV, TSV, JSONL (or a JSON array of records), Parquet, or a pandas DataFrame. Text cells are read
as strings exactly as written: only a truly empty cell is missing (``"NA"`` or ``"null"`` are texts). Large inputs
are read block by block where a command can (:class:`TextBlocks`). Writing is :mod:`counterfair.writing`.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError, SchemaError
from .hfdata import HF_DATASET, read_hf_dataset
from .records import SCHEMA_VERSION

FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_TEXT_FORMATS = {"csv", "tsv", "jsonl", "json"}


def detect_format(path: str | Path, fmt: str | None = None) -> str:
    """The table format of ``path`` from its suffix, or ``fmt`` when given."""
    if fmt is not None:
        if fmt not in set(FORMATS.values()):
            raise InputError(f"unknown format {fmt!r}; expected one of {sorted(set(FORMATS.values()))}")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(
            f"{path}: cannot tell the format from the suffix {suffix!r}; "
            f"use one of {', '.join(sorted(FORMATS))} or pass --format"
        )
    return FORMATS[suffix]


# C0 controls but tab, newlines, vertical tab and form feed, and DEL: corruption in a text (a row's status,
# counterfair.text.skip_reason), and in bulk the mark of a binary file
CONTROL_CHARACTERS = "\x00-\x08\x0e-\x1f\x7f"
_CONTROL_BYTES = re.compile(f"[{CONTROL_CHARACTERS}]".encode("ascii"))
LONE_SURROGATES = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: no character, and not writable as UTF-8


class NotText(str):
    """A table cell that holds no text (a list, a mapping, a boolean, bytes: JSONL or Parquet cells), standing in
    the text column as ``<list>``, ``<bool>``...: ``counterfair.text.skip_reason`` gives it the status ``not_text``
    instead of editing its Python repr."""


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (what a UTF-8 decoder makes of a broken byte)."""
    return LONE_SURROGATES.sub("\ufffd", text)


def file_sha256(path: str | Path, *, chunk: int = 1 << 20) -> str:
    """sha256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


_BOMS = (  # UTF-32 first: its little-endian mark begins with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
    (codecs.BOM_UTF8, "utf-8-sig"),
)


def _sniff_encoding(path: Path, raw: bytes, encoding: str) -> str:
    """The encoding to read ``path`` with, from its first bytes ``raw``: a byte-order mark wins over ``encoding``;
    a UTF-16 file without one and a binary file are refused here, before any row is read."""
    known = "e.g. utf-8, cp1252, latin-1"
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise InputError(f"--encoding {encoding!r}: not an encoding Python knows ({known})") from None
    try:
        "".encode(encoding)
    except LookupError:  # a codec of bytes to bytes or str to str (rot13, base64), not of text
        raise InputError(f"--encoding {encoding!r}: not a text encoding ({known})") from None
    marked = next((name for bom, name in _BOMS if raw.startswith(bom)), None)
    if marked is not None:
        return marked  # a byte-order mark says what the file is, whatever --encoding says
    if b"\x00" in raw[:8192] and not encoding.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        head = raw[:8192]
        utf16_like = head[1::2].count(0) > len(head) // 4 or head[0::2].count(0) > len(head) // 4
        if len(head) >= 32 and utf16_like:  # a few bytes are no evidence of an encoding
            raise InputError(f"{path}: looks like UTF-16 without a byte-order mark; pass --encoding utf-16-le (or -be)")
        # a NUL in mostly printable text is a row's corruption (a per-row status); many control bytes, a binary file
        if len(_CONTROL_BYTES.findall(head)) > len(head) * 0.08:
            raise InputError(f"{path}: looks like a binary file (NUL bytes near the start), not a text table")
    return encoding


def _not_decodable(path: Path, encoding: str, line: int, bad: str, offset: int) -> InputError:
    return InputError(
        f"{path}: line {line} is not valid {encoding} (byte 0x{bad} at offset {offset}); "
        "re-save the file as UTF-8 or pass --encoding (e.g. cp1252 for a Windows file; latin-1 reads any byte)"
    )


def _without_mark(encoding: str, head: bytes) -> tuple[int, str]:
    """The bytes of a UTF-8 byte-order mark at the start (0 or 3) and the codec that reads what follows: ``utf-8-sig``
    strips the mark and then counts its error positions from after it, which named the wrong byte and offset."""
    sig = codecs.lookup(encoding).name == "utf-8-sig"
    if sig:
        return (len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0), "utf-8"
    return 0, encoding


def _decode(path: Path, raw: bytes, encoding: str) -> str:
    encoding = _sniff_encoding(path, raw, encoding)
    skip, codec = _without_mark(encoding, raw)
    try:
        text = raw[skip:].decode(codec)
    except UnicodeDecodeError as err:
        start = skip + err.start
        line = raw[:start].count(b"\n") + 1
        raise _not_decodable(path, encoding, line, raw[start : start + 1].hex(), start) from err
    return text.removeprefix("\ufeff")


def _first_bad_byte(path: Path, encoding: str, chunk: int = 1 << 20) -> InputError | None:
    """The error :func:`_decode` would give for a file read block by block: its first undecodable byte, found by
    reading the bytes again (a streamed reader's ``UnicodeDecodeError`` knows only its position in one buffer)."""
    with open(path, "rb") as handle:
        skip, codec = _without_mark(encoding, handle.read(len(codecs.BOM_UTF8)))
        handle.seek(skip)
        decoder = codecs.getincrementaldecoder(codec)()
        consumed, lines = skip, 0
        while block := handle.read(chunk):
            pending = decoder.getstate()[0]
            try:
                decoder.decode(block)
            except UnicodeDecodeError as err:
                data = pending + block
                start = consumed - len(pending) + err.start
                line = lines + data[len(pending) if err.start >= len(pending) else 0 : err.start].count(b"\n") + 1
                return _not_decodable(path, encoding, line, data[err.start : err.start + 1].hex(), start)
            consumed += len(block)
            lines += block.count(b"\n")
    return None


def _check_header(path: Path, text: str, sep: str) -> None:
    try:  # universal newlines: lines that end in a lone carriage return (classic Mac) are read as pandas reads them
        first = next(csv.reader(io.StringIO(text, newline=None), delimiter=sep), None)
    except csv.Error as err:
        raise InputError(f"{path}: malformed header line: {err}") from err
    if not first or all(not cell.strip() for cell in first):
        raise InputError(f"{path}: the first line (the header) is empty")
    seen: set[str] = set()
    for name in first:
        if name in seen:
            raise InputError(f"{path}: the header names column {name!r} twice; column names must be unique")
        seen.add(name)


def _read_jsonl(path: Path, text: str) -> pd.DataFrame:
    records = [_jsonl_record(path, number, line) for number, line in enumerate(text.splitlines(), start=1)]
    return pd.DataFrame.from_records([r for r in records if r is not None])


def _jsonl_record(path: Path, number: int, line: str) -> dict[str, Any] | None:
    """Line ``number`` of a JSONL file as a record (``None`` for a blank line); an error names the line."""
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: line {number} is not valid JSON ({err.msg})") from err
    if not isinstance(record, dict):
        raise InputError(f"{path}: line {number} is a JSON {type(record).__name__}, expected an object")
    return whole_characters(record)


# how every CSV/TSV is read: cells as written, only an empty one missing, no column taken for an index
_CSV_OPTIONS: dict[str, Any] = {"dtype": str, "keep_default_na": False, "na_values": [""], "index_col": False}


def _check_not_tabbed(path: Path, kind: str, frame: pd.DataFrame) -> None:
    if kind == "csv" and len(frame.columns) == 1 and "\t" in str(frame.columns[0]):
        raise InputError(
            f"{path}: one column named {str(frame.columns[0])[:60]!r} holds tabs; "
            "the file looks tab-separated: rename it to .tsv or pass --format tsv"
        )


def whole_characters(record: dict[str, Any]) -> dict[str, Any]:
    """A JSON record's strings with each lone surrogate (a ``\\ud800`` escape: half of a UTF-16 pair, no character)
    replaced by U+FFFD, as a UTF-8 decoder does with a broken byte: such a string cannot be written as UTF-8."""
    return {k: without_lone_surrogates(v) if isinstance(v, str) and not v.isascii() else v for k, v in record.items()}


def _read_json(path: Path, text: str) -> pd.DataFrame:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from err
    if isinstance(data, dict) and "rows" in data and isinstance(data["rows"], list):
        data = data["rows"]
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise InputError(f"{path}: expected a JSON array of objects (one per row)")
    return pd.DataFrame.from_records([whole_characters(item) for item in data])


def row_strings(frame: pd.DataFrame) -> list[str]:
    """Each row as one string (cells joined by U+001F, missing cells empty): what a table's content hash covers."""
    return ["\x1f".join(map(_cell_string, row)) for row in frame.itertuples(index=False)]


def _cell_string(value: Any) -> str:
    """A cell in a row's hash: text as it is, a missing value empty, anything else its ``str`` (a Parquet list cell, an
    array: ``pd.isna`` of one is an array, whose truth is ambiguous)."""
    if isinstance(value, str):
        return value
    if value is None or (not hasattr(value, "__len__") and pd.isna(value)):
        return ""
    return str(value)


def input_sha256(source: Any, texts: Sequence[str | None]) -> str:
    """What identifies a run's input: a file's sha256, else a hash of its texts (a DataFrame, a dataset)."""
    if isinstance(source, str | Path) and Path(source).is_file():
        return file_sha256(source)
    from .records import params_hash

    return params_hash({"texts": [t or "" for t in texts]})


def read_table(
    source: str | Path | pd.DataFrame,
    *,
    fmt: str | None = None,
    encoding: str = "utf-8",
    allow_empty: bool = False,
) -> pd.DataFrame:
    """Read a table of texts into a DataFrame with a fresh 0..n-1 index.

    Raises :class:`InputError` with the file and line for unreadable input: a missing, empty or
    binary file, bytes that are not valid in ``encoding``, duplicate column names, malformed rows.
    """
    if isinstance(source, str | Path) and str(source).startswith(HF_DATASET):
        source = read_hf_dataset(str(source))
    if isinstance(source, pd.DataFrame):
        frame = source.copy()
        if frame.columns.duplicated().any():
            dupes = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
            raise InputError(f"DataFrame has duplicate column names: {', '.join(dupes)}")
        origin = "DataFrame"
    else:
        path = Path(source)
        origin = str(path)
        if not path.exists():
            raise InputError(f"{path}: no such file")
        if path.is_dir():
            raise InputError(f"{path}: is a directory, expected a table file")
        kind = detect_format(path, fmt)
        if path.stat().st_size == 0:
            raise InputError(f"{path}: the file is empty")
        if kind in _TEXT_FORMATS:
            text = _decode(path, path.read_bytes(), encoding)
            if not text.strip():
                raise InputError(f"{path}: the file holds only whitespace")
            if kind in ("csv", "tsv"):
                sep = "," if kind == "csv" else "\t"
                _check_header(path, text, sep)
                try:
                    with warnings.catch_warnings():
                        # a row longer than the header would otherwise silently become an index
                        warnings.simplefilter("error", pd.errors.ParserWarning)
                        frame = pd.read_csv(io.StringIO(text), sep=sep, **_CSV_OPTIONS)
                except (pd.errors.ParserError, pd.errors.ParserWarning) as err:
                    raise InputError(f"{path}: malformed {kind.upper()}: {str(err).strip()}") from err
                _check_not_tabbed(path, kind, frame)
            elif kind == "jsonl":
                frame = _read_jsonl(path, text)
            else:
                frame = _read_json(path, text)
        else:
            from .extras import check

            check([(f"reading {path} (Parquet)", ("parquet",))])
            try:
                frame = pd.read_parquet(path)
            except (OSError, ValueError) as err:
                raise InputError(f"{path}: cannot read as Parquet: {err}") from err
    if not allow_empty and len(frame) == 0:
        raise InputError(f"{origin}: no data rows (only a header, or nothing)")
    return frame.reset_index(drop=True)


TABLE_BLOCK_ROWS = 200_000  # rows of a run's own large table (pairs.csv) read at a time


def read_csv_columns(
    path: str | Path, columns: Sequence[str], *, block_rows: int = TABLE_BLOCK_ROWS, rows: Sequence[int] | None = None
) -> pd.DataFrame:
    """The ``columns`` of a CSV that :func:`write_table` wrote (those it has) as one table, read ``block_rows`` at a
    time by :func:`csv_column_blocks`; ``rows``: only these positions (sorted)."""
    parts = list(csv_column_blocks(path, columns, block_rows=block_rows, rows=rows))
    if not parts:  # a header alone
        wanted = set(columns)
        parts = [pd.read_csv(Path(path), usecols=lambda c: c in wanted, nrows=0, **_CSV_OPTIONS)]
    frame = stacked(parts)
    return frame[[c for c in columns if c in frame.columns]]


def csv_column_blocks(
    path: str | Path,
    columns: Sequence[str],
    *,
    block_rows: int = TABLE_BLOCK_ROWS,
    rows: Sequence[int] | None = None,
    categories: Sequence[str] = (),
    check: Callable[[pd.DataFrame, int], pd.DataFrame] | None = None,
) -> Iterator[pd.DataFrame]:
    """The ``columns`` of a CSV that :func:`write_table` wrote (those it has), ``block_rows`` at a time (each block's
    columns in the file's order), never the whole file: cells as :func:`read_table` gives them (strings, an empty cell
    missing), the index the row's position in the file. ``rows``: only these positions (sorted). ``categories``:
    columns of names kept as categories (a byte or two a cell, not the string); ``check(block, first_row)``: each
    block checked and converted as it is read. A run's pairs table grows to gigabytes: the report tallies what it
    draws block by block. Nothing for a header alone."""
    target = Path(path)
    if not target.is_file():
        raise InputError(f"{target}: no such file")
    wanted = set(columns)
    keep = None if rows is None else np.asarray(rows, dtype=np.int64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)  # as read_table: a long row is an error
            reader = pd.read_csv(target, usecols=lambda c: c in wanted, chunksize=block_rows, **_CSV_OPTIONS)
            with reader:
                for chunk in reader:
                    if keep is not None:
                        inside = keep[(keep >= chunk.index[0]) & (keep <= chunk.index[-1])] if len(chunk) else keep[:0]
                        chunk = chunk.loc[inside]
                    if check is not None:
                        chunk = check(chunk, int(chunk.index[0]) if len(chunk) else 0)
                    for column in categories:
                        if column in chunk.columns:
                            chunk[column] = chunk[column].astype("category")
                    yield chunk
    except UnicodeDecodeError as err:
        raise _first_bad_byte(target, "utf-8") or InputError(f"{target}: not valid utf-8 ({err.reason})") from err
    except (pd.errors.ParserError, pd.errors.ParserWarning) as err:
        raise InputError(f"{target}: malformed CSV: {str(err).strip()}") from err
    except pd.errors.EmptyDataError as err:
        raise InputError(f"{target}: the file is empty") from err


def stacked(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Blocks of one table as one, their index kept; a column of categories keeps them (the union of the blocks',
    sorted), where ``pd.concat`` would turn blocks with different categories into strings. The blocks are emptied
    column by column as the table is built (at most one column is held twice)."""
    if len(frames) == 1:
        return frames[0]
    from pandas.api.types import union_categoricals

    index = np.concatenate([f.index.to_numpy() for f in frames])
    columns: dict[str, Any] = {}  # arrays, not Series: the frame is built on the index, with nothing to align
    for column in list(frames[0].columns):
        parts = [f.pop(column) for f in frames]
        if isinstance(parts[0].dtype, pd.CategoricalDtype):
            columns[column] = union_categoricals([p.array for p in parts], sort_categories=True, ignore_order=True)
        else:
            columns[column] = pd.concat(parts, ignore_index=True).array
    return pd.DataFrame(columns, index=index, copy=False)


def text_frame(data: Any) -> pd.DataFrame:
    """``pd.DataFrame(data)``; where pandas' arrow-backed strings refuse a lone surrogate ("x \ud800") with a raw
    UnicodeEncodeError, the columns stay Python objects, so the text reaches :func:`skip_reason` and its row gets
    ``skipped:invalid_unicode``."""
    try:
        return pd.DataFrame(data)
    except UnicodeEncodeError:
        return pd.DataFrame(data, dtype=object)


def as_frame(data: Any, *, text_column: str = "text", what: str = "texts", encoding: str = "utf-8") -> pd.DataFrame:
    """The user's data as a DataFrame: a list of strings (one ``text_column``), a list of dicts or records, a dict of
    columns, a pandas DataFrame, a Hugging Face ``datasets.Dataset`` (``to_pandas``), or a file path."""
    if isinstance(data, pd.DataFrame):
        return data.reset_index(drop=True)
    if isinstance(data, str | Path):
        return read_table(data, encoding=encoding)
    if hasattr(data, "to_pandas") and callable(data.to_pandas):  # datasets.Dataset, pyarrow.Table, polars
        return as_frame(data.to_pandas(), text_column=text_column, what=what)
    if isinstance(data, Mapping):
        try:
            return text_frame({str(k): list(v) for k, v in data.items()})
        except (TypeError, ValueError) as err:
            raise InputError(f"{what}: a dict must map column names to equally long lists ({err})") from err
    if isinstance(data, Iterable):
        items = list(data)
        if not items:
            raise InputError(f"{what}: no rows")
        if all(isinstance(x, str) for x in items):
            return text_frame({text_column: items})
        if all(isinstance(x, Mapping) for x in items):
            return text_frame([dict(x) for x in items])
        if all(hasattr(x, "__dataclass_fields__") for x in items):
            from dataclasses import asdict

            return pd.DataFrame([asdict(x) for x in items])
        bad = next(i for i, x in enumerate(items) if not isinstance(x, str))
        raise InputError(f"{what}: item {bad} is a {type(items[bad]).__name__}, expected a string (or give dicts)")
    raise InputError(
        f"{what}: cannot read a {type(data).__name__}; pass a list of strings, a dict of columns, a DataFrame, a "
        "datasets.Dataset or a file path"
    )


def _option_names(option: str) -> str:
    """How a column option is set, in both spellings: the command line's flag and Python's keyword (#48: a Python
    caller was told only of ``--text-column``)."""
    return f"set with {option}, or {option.lstrip('-').replace('-', '_')}= in Python"


def require_columns(frame: pd.DataFrame, columns: Mapping[str, str], *, origin: str) -> None:
    """Raise :class:`InputError` naming each missing column and the option that sets it.

    ``columns`` maps a column name to the CLI option that chooses it, e.g. ``{"orig_text": "--text-column"}``; the
    error names the option and its Python keyword (``text_column=``).
    """
    missing = [(name, option) for name, option in columns.items() if name not in frame.columns]
    if missing:
        listed = ", ".join(f"{name!r} ({_option_names(option)})" for name, option in missing)
        available = ", ".join(repr(str(c)) for c in frame.columns)
        raise InputError(f"{origin}: missing column {listed}; the columns are: {available}")


def row_ids(frame: pd.DataFrame, column: str | None, *, origin: str) -> list[str]:
    """The rows' ids: the values of ``column`` (each present and unique), or the row numbers when it is ``None``.

    The one rule for every command: a missing id or two rows with the same id is an :class:`InputError` that names
    the rows."""
    if column is None:
        return [str(i) for i in range(len(frame))]
    seen: dict[str, int] = {}
    for row, value in enumerate(frame[column].tolist()):
        text = cell_text(value)
        if text is None or not text.strip():
            raise _no_id(origin, row, column)
        if text in seen:
            raise _same_id(origin, seen[text], row, text, column)
        seen[text] = row
    return list(seen)


def _no_id(origin: str, row: int, column: str | None) -> InputError:
    return InputError(f"{origin}: row {row} has no value in the id column {column!r}")


def _same_id(origin: str, first: int, second: int, value: str | None, column: str | None) -> InputError:
    return InputError(f"{origin}: rows {first} and {second} share the id {value!r} in column {column!r}")


@dataclass(frozen=True)
class TextInput:
    """What a command reads: ``origin`` (the file's path, or ``DataFrame`` for data given in memory), one id and one
    text per row (``None`` for an empty cell), and the table as read (for its other columns: labels, groups)."""

    origin: str
    ids: list[str]
    texts: list[str | None]
    frame: pd.DataFrame

    def filled(self) -> list[str]:
        """The texts with an empty cell as ``""``."""
        return [t or "" for t in self.texts]

    def every_text(self, what: str) -> list[str]:
        """The texts, for a command that scores every row (``what``: its name, for the message): an empty cell or one
        that holds no text (a list, a mapping, a boolean) is an :class:`InputError` naming the row, instead of being
        scored as ``""`` or ``"<list>"`` and counted in its metrics."""
        for row, text in enumerate(self.texts):
            if text is None or isinstance(text, NotText) or not text.strip():
                held = "nothing" if text is None or not text.strip() else f"a {text.strip('<>')}, not text"
                raise InputError(
                    f"{self.origin}: row {row} ({self.ids[row]!r}): the text column holds {held}; {what} scores "
                    "every row's text, so fix or drop that row"
                )
            if half := LONE_SURROGATES.search(text):
                raise InputError(
                    f"{self.origin}: row {row} ({self.ids[row]!r}): the text holds half of a UTF-16 surrogate pair "
                    f"(at character {half.start()}), which is not valid Unicode; {what} scores every row's text, so "
                    "fix or drop that row"
                )
        return [str(t) for t in self.texts]


def read_texts(
    source: Any,
    *,
    text_column: str = "text",
    id_column: str | None = None,
    columns: Mapping[str, str] | None = None,
    encoding: str = "utf-8",
    fmt: str | None = None,
    limit: int | None = None,
    origin: str | None = None,
) -> TextInput:
    """The one input reader of every command: a file (CSV/TSV/JSONL/JSON/Parquet, ``hf-dataset:``; ``fmt`` and
    ``encoding`` as :func:`read_table`), a DataFrame, or anything :func:`as_frame` takes. The text column, the other
    ``columns`` (name -> the option that sets it) and the id column must exist (an error names each missing one and
    its option); ids follow :func:`row_ids`; ``limit`` keeps the first rows. ``origin`` names the data in errors
    (default: the file's path, or ``DataFrame``)."""
    origin = origin or (str(source) if isinstance(source, str | Path) else "DataFrame")
    if isinstance(source, str | Path | pd.DataFrame):
        frame = read_table(source, fmt=fmt, encoding=encoding)
    else:
        frame = as_frame(source, text_column=text_column)
    wanted = {text_column: "--text-column", **(columns or {})} | ({id_column: "--id-column"} if id_column else {})
    require_columns(frame, wanted, origin=origin)
    ids = row_ids(frame, id_column, origin=origin)
    texts = [cell_text(v) for v in frame[text_column].tolist()]
    if limit:
        frame, ids, texts = frame.iloc[:limit], ids[:limit], texts[:limit]
    return TextInput(origin, ids, texts, frame)


STREAM_BYTES = 64 << 20  # input files at least this large are read block by block where a command can (generate)
BLOCK_ROWS = 10_000


def stream_threshold() -> int:
    """The size (bytes) from which an input file is read in blocks: :data:`STREAM_BYTES`, or
    ``COUNTERFAIR_STREAM_BYTES``."""
    raw = os.environ.get("COUNTERFAIR_STREAM_BYTES", "").strip()
    return int(raw) if raw.isdigit() else STREAM_BYTES


def streamed(source: Any, fmt: str | None = None) -> bool:
    """Whether ``source`` is a CSV, TSV, JSONL or Parquet file large enough to read in blocks
    (:func:`read_text_blocks`); a JSON array, a dataset or data in memory is read whole."""
    if not isinstance(source, str | Path) or str(source).startswith(HF_DATASET) or not Path(source).is_file():
        return False
    try:
        kind = detect_format(source, fmt)
    except InputError:
        return False
    return kind in ("csv", "tsv", "jsonl", "parquet") and Path(source).stat().st_size >= stream_threshold()


@dataclass
class TextBlocks:
    """A large input file read block by block, never whole: every row is checked (columns, ids, encoding) and
    counted when it is opened (:func:`read_text_blocks`), so bad input is named before any work; iterating yields
    ``(start, ids, texts)`` for each block of at most ``block_rows`` rows, with the values :func:`read_texts` gives."""

    path: Path
    kind: str
    encoding: str
    text_column: str
    id_column: str | None
    block_rows: int = BLOCK_ROWS
    rows: int = 0

    @property
    def origin(self) -> str:
        return str(self.path)

    def __iter__(self) -> Iterator[tuple[int, list[str], list[str | None]]]:
        start = 0
        for frame in self._frames():
            texts = _column_texts(frame, self.text_column)
            if self.id_column is None:
                ids = [str(start + i) for i in range(len(frame))]
            else:
                ids = [t or "" for t in _column_texts(frame, self.id_column)]
            yield start, ids, texts
            start += len(frame)

    def _frames(self) -> Iterator[pd.DataFrame]:
        if self.kind == "parquet":
            yield from self._parquet_frames()
        elif self.kind == "jsonl":
            yield from self._jsonl_frames()
        else:
            yield from self._csv_frames()

    def _csv_frames(self) -> Iterator[pd.DataFrame]:
        sep = "," if self.kind == "csv" else "\t"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", pd.errors.ParserWarning)  # as read_table: a long row is an error
                reader = pd.read_csv(
                    self.path, sep=sep, chunksize=self.block_rows, encoding=self.encoding, **_CSV_OPTIONS
                )
                with reader:
                    yield from reader
        except UnicodeDecodeError as err:
            raise _first_bad_byte(self.path, self.encoding) or InputError(
                f"{self.path}: not valid {self.encoding} ({err.reason}); re-save the file as UTF-8 or pass --encoding "
                "(e.g. cp1252 for a Windows file; latin-1 reads any byte)"
            ) from err
        except (pd.errors.ParserError, pd.errors.ParserWarning) as err:
            raise InputError(f"{self.path}: malformed {self.kind.upper()}: {str(err).strip()}") from err

    def _jsonl_frames(self) -> Iterator[pd.DataFrame]:
        records: list[Mapping[str, Any]] = []
        try:
            with open(self.path, encoding=self.encoding) as handle:
                for number, line in enumerate(handle, start=1):
                    record = _jsonl_record(self.path, number, line.removeprefix("\ufeff") if number == 1 else line)
                    if record is None:
                        continue
                    records.append(record)
                    if len(records) == self.block_rows:
                        yield pd.DataFrame.from_records(records)
                        records = []
        except UnicodeDecodeError as err:
            raise _first_bad_byte(self.path, self.encoding) or InputError(
                f"{self.path}: not valid {self.encoding} ({err.reason}); re-save the file as UTF-8 or pass --encoding"
            ) from err
        if records:
            yield pd.DataFrame.from_records(records)

    def _parquet_frames(self) -> Iterator[pd.DataFrame]:
        from .extras import check

        check([(f"reading {self.path} (Parquet)", ("parquet",))])
        import pyarrow.parquet as pq

        try:
            handle = pq.ParquetFile(self.path)
            names = set(handle.schema_arrow.names)
            columns = [c for c in (self.text_column, self.id_column) if c is not None and c in names]
            for batch in handle.iter_batches(batch_size=self.block_rows, columns=columns or None):
                yield batch.to_pandas()
        except (OSError, ValueError) as err:
            raise InputError(f"{self.path}: cannot read as Parquet: {err}") from err


def _column_texts(frame: pd.DataFrame, column: str) -> list[str | None]:
    """A column's cells as texts (``None`` where missing; every cell missing where a block lacks the column, as a
    JSONL block whose records all leave it out)."""
    if column not in frame.columns:
        return [None] * len(frame)
    return [cell_text(v) for v in frame[column].tolist()]


def read_text_blocks(
    source: str | Path,
    *,
    text_column: str = "text",
    id_column: str | None = None,
    encoding: str = "utf-8",
    fmt: str | None = None,
    block_rows: int | None = None,
) -> TextBlocks:
    """A large CSV/TSV/JSONL/Parquet file as :class:`TextBlocks`: read once here to check every row as
    :func:`read_texts` would (the columns exist, every id present and unique, the bytes valid in the encoding) and to
    count them, holding one block at a time; the ids' uniqueness is checked on 64-bit hashes (8 bytes a row)."""
    path = Path(source)
    kind = detect_format(path, fmt)
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    if not head.strip():
        raise InputError(f"{path}: the file is empty" if not head else f"{path}: the file holds only whitespace")
    blocks = TextBlocks(path, kind, "utf-8", text_column, id_column, block_rows or BLOCK_ROWS)
    if kind != "parquet":
        blocks.encoding = _sniff_encoding(path, head, encoding)
    if kind in ("csv", "tsv"):
        _check_header(
            path, head.decode(blocks.encoding, errors="replace").removeprefix("\ufeff"), "," if kind == "csv" else "\t"
        )
    seen_columns: set[str] = set()
    ids = _IdCheck(str(path), id_column)
    for frame in blocks._frames():
        if not seen_columns:
            _check_not_tabbed(path, kind, frame)
        seen_columns |= {str(c) for c in frame.columns}
        if kind != "jsonl":  # a JSONL file's columns are the union over its records: checked at the end
            require_columns(frame, _wanted(text_column, id_column), origin=str(path))
        if id_column is not None:
            ids.add(blocks.rows, _column_texts(frame, id_column))
        blocks.rows += len(frame)
    if blocks.rows == 0:
        raise InputError(f"{path}: no data rows (only a header, or nothing)")
    require_columns(pd.DataFrame(columns=sorted(seen_columns)), _wanted(text_column, id_column), origin=str(path))
    return blocks


def _wanted(text_column: str, id_column: str | None) -> dict[str, str]:
    return {text_column: "--text-column"} | ({id_column: "--id-column"} if id_column else {})


class _IdCheck:
    """:func:`row_ids`' rule (every id present, no two rows alike) over blocks, holding 8 bytes a row: the sorted
    64-bit hashes of the ids seen and their rows."""

    def __init__(self, origin: str, column: str | None) -> None:
        self.origin, self.column = origin, column
        self.hashes = np.empty(0, dtype=np.uint64)
        self.rows = np.empty(0, dtype=np.int64)

    def add(self, start: int, values: list[str | None]) -> None:
        for k, text in enumerate(values):
            if text is None or not text.strip():
                raise _no_id(self.origin, start + k, self.column)
        digests = [hashlib.blake2b(str(t).encode("utf-8", "surrogatepass"), digest_size=8).digest() for t in values]
        hashes = np.frombuffer(b"".join(digests), dtype=np.uint64)
        rows = np.arange(start, start + len(values), dtype=np.int64)
        found = np.searchsorted(self.hashes, hashes)
        known = np.zeros(len(hashes), dtype=bool)
        if len(self.hashes):
            known = self.hashes[np.minimum(found, len(self.hashes) - 1)] == hashes
        in_block: dict[int, int] = {}
        for k, value in enumerate(hashes.tolist()):  # row order: the first row that repeats an id is the one named
            if known[k]:
                self._refuse(int(self.rows[found[k]]), start + k, values[k])
            if value in in_block:
                self._refuse(start + in_block[value], start + k, values[k])
            in_block[value] = k
        order = np.argsort(np.concatenate([self.hashes, hashes]), kind="stable")
        self.hashes = np.concatenate([self.hashes, hashes])[order]
        self.rows = np.concatenate([self.rows, rows])[order]

    def _refuse(self, first: int, second: int, value: str | None) -> None:
        raise _same_id(self.origin, first, second, value, self.column)


def cell_text(value: Any) -> str | None:
    """A table cell as text, or ``None`` when it is missing (NaN/None)."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is pd.NA:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | bytes | bytearray | list | tuple | dict | set) or hasattr(value, "__len__"):
        return NotText(f"<{type(value).__name__}>")  # a per-row status (not_text), not its repr edited as text
    return str(value)  # a number in a text column: its digits


def read_json(path: str | Path) -> dict[str, Any]:
    """Read a JSON document that counterfair wrote; checks ``schema_version``."""
    target = Path(path)
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise InputError(f"{target}: no such file") from err
    except json.JSONDecodeError as err:
        raise InputError(f"{target}: not valid JSON ({err.msg} at line {err.lineno})") from err
    if not isinstance(data, dict):
        raise InputError(f"{target}: expected a JSON object")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SchemaError(
            f"{target}: written with schema_version {version!r}, this counterfair reads "
            f"{SCHEMA_VERSION!r}; rerun the command that produced it"
        )
    return data
