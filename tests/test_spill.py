"""The scratch file that long runs keep their tallies in (#47): what goes in comes back, value for value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.spill import SPILL_BYTES, ArrayLog, ObjectLog, Scratch, Spilled


def test_an_array_log_on_disk_gives_what_concatenating_its_pieces_gives() -> None:
    rng = np.random.default_rng(4)
    big = rng.normal(size=SPILL_BYTES)  # 8 bytes each: spilled
    small = rng.normal(size=3)  # gathered in memory until written with the next piece
    codes16, codes32 = np.arange(5000, dtype=np.int16), np.arange(-3, 2000, dtype=np.int32)
    table = np.asfortranarray(rng.normal(size=(700, 3)))  # a frame's to_numpy(): column-major
    scratch = Scratch()
    floats, ints, rows = ArrayLog(scratch), ArrayLog(scratch), ArrayLog(scratch)
    for piece in (big, small, big[::-1]):
        floats.append(piece)
    ints.append(codes16)
    ints.append(codes32)
    rows.append(table)
    assert [type(p) for p in floats.pieces] == [Spilled, Spilled, Spilled] and len(floats) == 3
    joined = floats.concatenate()
    assert np.array_equal(joined, np.concatenate([big, small, big[::-1]])) and joined.dtype == np.float64
    both = ints.concatenate()
    assert both.dtype == np.int32 and np.array_equal(both, np.concatenate([codes16, codes32]))
    assert np.array_equal(rows.concatenate().reshape(-1, 3), table)
    shared = ArrayLog(scratch)
    shared.append(floats.pieces[0])  # another log's piece: the same numbers, written once
    assert floats.last is floats.pieces[2]
    assert np.array_equal(shared.concatenate(), big) and floats.size == 2 * big.size + 3
    assert [p.size for p in floats.pieces] == [big.size, 3, big.size]
    other = ArrayLog()  # a log without a scratch file of its own reads a piece from the file it lies in
    other.append(floats.pieces[2])
    assert np.array_equal(other.concatenate(), big[::-1])
    assert ArrayLog(scratch).concatenate(np.empty(0, np.int8)).dtype == np.int8
    written = scratch.bytes_written
    assert written == big.nbytes * 2 + small.nbytes + codes16.nbytes + codes32.nbytes + table.nbytes
    scratch.close()
    with pytest.raises(ValueError, match="closed"):
        floats.concatenate()


def test_an_array_log_gathers_small_pieces_and_writes_them_together() -> None:
    """A tally appends a few hundred bytes per block to each of hundreds of logs: kept one by one, they grew with the
    run (#47: an audit's memory rose ~0.4 MB a block). Gathered, a log holds under SPILL_BYTES in memory."""
    rng = np.random.default_rng(7)
    pieces = [rng.normal(size=int(n)) for n in rng.integers(1, 120, size=400)]  # under 1 KiB each
    scratch = Scratch()
    log = ArrayLog(scratch)
    for piece in pieces:
        log.append(piece)
        assert sum(p.nbytes for p in log._pending) < SPILL_BYTES  # what waits in memory stays small
    assert all(isinstance(p, Spilled) for p in log.pieces) and len(log.pieces) < len(pieces) // 5
    assert np.array_equal(log.concatenate(), np.concatenate(pieces)) and log.size == sum(p.size for p in pieces)
    assert np.array_equal(log.last, pieces[-1])
    view = np.arange(100_000.0)[:10]  # a small view of a large array: its own bytes kept, not the base
    log.append(view)
    assert log._pending[-1].base is None
    scratch.close()


def test_an_array_log_without_scratch_keeps_its_pieces() -> None:
    log = ArrayLog()
    log.append(np.arange(10_000.0))
    assert isinstance(log.pieces[0], np.ndarray) and np.array_equal(log.concatenate(), np.arange(10_000.0))


def test_an_object_log_reads_each_object_back_as_often_as_asked() -> None:
    frames = [
        pd.DataFrame({"a": [i, i + 1.5]}, index=pd.MultiIndex.from_tuples([("x", i), ("y", i)])) for i in range(4)
    ]
    log: ObjectLog[pd.DataFrame] = ObjectLog(Scratch())
    for frame in frames:
        log.append(frame)
    assert len(log) == 4 and all(a.equals(b) for a, b in zip(log, frames, strict=True))
    assert all(a.equals(b) for a, b in zip(log, frames, strict=True))  # a second pass reads them again
    assert log[-1].equals(frames[-1]) and [f["a"].iloc[0] for f in log[1:3]] == [1, 2]
    kept: ObjectLog[pd.DataFrame] = ObjectLog()
    kept.append(frames[0])
    assert kept[0] is frames[0]


def test_a_scratch_file_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk (or a folder gone) while a run keeps its tallies: an OutputError naming the folder and what to do,
    not a bare traceback."""
    import errno

    from counterfair.errors import OutputError

    with pytest.raises(OutputError, match=r"scratch file in .*gone.*make room there"):
        Scratch(tmp_path / "gone").put(np.zeros(10))
    scratch = Scratch(tmp_path)
    scratch.put(np.zeros(10))

    class Full:
        def seek(self, at: int) -> int:
            return at

        def write(self, data: object) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(scratch, "_file", Full())
    with pytest.raises(OutputError, match=r"No space left on device.*\(finished work is kept\)"):
        scratch.put(np.zeros(10))
