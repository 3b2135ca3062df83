"""Writing counterfair's outputs: every file atomically (to a temporary file beside it, then renamed, so an
interrupted write never leaves half a file), every table with a ``schema_version`` column and every JSON document with
a ``schema_version`` key, NaN written as ``null``; CSV in blocks for tables larger than memory, Parquet beside a run's
CSV (``--parquet``), and cells a spreadsheet would run as formulas neutralised where a person or a model wrote them.
(Reading is :mod:`counterfair.io`.)"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pandas as pd

from .errors import OutputError
from .io import TABLE_BLOCK_ROWS, detect_format
from .records import SCHEMA_VERSION
from .redact import redact
from .summary_record import Record

_WATCHED: dict[Path, set[str]] = {}  # run directories being written (resolved) -> the top-level entries written there


def watch_writes(directory: str | Path) -> None:
    """Note, from now on, the top-level entries of ``directory`` that counterfair writes (:func:`note_written`): a
    run's file list is what the run created, not whatever the folder holds when it ends (a file a user drops into
    the folder during a run is not the run's, and ``--overwrite`` must not remove it)."""
    _WATCHED.setdefault(Path(directory).resolve(), set())


def written_in(directory: str | Path, *, stop: bool = False) -> set[str]:
    """The top-level entries of a watched ``directory`` written since :func:`watch_writes` (``stop``: and stop)."""
    key = Path(directory).resolve()
    return _WATCHED.pop(key, set()) if stop else set(_WATCHED.get(key, ()))


def note_written(path: str | Path) -> None:
    """Count ``path`` (a file or folder counterfair writes) as written in each watched directory it lies in."""
    if not _WATCHED:
        return
    resolved = Path(path).resolve()
    for root, names in _WATCHED.items():
        if resolved != root and resolved.is_relative_to(root):
            names.add(resolved.relative_to(root).parts[0])


