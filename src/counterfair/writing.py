"""Writing counterfair's outputs: every file atomically (to a temporary file beside it, then renamed, so an
interrupted write never leaves half a file), every table with a ``schema_version`` column and every JSON document with
a ``schema_version`` key, NaN written as ``null``; CSV in blocks for tables larger than memory, Parquet beside a run's
CSV (``--parquet``), and cells a spreadsheet would run as formulas neutralised where a person or a model wrote them.
(Reading is :mod:`counterfair.io`.)"""

from __future__ import annotations

import json
import math
import os
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


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; rename it over ``path`` only if the block succeeds."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise OutputError(f"cannot write {target}: {err.strerror or err}") from err
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
            f"cannot write {target}: {err.strerror or err}; the previous file, if any, is unchanged"
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


def csv_to_parquet(source: str | Path, target: str | Path) -> Path:
    """A run's CSV table written again as Parquet (``--parquet``), in blocks of :data:`TABLE_BLOCK_ROWS` rows (a
    pairs.csv larger than memory converts): a first pass settles each column's type over every block (an integer
    column with a missing cell is a float, a column of mixed kinds is text), the second writes."""
    from .extras import check

    check([(f"writing {target} (Parquet)", ("parquet",))])
    import pyarrow as pa
    import pyarrow.parquet as pq

    def blocks() -> Iterator[pd.DataFrame]:
        yield from pd.read_csv(source, chunksize=TABLE_BLOCK_ROWS)

    kinds: dict[str, pa.DataType] = {}
    for block in blocks():
        for column, kind in zip(block.columns, pa.Schema.from_pandas(block, preserve_index=False).types, strict=True):
            kinds[column] = _wider(kinds.get(column), kind)
    schema = pa.schema([(c, pa.string() if pa.types.is_null(k) else k) for c, k in kinds.items()])
    with atomic_open(target, "wb") as handle, pq.ParquetWriter(handle, schema) as writer:
        for block in blocks():
            for field in schema:
                if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
                    block[field.name] = block[field.name].map(lambda v: None if v is None or v != v else str(v))
            writer.write_table(pa.Table.from_pandas(block, schema=schema, preserve_index=False))
    return Path(target)


def _wider(old: Any, new: Any) -> Any:
    """The type holding both ``old`` and ``new`` (a block's): numbers widen, anything else mixed is text."""
    import pyarrow as pa

    if old is None or pa.types.is_null(old) or old == new:
        return new
    if pa.types.is_null(new):
        return old
    numbers = (pa.types.is_integer, pa.types.is_floating)
    if any(is_a(old) for is_a in numbers) and any(is_a(new) for is_a in numbers):
        return pa.float64()
    return pa.string()


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
