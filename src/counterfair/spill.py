"""What a long run tallies, kept on disk while it grows (#47: an audit of 200,000 texts adds 9.5 million pairs' numbers
block by block, and reads each tally once at the end): pieces of arrays and whole objects appended to one anonymous
scratch file, read back when the statistics need them. The file has no name (the system removes it when it is closed
or the process ends, killed or not): a command puts it beside its outputs (the run directory's disk, which holds the
pairs table anyway: not ``/tmp``, which may be memory), where it never shows."""

from __future__ import annotations

import io
import pickle
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

import numpy as np

from .errors import OutputError

#: pieces smaller than this are gathered in memory and written together (a handle costs about 100 bytes)
SPILL_BYTES = 4096

T = TypeVar("T")


@dataclass(frozen=True)
class Spilled:
    """Where one array lies in a scratch file (any log holding the piece reads it from there)."""

    scratch: Scratch
    offset: int
    dtype: np.dtype[Any]
    size: int

    def read(self, out: np.ndarray | None = None) -> np.ndarray:
        return self.scratch.get(self, out)


class Scratch:
    """One anonymous temporary file in ``directory`` (default: the system's temporary folder) that arrays and objects
    are appended to; :meth:`close` (or the end of the process) removes it. Opened on the first piece written."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = directory
        self._file: io.FileIO | None = None
        self._end = 0

    def _write(self, data: bytes | memoryview) -> int:
        view = memoryview(data).cast("B")
        offset = self._end
        try:
            if self._file is None:  # unbuffered: each piece goes to the system's page cache, none kept here
                self._file = tempfile.TemporaryFile(prefix=".counterfair-tally-", dir=self.directory, buffering=0)  # noqa: SIM115 - lives as long as the scratch
            self._file.seek(offset)
            done = 0
            while done < len(view):  # a raw write may take part of the bytes
                done += self._file.write(view[done:]) or 0
        except OSError as err:  # a full disk: said, with where, not a bare traceback
            where = self.directory or tempfile.gettempdir()
            raise OutputError(
                f"cannot write the statistics' scratch file in {where} ({self._end:,} bytes written): "
                f"{err.strerror or err}; make room there and run the same command again (finished work is kept)"
            ) from err
        self._end += len(view)
        return offset

    def _read(self, offset: int, into: memoryview) -> None:
        if self._file is None:
            raise ValueError("the scratch file is closed")
        self._file.seek(offset)
        done = 0
        while done < len(into):
            got = self._file.readinto(into[done:])
            if not got:
                raise OSError("the scratch file ended early")
            done += got

    def put(self, array: np.ndarray) -> Spilled:
        data = np.ascontiguousarray(array).ravel()
        return Spilled(self, self._write(data.data), data.dtype, data.size)

    def get(self, piece: Spilled, out: np.ndarray | None = None) -> np.ndarray:
        """The piece's values, read into ``out`` (contiguous, its dtype) where given."""
        target = np.empty(piece.size, dtype=piece.dtype) if out is None else out
        if piece.size:
            self._read(piece.offset, target.data.cast("B"))
        return target

    def put_object(self, value: Any) -> tuple[int, int]:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        return self._write(data), len(data)

    def get_object(self, where: tuple[int, int]) -> Any:
        data = bytearray(where[1])
        self._read(where[0], memoryview(data))
        return pickle.loads(data)  # the process's own scratch file, written just before

    @property
    def bytes_written(self) -> int:
        return self._end

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        """Closed however the block ends: a run that raises midway gives its disk space back at once (not when its
        tallies are collected)."""
        self.close()


Piece = np.ndarray | Spilled


class ArrayLog:
    """Arrays appended one block at a time and read back as one: in memory without a :class:`Scratch`, else written
    to it as they come — a piece of :data:`SPILL_BYTES` or more at once, smaller ones gathered in memory and written
    together once they reach that size (a tally keeps a few bytes per block in hundreds of logs: kept, they grow
    with the run). A piece may be another log's (the same numbers kept once)."""

    def __init__(self, scratch: Scratch | None = None) -> None:
        self.scratch = scratch
        self.pieces: list[Piece] = []
        self._pending: list[np.ndarray] = []  # small pieces not yet written, in order after ``pieces``
        self._pending_bytes = 0
        self.last: Piece | None = None  # the piece just appended, as kept (another log may share it)

    def append(self, piece: Piece) -> None:
        if self.scratch is not None and isinstance(piece, np.ndarray):
            if piece.nbytes < SPILL_BYTES:
                kept = np.ravel(piece).copy()  # its own bytes: a view would hold its whole base
                self._pending.append(kept)
                self._pending_bytes += kept.nbytes
                self.last = kept
                if self._pending_bytes >= SPILL_BYTES:
                    self._flush()
                return
            piece = self.scratch.put(piece)
        self._flush()  # the pieces stay in order
        self.pieces.append(piece)
        self.last = piece

    def _flush(self) -> None:
        """The small pieces gathered so far, written as one."""
        if self._pending and self.scratch is not None:
            joined = self._pending[0] if len(self._pending) == 1 else np.concatenate(self._pending)
            self.pieces.append(self.scratch.put(joined))
            self._pending, self._pending_bytes = [], 0

    def __len__(self) -> int:
        """The pieces kept (gathered small ones count as one once written)."""
        return len(self.pieces) + len(self._pending)

    @property
    def size(self) -> int:
        return int(sum(p.size for p in self.pieces) + sum(p.size for p in self._pending))

    def concatenate(self, empty: np.ndarray | None = None) -> np.ndarray:
        """Every piece in order as one array (``np.concatenate``'s values and dtype); ``empty`` when there is none."""
        pieces = [*self.pieces, *self._pending]
        if not pieces:
            return np.zeros(0) if empty is None else empty
        dtype = np.result_type(*(p.dtype for p in pieces))
        out = np.empty(self.size, dtype=dtype)
        at = 0
        for piece in pieces:
            end = at + piece.size
            if isinstance(piece, np.ndarray):
                out[at:end] = piece.ravel()
            elif piece.dtype == dtype:
                piece.read(out[at:end])
            else:
                out[at:end] = piece.read()
            at = end
        return out


class ObjectLog(Sequence[T], Generic[T]):
    """Objects appended one block at a time (pickled to a :class:`Scratch` where given, else kept) and read back one
    at a time, in order, as often as asked."""

    def __init__(self, scratch: Scratch | None = None) -> None:
        self.scratch = scratch
        self._items: list[Any] = []

    def append(self, value: T) -> None:
        self._items.append(value if self.scratch is None else self.scratch.put_object(value))

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        item = self._items[index]
        return item if self.scratch is None else self.scratch.get_object(item)  # type: ignore[no-any-return]
