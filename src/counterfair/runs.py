"""The run-directory shell: every command's output directory is checked, claimed and written through here.

* :func:`prepare_out_dir` — one check for every command, before any work: the directory can be created and written
  (not a file, not under a file, not on a read-only or full file system); otherwise an :class:`OutputError` that
  names the path and the reason.
* :func:`claim_run_dir` — ``run.json`` records what identifies a run; a rerun with the same identity resumes, a
  different one is refused.
* :func:`writing` — turns an ``OSError`` raised while a command writes its outputs (a full disk) into an
  :class:`OutputError` that says what was kept and how to resume.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError, OutputError
from .io import write_json


def prepare_out_dir(path: str | Path, *, option: str = "--out") -> Path:
    """Create ``path`` if needed and check that files can be written in it; returns it as a ``Path``."""
    target = Path(path).expanduser()
    if target.exists() and not target.is_dir():
        raise OutputError(f"cannot use {target} as the output directory: it is a file (choose another {option})")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"cannot create the output directory {target}: {parent} is a file, not a directory")
            break
    try:
        target.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=target)
        try:
            os.write(fd, b"counterfair")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as err:
        raise OutputError(
            f"cannot write in the output directory {target}: {err.strerror or err} "
            f"(choose another {option}, or fix its permissions or free space)"
        ) from err
    return target


def claim_run_dir(target: Path, run_id: Mapping[str, Any], extra: Mapping[str, Any], *, what: str = "run") -> None:
    """Create ``target/run.json`` for a new run, or check that the one there describes the same run.

    ``run_id`` holds the fields that must match (options fingerprint, input hash, the classifier's identity);
    ``extra`` is recorded beside them for people reading the directory (``options``: the full options, the input's
    path) but not compared. A mismatch is refused with a message that names what differs, down to the options.
    A ``classifier`` of ``None`` is a classifier whose identity cannot be pinned: such a run cannot be resumed."""
    prepare_out_dir(target)
    run_file = target / "run.json"
    if not run_file.exists():
        write_json({**run_id, **extra}, run_file)
        return
    previous = json.loads(run_file.read_text(encoding="utf-8"))
    if "classifier" in run_id and (run_id["classifier"] is None or previous.get("classifier") is None):
        reason = extra.get("classifier_unstable_reason") or previous.get("classifier_unstable_reason")
        raise ConfigError(
            f"{target} holds a run ({what}), and the classifier's identity cannot be pinned down ({reason}), so it "
            "cannot be resumed or checked against this one; choose a new --out"
        )
    differs = [key for key in run_id if previous.get(key) != run_id[key]]
    if not differs:
        return
    names = []
    for key in differs:
        if key.startswith("options") and isinstance(previous.get("options"), dict) and "options" in extra:
            old, new = previous["options"], extra["options"]
            changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            names.append("options (" + ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in changed) + ")")
        else:
            names.append({"input_sha256": "input data", "options_fingerprint": "options"}.get(key, key))
    article = "an" if what[:1] in "aeiou" else "a"
    raise ConfigError(
        f"{target} holds {article} {what} that differs in: {'; '.join(names)}; rerun it with the same ones, or "
        "choose a new --out"
    )


@contextlib.contextmanager
def writing(path: Path, *, kept: str) -> Iterator[None]:
    """Within the block, an ``OSError`` while writing ``path`` becomes an :class:`OutputError` saying ``kept``."""
    try:
        yield
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}; {kept}") from err