def resume_hint(err: OSError) -> str:
    """What to do after a write failed for lack of room (a full disk or quota): free space and run the same command
    again, which resumes (every command's finished units are on disk); nothing for any other error."""
    import errno

    if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "; free space and rerun the same command: it resumes from the finished units"
    return ""


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; rename it over ``path`` only if the block succeeds."""
    target = Path(path)
    note_written(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise OutputError(f"cannot write {target}: {err.strerror or err}{resume_hint(err)}") from err
    try:
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes the file private; outputs get the usual permissions
        os.replace(tmp, target)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(
            f"cannot write {target}: {err.strerror or err}; the previous file, if any, is unchanged{resume_hint(err)}"
        ) from err
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def csv_quoting(frame: pd.DataFrame) -> Literal[0, 2]:
    """How to quote ``frame``'s CSV: minimally, unless a text in it holds a carriage return. Python's csv writer
    quotes a field for the characters of its line terminator (a newline) and leaves a lone carriage return bare, which
    every reader (pandas, Excel, csv) then takes for a line end: an id ``0<CR>`` came back as ``0`` and a row of its
    own. Such a frame is written with every text quoted (the values read back are the same)."""
    for name in frame.columns:
        column = frame[name]
        if column.dtype != object and not pd.api.types.is_string_dtype(column.dtype):
            continue
        try:
            if column.str.contains("\r", regex=False, na=False).any():
                return 2  # csv.QUOTE_NONNUMERIC
        except AttributeError:  # an object column without a string in it
            continue
    return 0  # csv.QUOTE_MINIMAL


def write_table(frame: pd.DataFrame, path: str | Path, *, fmt: str | None = None) -> Path:
    """Write ``frame`` with a ``schema_version`` column, atomically. Format from the suffix."""
    target = Path(path)
    kind = detect_format(target, fmt)
    out = frame.copy()
    out["schema_version"] = SCHEMA_VERSION
    if kind in ("csv", "tsv"):
        with atomic_open(target, "w", encoding="utf-8", newline="") as handle:
            out.to_csv(handle, index=False, sep="," if kind == "csv" else "\t", quoting=csv_quoting(out))
    elif kind == "jsonl":
        with atomic_open(target, "w", encoding="utf-8") as handle:
            out.to_json(handle, orient="records", lines=True, force_ascii=False)
    elif kind == "json":
        with atomic_open(target, "w", encoding="utf-8") as handle:
            out.to_json(handle, orient="records", force_ascii=False, indent=1)
    else:
        from .extras import check

        check([(f"writing {target} (Parquet)", ("parquet",))])
        with atomic_open(target, "wb") as handle:
            out.to_parquet(handle, index=False)
    return target


#: columns of a run's tables that hold text or ids, whatever their cells look like: Parquet keeps them as strings
#: ("007", "1e5", "NA" and "None" as written, never a number or a missing value)
TEXT_COLUMNS = re.compile(
    r"(?:^|_)(?:id|text|term|word|words|prompt|response|edits|group|status|form|family|kind|context)$"
)
_INTEGER = re.compile(r"^[+-]?\d+$")


def _column_kind(name: str, values: pd.Series) -> str:
    """How a CSV column's cells (read as written: strings, the empty cell missing) are typed in Parquet: ``string``
    for text and ids (:data:`TEXT_COLUMNS`) and for anything not wholly numbers or booleans; else ``bool``, ``int``
    or ``float``."""
    if TEXT_COLUMNS.search(name):
        return "string"
    cells = values.dropna()
    if cells.empty:
        return "empty"
    if cells.isin(("True", "False")).all():
        return "bool"
    if cells.map(lambda v: bool(_INTEGER.match(v))).all():
        return "int"
    if pd.to_numeric(cells, errors="coerce").notna().all():
        return "float"
    return "string"


def _wider_kind(old: str | None, new: str) -> str:
    """The kind holding both (a block's): an integer with a float is a float; a boolean with a number, text."""
    if old is None or old == "empty" or old == new:
        return new
    if new == "empty":
        return old
    if {old, new} == {"int", "float"}:
        return "float"
    return "string"


def csv_to_parquet(source: str | Path, target: str | Path) -> Path:
    """A run's CSV table written again as Parquet (``--parquet``), in blocks of :data:`TABLE_BLOCK_ROWS` rows (a
    pairs.csv larger than memory converts), typed as the CSV holds it: every cell read as written (only an empty cell
    is missing: an id "NA" or a text "None" stays), text and id columns strings (:data:`TEXT_COLUMNS`: "007" stays
    "007"), a column numbers only where every cell of every block is one (an integer column with a missing cell is a
    float) — a first pass settles each column's kind over every block, the second writes."""
    from .extras import check

    check([(f"writing {target} (Parquet)", ("parquet",))])
    import pyarrow as pa
    import pyarrow.parquet as pq

    def blocks() -> Iterator[pd.DataFrame]:
        yield from pd.read_csv(
            source, chunksize=TABLE_BLOCK_ROWS, dtype=str, keep_default_na=False, na_values=[""], encoding="utf-8"
        )

    kinds: dict[str, str] = {}
    missing: set[str] = set()
    for block in blocks():
        for column in block.columns:
            kinds[column] = _wider_kind(kinds.get(column), _column_kind(str(column), block[column]))
            if block[column].isna().any():
                missing.add(column)
    kinds = {c: "float" if k == "int" and c in missing else k for c, k in kinds.items()}
    arrow = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "string": pa.string(), "empty": pa.string()}
    schema = pa.schema([(c, arrow[k]) for c, k in kinds.items()])
    with atomic_open(target, "wb") as handle, pq.ParquetWriter(handle, schema) as writer:
        for block in blocks():
            columns: dict[str, pd.Series] = {}
            for column, kind in kinds.items():
                cells = block[column]
                if kind == "bool":
                    columns[column] = cells.map({"True": True, "False": False}).astype("boolean")
                elif kind in ("int", "float"):
                    columns[column] = pd.to_numeric(cells).astype("int64" if kind == "int" else "float64")
                else:
                    columns[column] = cells.astype(object).where(cells.notna(), None)
            writer.write_table(pa.Table.from_pandas(pd.DataFrame(columns), schema=schema, preserve_index=False))
    return Path(target)


