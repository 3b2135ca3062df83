"""Resumable run directories: one definition shared by generate, audit and feedback.

A run directory holds ``run.json`` (what identifies the run: an options fingerprint and the input's hash) and
``.work/done.jsonl`` (one JSON record per finished unit of work, appended and flushed as each unit finishes).
A rerun with the same directory, options and input skips what is already recorded; a different run in the same
directory is refused rather than mixed in. A record cut off mid-line by a kill is dropped and redone.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from .runs import claim_run_dir, writing

__all__ = ["JsonlCheckpoint", "MemorySink", "RowCheckpoint", "ScoreCheckpoint", "claim_run_dir", "pack", "unpack"]

#: the key under which :func:`pack` stores a list of records as one table
TABLE = "__table__"


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # 1, 1.0 and True are different cells


def pack(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with each list of two or more dicts that share their keys (a unit's candidates) written as one
    table: the keys once, the values every row shares once, the rest row by row. Lossless (:func:`unpack`); an
    identity swap's 49 candidates of 21 fields shrink to about a third."""
    out: dict[str, Any] = {}
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


def unpack(record: dict[str, Any]) -> dict[str, Any]:
    """The record :func:`pack` was given (records written before packing come back as they are)."""
    out: dict[str, Any] = {}
    for name, value in record.items():
        if isinstance(value, dict) and TABLE in value and len(value) == 1:
            table = value[TABLE]
            keys, same = table["keys"], table["same"]
            at = {k: i for i, k in enumerate(k for k in keys if k not in same)}
            out[name] = [{k: same[k] if k in same else row[at[k]] for k in keys} for row in table["rows"]]
            continue
        out[name] = value
    return out


class JsonlCheckpoint:
    """Append-only JSONL of finished records, indexed by ``key(record)``; tolerant of a torn last line.

    ``slim`` picks what of each record stays in memory (``done``); the whole record is read back from the file on
    demand (:meth:`full`), so a run whose records are large (every candidate of every input) keeps only a small
    part of them in memory."""

    def __init__(
        self,
        path: Path,
        key: Callable[[dict[str, Any]], Hashable],
        slim: Callable[[Any], Any] | None = None,
    ) -> None:
        self.path = path
        self.key = key
        self.slim = slim or (lambda record: record)
        self._done: dict[Hashable, dict[str, Any]] = {}
        self._offsets: dict[Hashable, int] = {}
        if path.exists():
            offset = 0
            with open(path, "rb") as handle:  # line by line: a large checkpoint is never held whole
                for line in handle:
                    if not line.endswith(b"\n"):
                        break  # a write cut off mid-line: that unit is redone
                    try:
                        record = unpack(json.loads(line))
                    except (json.JSONDecodeError, KeyError, TypeError, IndexError):
                        break  # a damaged record: it and what follows are redone
                    self._remember(record, offset)
                    offset += len(line)
            if offset != path.stat().st_size:
                with open(path, "r+b") as handle:
                    handle.truncate(offset)
        path.parent.mkdir(parents=True, exist_ok=True)

    def _remember(self, record: dict[str, Any], offset: int) -> None:
        key = self.key(record)
        self._done[key] = self.slim(record)
        self._offsets[key] = offset

    def __contains__(self, key: Hashable) -> bool:
        return key in self._done

    @property
    def done(self) -> dict[Hashable, dict[str, Any]]:
        """``slim(record)`` of every finished unit, by key."""
        return self._done

    def __len__(self) -> int:
        return len(self._offsets)

    def _offset(self, key: Hashable) -> int:
        return self._offsets[key]

    def add(self, records: Sequence[dict[str, Any]]) -> None:
        kept = f"the {len(self)} units finished before are kept; free space and rerun the same command to resume"
        with writing(self.path, kept=kept), open(self.path, "ab") as handle:
            staged = []
            for record in records:
                staged.append((record, handle.tell()))
                handle.write((json.dumps(pack(record), ensure_ascii=False, default=str) + "\n").encode("utf-8"))
            handle.flush()
        for record, offset in staged:  # only records that reached the file count as done
            self._remember(record, offset)

    def slims(self, keys: Sequence[Hashable]) -> list[dict[str, Any]]:
        """``slim(record)`` of each key's record, as held in memory."""
        return [self._done[k] for k in keys]

    def full(self, keys: Sequence[Hashable]) -> list[dict[str, Any]]:
        """The whole records of ``keys``, in that order, read back from the file."""
        out = []
        with open(self.path, "rb") as handle:
            for key in keys:
                handle.seek(self._offset(key))
                out.append(unpack(json.loads(handle.readline())))
        return out


