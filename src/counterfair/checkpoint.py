"""Resumable run directories: one definition shared by generate, audit and feedback.

A run directory holds ``run.json`` (what identifies the run: an options fingerprint and the input's hash) and
``.work/done.jsonl`` (one JSON record per finished unit of work, appended and flushed as each unit finishes).
A rerun with the same directory, options and input skips what is already recorded; a different run in the same
directory is refused rather than mixed in. A record cut off mid-line by a kill is dropped and redone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .io import write_json


def claim_run_dir(target: Path, run_id: Mapping[str, Any], extra: Mapping[str, Any], *, what: str = "run") -> None:
    """Create ``target/run.json`` for a new run, or check that the one there describes the same run.

    ``run_id`` holds the fields that must match (options fingerprint, input hash); ``extra`` is recorded beside them
    for people reading the directory (full options, input path) but not compared."""
    target.mkdir(parents=True, exist_ok=True)
    run_file = target / "run.json"
    if run_file.exists():
        previous = json.loads(run_file.read_text(encoding="utf-8"))
        if {k: previous.get(k) for k in run_id} != dict(run_id):
            raise ConfigError(
                f"{target} holds a {what} with other options or another input; rerun it with the same ones, "
                "or choose a new --out"
            )
    else:
        write_json({**run_id, **extra}, run_file)


class JsonlCheckpoint:
    """Append-only JSONL of finished records, indexed by ``key(record)``; tolerant of a torn last line.

    ``slim`` picks what of each record stays in memory (``done``); the whole record is read back from the file on
    demand (:meth:`full`), so a run whose records are large (every candidate of every input) keeps only a small
    part of them in memory."""

    def __init__(
        self,
        path: Path,
        key: Callable[[dict[str, Any]], Hashable],
        slim: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.path = path
        self.key = key
        self.slim = slim or (lambda record: record)
        self.done: dict[Hashable, dict[str, Any]] = {}
        self._offsets: dict[Hashable, int] = {}
        if path.exists():
            raw = path.read_bytes()
            offset = 0
            for line in raw.splitlines(keepends=True):
                if not line.endswith(b"\n"):
                    break  # a write cut off mid-line: that unit is redone
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    break
                self._remember(record, offset)
                offset += len(line)
            if offset != len(raw):
                with open(path, "r+b") as handle:
                    handle.truncate(offset)
        path.parent.mkdir(parents=True, exist_ok=True)

    def _remember(self, record: dict[str, Any], offset: int) -> None:
        key = self.key(record)
        self.done[key] = self.slim(record)
        self._offsets[key] = offset

    def __contains__(self, key: Hashable) -> bool:
        return key in self.done

    def add(self, records: Sequence[dict[str, Any]]) -> None:
        with open(self.path, "ab") as handle:
            for record in records:
                offset = handle.tell()
                handle.write((json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8"))
                self._remember(record, offset)
            handle.flush()

    def full(self, keys: Sequence[Hashable]) -> list[dict[str, Any]]:
        """The whole records of ``keys``, in that order, read back from the file."""
        out = []
        with open(self.path, "rb") as handle:
            for key in keys:
                handle.seek(self._offsets[key])
                out.append(json.loads(handle.readline()))
        return out
