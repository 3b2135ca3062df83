"""Resumable run directories: one definition shared by generate, audit and feedback.

A run directory holds ``run.json`` (what identifies the run: an options fingerprint and the input's hash) and
``.work/done.jsonl`` (one JSON record per finished unit of work, appended and flushed as each unit finishes).
A rerun with the same directory, options and input skips what is already recorded; a different run in the same
directory is refused rather than mixed in. A record cut off mid-line by a kill is dropped and redone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from array import array
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypedDict, TypeVar, cast

import numpy as np

from .errors import OutputError
from .jsontypes import JSONObject
from .runs import claim_run_dir, writing
from .writing import note_written

__all__ = ["JsonlCheckpoint", "MemorySink", "RowCheckpoint", "ScoreCheckpoint", "claim_run_dir", "pack", "unpack"]

#: the key under which :func:`pack` stores a list of records as one table
TABLE = "__table__"
#: a checkpoint's record (each caller's TypedDict: generate's GenerationRecord, feedback's unit, ...) and what of it
#: stays in memory (the record itself, or a slimmer record: generate's SlimRecord)
Rec = TypeVar("Rec", bound=Mapping[str, Any])
Held = TypeVar("Held")


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _whole(record: Any) -> Any:
    return record  # the default slim: the whole record stays in memory


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # 1, 1.0 and True are different cells


def pack(record: Mapping[str, Any]) -> JSONObject:
    """``record`` with each list of two or more dicts that share their keys (a unit's candidates) written as one
    table: the keys once, the values every row shares once, the rest row by row. Lossless (:func:`unpack`); an
    identity swap's 49 candidates of 21 fields shrink to about a third."""
    out: JSONObject = {}
    for name, value in record.items():
        if isinstance(value, list) and len(value) > 1 and all(isinstance(v, dict) for v in value):
            keys = list(value[0])
            if all(list(v) == keys for v in value):
                first = value[0]
                same = {k: first[k] for k in keys if all(_same(v[k], first[k]) for v in value)}
                varying = [k for k in keys if k not in same]
                out[name] = {TABLE: {"keys": keys, "same": same, "rows": [[v[k] for k in varying] for v in value]}}
                continue
        out[name] = value
    return out


def unpack(record: JSONObject) -> JSONObject:
    """The record :func:`pack` was given (records written before packing come back as they are)."""
    out: JSONObject = {}
    for name, value in record.items():
        if isinstance(value, dict) and TABLE in value and len(value) == 1:
            table: Any = value[TABLE]
            keys, same = table["keys"], table["same"]
            at = {k: i for i, k in enumerate(k for k in keys if k not in same)}
            out[name] = [{k: same[k] if k in same else row[at[k]] for k in keys} for row in table["rows"]]
            continue
        out[name] = value
    return out


class JsonlCheckpoint(Generic[Rec, Held]):
    """Append-only JSONL of finished records, indexed by ``key(record)``; tolerant of a torn last line.

    ``slim`` picks what of each record stays in memory (``done``); the whole record is read back from the file on
    demand (:meth:`full`), so a run whose records are large (every candidate of every input) keeps only a small
    part of them in memory."""

    def __init__(
        self,
        path: Path,
        key: Callable[[Rec], Hashable],
        slim: Callable[[Rec], Held] | None = None,
        *,
        shape: Mapping[str, type | tuple[type, ...]] | None = None,
    ) -> None:
        self.path = path
        self.key = key
        self.slim: Callable[[Rec], Held] = slim or _whole
        self.shape = shape or {}
        self._done: dict[Hashable, Held] = {}
        self._offsets: dict[Hashable, int] = {}
        if path.exists():
            offset = 0
            with open(path, "rb") as handle:  # line by line: a large checkpoint is never held whole
                for line in handle:
                    if not line.endswith(b"\n"):
                        break  # a write cut off mid-line: that unit is redone
                    try:  # as add() wrote it, or damaged: it and what follows are redone (never an exit 3)
                        data = json.loads(line)
                        if not isinstance(data, dict):
                            raise TypeError("not a JSON object")
                        record = cast(Rec, unpack(data))
                        self._check(record)
                        self._remember(record, offset)
                    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
                        break
                    offset += len(line)
            if offset != path.stat().st_size:
                with open(path, "r+b") as handle:
                    handle.truncate(offset)
        path.parent.mkdir(parents=True, exist_ok=True)
        note_written(path)

    def _check(self, record: Rec) -> None:
        """Refuse a record read back that is not of the checkpoint's ``shape`` (each key present, of its type; a
        boolean is no number): a damaged line is redone, not read into the run."""
        for name, kind in self.shape.items():
            value = cast(Mapping[str, Any], record)[name]
            if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
                raise TypeError(f"{name}: {type(value).__name__}")

    def _remember(self, record: Rec, offset: int) -> None:
        key = self.key(record)
        self._done[key] = self.slim(record)
        self._offsets[key] = offset

    def __contains__(self, key: Hashable) -> bool:
        return key in self._done

    @property
    def done(self) -> dict[Hashable, Held]:
        """``slim(record)`` of every finished unit, by key."""
        return self._done

    def __len__(self) -> int:
        return len(self._offsets)

    def _offset(self, key: Hashable) -> int:
        return self._offsets[key]

    def add(self, records: Sequence[Rec]) -> None:
        def kept() -> str:  # counted only when a write fails: counting a score index is a query
            return f"the {len(self)} units finished before are kept; free space and rerun the same command to resume"

        with writing(self.path, kept=kept), open(self.path, "ab") as handle:
            staged = []
            for record in records:
                staged.append((record, handle.tell()))
                handle.write((json.dumps(pack(record), ensure_ascii=False, default=str) + "\n").encode("utf-8"))
            handle.flush()
        for record, offset in staged:  # only records that reached the file count as done
            self._remember(record, offset)

    def slims(self, keys: Sequence[Hashable]) -> list[Held]:
        """``slim(record)`` of each key's record, as held in memory."""
        return [self._done[k] for k in keys]

    def full(self, keys: Sequence[Hashable]) -> list[Rec]:
        """The whole records of ``keys``, in that order, read back from the file."""
        out = []
        with open(self.path, "rb") as handle:
            for key in keys:
                handle.seek(self._offset(key))
                out.append(cast(Rec, unpack(json.loads(handle.readline()))))  # as add() wrote it
        return out


class RowCheckpoint(JsonlCheckpoint[Rec, Held]):
    """A :class:`JsonlCheckpoint` whose keys are ``(name, row)`` (generate's method and input row) and which holds
    nothing of a record in memory: one array of file offsets per name, 8 bytes a row, so a run over a million rows
    stays flat. What a caller needs of the records it reads back (:meth:`full`, :meth:`slims`)."""

    def __init__(
        self,
        path: Path,
        key: Callable[[Rec], tuple[str, int]],
        slim: Callable[[Rec], Held] | None = None,
        *,
        shape: Mapping[str, type | tuple[type, ...]] | None = None,
    ) -> None:
        self._rows: dict[str, array[int]] = {}
        self._count = 0
        super().__init__(path, key, slim, shape=shape)

    def _remember(self, record: Rec, offset: int) -> None:
        name, row = cast(tuple[str, int], self.key(record))
        offsets = self._rows.setdefault(name, array("q"))
        if row >= len(offsets):
            offsets.extend([-1] * max(row + 1 - len(offsets), len(offsets)))  # doubles: amortised growth
        self._count += offsets[row] < 0
        offsets[row] = offset

    def __contains__(self, key: Hashable) -> bool:
        name, row = cast(tuple[str, int], key)
        offsets = self._rows.get(name)
        return offsets is not None and row < len(offsets) and offsets[row] >= 0

    @property
    def done(self) -> dict[Hashable, Held]:
        """Not kept: a caller that reads ``done`` would see nothing; ``key in checkpoint`` and :meth:`slims` read the
        file."""
        raise TypeError("a RowCheckpoint keeps no records in memory: test `key in checkpoint`, read slims(keys)")

    def __len__(self) -> int:
        return self._count

    def _offset(self, key: Hashable) -> int:
        name, row = cast(tuple[str, int], key)
        return self._rows[name][row]

    def slims(self, keys: Sequence[Hashable]) -> list[Held]:
        """``slim(record)`` of each key's record, read back from the file."""
        return [self.slim(record) for record in self.full(keys)]


def text_digest(text: str) -> bytes:
    """16 bytes that stand for ``text`` (BLAKE2b): a chance collision among a billion texts is about 1e-21."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class ScoreRecord(TypedDict):
    """One scored text of ``scores.jsonl``: the text and its probabilities, one per label."""

    text: str
    p: list[float]


class ScoreCheckpoint(JsonlCheckpoint[ScoreRecord, ScoreRecord]):
    """A :class:`JsonlCheckpoint` of classifier probabilities, records ``{"text", "p"}``, that holds no text and no
    index in memory: each text's 16-byte digest and its probabilities go to an SQLite table on the file's disk,
    looked up a batch of texts at a time, so an audit that scores millions of distinct texts keeps flat memory (the
    index grew by 40 bytes a text in memory before: 300 MB at 200,000 texts, the whole of the audit's growth).

    The index is a cache of the file, rebuilt from it on each open: its file is removed as soon as it is open
    (nothing to clean up after a kill, nothing left in the run directory); the last ``MERGE`` texts added wait in a
    dict and go to the table together. What a caller reads: :meth:`missing`, ``text in checkpoint`` and
    :meth:`probabilities`."""

    MERGE = 10_000  # texts added since the last merge wait in a dict (~270 bytes each); then go to the table at once
    _CHUNK = 500  # digests asked of the table in one query

    def __init__(self, path: Path) -> None:
        import sqlite3

        self._pending: dict[bytes, list[float]] = {}
        self._width: int | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        note_written(path)
        index = path.with_name(f".{path.name}.index")
        index.unlink(missing_ok=True)  # a kill left it: the file is the record, the index is rebuilt from it
        self._db = sqlite3.connect(index, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-16384", "temp_store=FILE"):
            self._db.execute(f"PRAGMA {pragma}")  # a cache rebuilt on every open: no journal, no fsync; 16 MiB cache
        self._db.execute("CREATE TABLE scores (digest BLOB PRIMARY KEY, p BLOB NOT NULL) WITHOUT ROWID")
        try:
            index.unlink()  # open, nameless: removed by the system when closed or when the process dies
        except OSError:
            self._unlink_at_close: Path | None = index
        else:
            self._unlink_at_close = None
        super().__init__(path, key=lambda record: record["text"])
        self._merge()

    def _remember(self, record: ScoreRecord, offset: int) -> None:
        if not isinstance(record["text"], str) or not isinstance(record["p"], list) or not record["p"]:
            raise TypeError("a score record is a text and its probabilities")
        if any(isinstance(x, bool) or not isinstance(x, int | float) for x in record["p"]):
            raise TypeError("probabilities are numbers")
        p = [float(x) for x in record["p"]]
        if not all(0.0 <= x <= 1.0 or x != x for x in p):  # NaN: the classifier's per-text "no score", kept
            raise ValueError("a probability outside [0, 1]")
        if self._width is None:
            self._width = len(p)
        elif len(p) != self._width:
            raise ValueError(f"{self.path}: probabilities of {self._width} and of {len(p)} labels")
        self._pending[text_digest(str(record["text"]))] = p
        if len(self._pending) >= self.MERGE:
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        import sqlite3

        rows = [(d, np.asarray(p, dtype=np.float64).tobytes()) for d, p in self._pending.items()]
        try:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?)", rows)
            self._db.execute("COMMIT")
        except sqlite3.Error as err:  # a full disk, the folder gone: what scores.jsonl holds is kept
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise OutputError(
                f"{self.path.parent}: the index of scored texts could not be written ({err}); the scores already in "
                f"{self.path.name} are kept: free space and rerun the same command to resume"
            ) from err
        self._pending = {}

    def _stored(self, digests: Sequence[bytes]) -> dict[bytes, list[float]]:
        """The table's probabilities of those of ``digests`` it holds."""
        out: dict[bytes, list[float]] = {}
        for start in range(0, len(digests), self._CHUNK):
            chunk = digests[start : start + self._CHUNK]
            marks = ",".join("?" * len(chunk))
            for digest, blob in self._db.execute(f"SELECT digest, p FROM scores WHERE digest IN ({marks})", chunk):
                out[bytes(digest)] = np.frombuffer(blob, dtype=np.float64).tolist()
        return out

    def _found(self, texts: Sequence[str]) -> tuple[list[bytes], dict[bytes, list[float]]]:
        digests = [text_digest(t) for t in texts]
        found = {d: self._pending[d] for d in digests if d in self._pending}
        found |= self._stored([d for d in digests if d not in found])
        return digests, found

    def missing(self, texts: Sequence[str]) -> list[str]:
        """Those of ``texts`` not scored yet, in their order."""
        digests, found = self._found(texts)
        return [t for t, d in zip(texts, digests, strict=True) if d not in found]

    def __contains__(self, key: Hashable) -> bool:
        return not self.missing([str(key)])

    @property
    def done(self) -> dict[Hashable, ScoreRecord]:
        """Not kept: the texts are not in memory (:meth:`probabilities` reads them by digest)."""
        raise TypeError("a ScoreCheckpoint keeps no texts in memory: test `text in checkpoint`, read probabilities()")

    def __len__(self) -> int:
        self._merge()
        return int(self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])

    def probabilities(self, texts: Sequence[str]) -> dict[str, list[float]]:
        """Each finished text's probabilities (a ``KeyError`` for one not scored)."""
        digests, found = self._found(texts)
        out = {}
        for text, digest in zip(texts, digests, strict=True):
            if digest not in found:
                raise KeyError(text)
            out[text] = found[digest]
        return out

    def close(self) -> None:
        """The index closed (and its file removed where the system kept its name)."""
        self._db.close()
        if self._unlink_at_close is not None:
            self._unlink_at_close.unlink(missing_ok=True)


class MemorySink(Generic[Rec, Held]):
    """What :class:`JsonlCheckpoint` is to a run directory, in memory (the core's runs): ``done`` holds
    ``slim(record)`` per key, :meth:`full` the whole records."""

    def __init__(self, key: Callable[[Rec], Hashable], slim: Callable[[Rec], Held] | None = None) -> None:
        self.key = key
        self.slim: Callable[[Rec], Held] = slim or _whole
        self.done: dict[Hashable, Held] = {}
        self._records: dict[Hashable, Rec] = {}

    def __contains__(self, key: Hashable) -> bool:
        return key in self.done

    def add(self, records: Sequence[Rec]) -> None:
        for record in records:
            key = self.key(record)
            self._records[key] = record
            self.done[key] = self.slim(record)

    def full(self, keys: Sequence[Hashable]) -> list[Rec]:
        return [self._records[k] for k in keys]

    def slims(self, keys: Sequence[Hashable]) -> list[Held]:
        return [self.done[k] for k in keys]