class RowCheckpoint(JsonlCheckpoint):
    """A :class:`JsonlCheckpoint` whose keys are ``(name, row)`` (generate's method and input row) and which holds
    nothing of a record in memory: one array of file offsets per name, 8 bytes a row, so a run over a million rows
    stays flat. What a caller needs of the records it reads back (:meth:`full`, :meth:`slims`)."""

    def __init__(
        self,
        path: Path,
        key: Callable[[dict[str, Any]], tuple[str, int]],
        slim: Callable[[Any], Any] | None = None,
    ) -> None:
        self._rows: dict[str, array[int]] = {}
        self._count = 0
        super().__init__(path, key, slim)

    def _remember(self, record: dict[str, Any], offset: int) -> None:
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
    def done(self) -> dict[Hashable, dict[str, Any]]:
        """Not kept: a caller that reads ``done`` would see nothing; ``key in checkpoint`` and :meth:`slims` read the
        file."""
        raise TypeError("a RowCheckpoint keeps no records in memory: test `key in checkpoint`, read slims(keys)")

    def __len__(self) -> int:
        return self._count

    def _offset(self, key: Hashable) -> int:
        name, row = cast(tuple[str, int], key)
        return self._rows[name][row]

    def slims(self, keys: Sequence[Hashable]) -> list[dict[str, Any]]:
        """``slim(record)`` of each key's record, read back from the file."""
        return [self.slim(record) for record in self.full(keys)]


def text_digest(text: str) -> bytes:
    """16 bytes that stand for ``text`` (BLAKE2b): a chance collision among a billion texts is about 1e-21."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class ScoreCheckpoint(JsonlCheckpoint):
    """A :class:`JsonlCheckpoint` of classifier probabilities, records ``{"text", "p"}``, that holds no text in
    memory: each text's 16-byte digest (sorted, searched) and its probabilities, about 40 bytes a text, so an audit
    that scores millions of distinct texts stays flat. What a caller reads: ``text in checkpoint`` and
    :meth:`probabilities`."""

    MERGE = 50_000  # texts added since the last merge are looked up in a dict; this many are merged into the arrays

    def __init__(self, path: Path) -> None:
        self._digests = np.empty(0, dtype="S16")
        self._probs = np.empty((0, 0), dtype=float)
        self._pending: dict[bytes, list[float]] = {}
        super().__init__(path, key=lambda record: record["text"])
        self._merge()

    def _remember(self, record: dict[str, Any], offset: int) -> None:
        self._pending[text_digest(str(record["text"]))] = [float(x) for x in record["p"]]
        if len(self._pending) >= self.MERGE:
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        digests = np.array(list(self._pending), dtype="S16")
        width = len(next(iter(self._pending.values())))
        probs = np.array(list(self._pending.values()), dtype=float).reshape(len(digests), width)
        if len(self._digests) and self._probs.shape[1] != width:
            raise ValueError(f"{self.path}: probabilities of {self._probs.shape[1]} and of {width} labels")
        order = np.argsort(digests, kind="stable")
        at = np.searchsorted(self._digests, digests[order])
        self._digests = np.insert(self._digests, at, digests[order])
        self._probs = np.insert(self._probs.reshape(-1, width), at, probs[order], axis=0)
        self._pending = {}

    def _row(self, digest: bytes) -> int:
        key = np.array([digest], dtype="S16")[0]  # as numpy holds it: a digest's trailing zero bytes are not kept
        at = int(np.searchsorted(self._digests, key))
        return at if at < len(self._digests) and self._digests[at] == key else -1

    def __contains__(self, key: Hashable) -> bool:
        digest = text_digest(str(key))
        return digest in self._pending or self._row(digest) >= 0

    @property
    def done(self) -> dict[Hashable, dict[str, Any]]:
        """Not kept: the texts are not in memory (:meth:`probabilities` reads them by digest)."""
        raise TypeError("a ScoreCheckpoint keeps no texts in memory: test `text in checkpoint`, read probabilities()")

    def __len__(self) -> int:
        return len(self._digests) + len(self._pending)

    def probabilities(self, texts: Sequence[str]) -> dict[str, list[float]]:
        """Each finished text's probabilities (a ``KeyError`` for one not scored)."""
        out = {}
        for text in texts:
            digest = text_digest(text)
            found = self._pending.get(digest)
            if found is None:
                row = self._row(digest)
                if row < 0:
                    raise KeyError(text)
                found = self._probs[row].tolist()
            out[text] = found
        return out


class MemorySink:
    """What :class:`JsonlCheckpoint` is to a run directory, in memory (the core's runs): ``done`` holds
    ``slim(record)`` per key, :meth:`full` the whole records."""

    def __init__(self, key: Callable[[dict[str, Any]], Hashable], slim: Callable[[Any], Any] | None = None) -> None:
        self.key = key
        self.slim = slim or (lambda record: record)
        self.done: dict[Hashable, dict[str, Any]] = {}
        self._records: dict[Hashable, dict[str, Any]] = {}

    def __contains__(self, key: Hashable) -> bool:
        return key in self.done

    def add(self, records: Sequence[dict[str, Any]]) -> None:
        for record in records:
            key = self.key(record)
            self._records[key] = record
            self.done[key] = self.slim(record)

    def full(self, keys: Sequence[Hashable]) -> list[dict[str, Any]]:
        return [self._records[k] for k in keys]

    def slims(self, keys: Sequence[Hashable]) -> list[dict[str, Any]]:
        return [self.done[k] for k in keys]