def write_csv_chunks(chunks: Iterable[pd.DataFrame], path: str | Path, columns: Sequence[str]) -> Path:
    """Write a CSV from a stream of frames (same ``columns``, plus ``schema_version``) without holding them all in
    memory; atomic like :func:`write_table`."""
    with csv_writer(path, columns) as write:
        for chunk in chunks:
            write(chunk)
    return Path(path)


@contextmanager
def csv_writer(path: str | Path, columns: Sequence[str]) -> Iterator[Callable[[pd.DataFrame], None]]:
    """A function that appends a frame's rows (``columns``, plus ``schema_version``) to the CSV at ``path``, which
    appears whole when the block ends (atomic like :func:`write_table`; the header alone if nothing was written).
    Several can be open at once, so one pass over a run's records writes several tables."""
    target = Path(path)
    header = [True]

    def write(chunk: pd.DataFrame) -> None:
        out = chunk.reindex(columns=list(columns))
        out["schema_version"] = SCHEMA_VERSION
        out.to_csv(handle, index=False, header=header[0], quoting=csv_quoting(out))
        header[0] = False

    with atomic_open(target, "w", encoding="utf-8", newline="") as handle:
        yield write
        if header[0]:  # nothing at all: the header alone
            pd.DataFrame(columns=[*columns, "schema_version"]).to_csv(handle, index=False)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")


def nan_to_none(value: Any) -> Any:
    """A summary with every NaN number (nested in dicts, lists, tuples) replaced by ``None``: the one spelling of a
    missing number in a summary, in memory as in ``summary.json`` (where it is ``null``)."""
    if isinstance(value, float | np.floating) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [nan_to_none(v) for v in value]
    if isinstance(value, tuple):
        return tuple(nan_to_none(v) for v in value)
    return value


def missing_as_nan(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every missing cell spelled NaN, pandas' missing value (what number columns and pandas 3's text
    columns hold already): an object column's ``None`` (a flag without a value, a text under pandas 2) becomes NaN.
    In a CSV both are an empty cell."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].where(out[column].notna(), np.nan)
    return out


# a spreadsheet runs a cell that starts with one of these as a formula (CSV injection): written with a leading "'"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """``value`` with a leading "'" when a spreadsheet would read it as a formula, or when it starts with "'" itself
    (so the round trip keeps it); :func:`from_spreadsheet_safe` removes exactly that one on reading. For the tables
    whose cells hold text a person or a model outside counterfair wrote (ratings, an LLM's responses)."""
    return "'" + value if isinstance(value, str) and value.startswith((*_FORMULA_START, "'")) else value


def from_spreadsheet_safe(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith((*_FORMULA_START, "'")):
        return value[1:]
    return value


def _clean_json(value: Any) -> Any:
    """Replace NaN/inf floats by ``None`` so that the output is strict JSON, and redact a URL's credentials in every
    string (:mod:`counterfair.redact`: a secret is never written)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_json(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return _clean_json(value.item())
    return value


def write_json(document: Mapping[str, Any] | Record, path: str | Path) -> Path:
    """Write a JSON document (a summary record as its JSON object) with ``schema_version`` first, atomically; NaN
    becomes ``null``."""
    if isinstance(document, Record):
        document = document.to_dict()
    payload = {"schema_version": SCHEMA_VERSION, **{k: v for k, v in document.items() if k != "schema_version"}}
    with atomic_open(path, "w", encoding="utf-8") as handle:
        json.dump(_clean_json(payload), handle, indent=2, ensure_ascii=False, default=_json_default)
        handle.write("\n")
    return Path(path)
