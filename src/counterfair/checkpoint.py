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
    """Append-only JSONL of finished records, indexed by ``key(record)``; tolerant of a torn last line."""

    def __init__(self, path: Path, key: Callable[[dict[str, Any]], Hashable]) -> None:
        self.path = path
        self.key = key
        self.done: dict[Hashable, dict[str, Any]] = {}
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            good = []
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    break  # a write cut off mid-line: that unit is redone
                self.done[key(record)] = record
                good.append(line)
            if len(good) != len(lines):
                path.write_text("".join(g + "\n" for g in good), encoding="utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.done

    def add(self, records: Sequence[dict[str, Any]]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
                self.done[self.key(record)] = record
            handle.flush()
