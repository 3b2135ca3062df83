"""The run-directory shell: every command's output directory is checked, claimed and written through here.

* :func:`prepare_out_dir` — one check for every command, before any work: the directory can be created and written
  (not a file, not under a file, not on a read-only or full file system); otherwise an :class:`OutputError` that
  names the path and the reason.
* the one run identity is :func:`counterfair.records.run_identity` / :func:`~counterfair.records.fingerprint` (an
  options dataclass's fields less those its metadata marks: a :func:`~counterfair.records.knob`, a field that does not
  ``apply``, one added ``later`` while at its default); the classifier's identity joins it in :func:`claim_run_dir`.
* :func:`claim_run_dir` — ``run.json`` records what identifies a run; a rerun with the same identity resumes, a
  different one is refused.
* :func:`lock_run_dir` / :func:`release_run_dir` — one run per directory at a time: a second process that claims a
  directory in use is refused, naming the holder's pid. The lock is the kernel's (``flock`` on ``DIR/.lock``), so it
  ends with the process that holds it: a killed run leaves no stale lock behind. (POSIX only; elsewhere no lock.)
* :func:`writing` — turns an ``OSError`` raised while a command writes its outputs (a full disk) into an
  :class:`OutputError` that says what was kept and how to resume.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

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


_HELD: dict[str, int] = {}  # run directories this process holds: resolved path -> the lock file's descriptor


def lock_run_dir(target: Path) -> None:
    """Hold ``target/.lock`` for this process (again: a no-op); refuse if another process holds it."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return
    key = str(Path(target).resolve())
    if key in _HELD:
        return
    fd = os.open(Path(target) / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip() or "unknown"
        os.close(fd)
        raise ConfigError(
            f"{target} is in use by another counterfair run (pid {holder}); wait for it to finish, or choose another "
            "--out"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = fd


_OVERWRITE: set[str] = set()  # run directories whose next claim replaces the run there (--overwrite)


def allow_overwrite(path: str | Path) -> Path:
    """``--overwrite``: the next :func:`claim_run_dir` of ``path`` replaces the run there instead of resuming or
    refusing it. Nothing is deleted now, so a run that stops earlier (bad input, a missing extra) loses nothing; a
    directory with files but no ``run.json`` (not written by counterfair) is refused at once."""
    target = Path(path).expanduser()
    if target.is_dir() and not (target / "run.json").is_file() and any(p.name != ".lock" for p in target.iterdir()):
        raise OutputError(
            f"--overwrite refuses to empty {target}: it holds files but no run.json, so counterfair did not write it"
        )
    _OVERWRITE.add(str(target.resolve()))
    return target


def _empty_run_dir(target: Path) -> None:
    """Delete everything in a run directory this process holds, but its lock."""
    import shutil

    for entry in target.iterdir():
        if entry.name == ".lock":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def release_run_dir(target: Path) -> None:
    """Give up the lock of :func:`lock_run_dir` (the process's end does the same)."""
    fd = _HELD.pop(str(Path(target).resolve()), None)
    if fd is not None:
        os.close(fd)  # closing the descriptor releases the flock


P = ParamSpec("P")
R = TypeVar("R")


def holds_run_dir(shell: Callable[P, R]) -> Callable[P, R]:
    """For a shell ``f(source, out_dir, ...)``: release ``out_dir``'s lock when ``f`` returns or raises."""

    @functools.wraps(shell)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return shell(*args, **kwargs)
        finally:
            out_dir = kwargs.get("out_dir", args[1] if len(args) > 1 else None)
            if isinstance(out_dir, str | Path):
                release_run_dir(Path(out_dir))

    return wrapper


def claim_run_dir(
    target: Path,
    run_id: Mapping[str, Any],
    extra: Mapping[str, Any],
    *,
    what: str = "run",
    classifier: Any = None,
) -> None:
    """Create ``target/run.json`` for a new run, or check that the one there describes the same run.

    ``run_id`` holds the fields that must match (options fingerprint, input hash, the classifier's identity);
    ``extra`` is recorded beside them for people reading the directory (``options``: the full options, the input's
    path) but not compared. A mismatch is refused with a message that names what differs, down to the options.
    With ``classifier``, its identity joins ``run_id`` (and its signature ``extra``); a classifier whose identity
    cannot be pinned runs once, but such a directory cannot be resumed."""
    if classifier is not None:
        signature = classifier.signature()
        run_id = {**run_id, "classifier": classifier.identity()}
        extra = {
            **extra,
            "classifier_signature": signature,
            "classifier_unstable_reason": signature.get("unstable_reason"),
        }
    prepare_out_dir(target)
    lock_run_dir(target)
    key = str(Path(target).resolve())
    if key in _OVERWRITE:
        _OVERWRITE.discard(key)
        if (target / "run.json").is_file():
            _empty_run_dir(target)  # --overwrite: only now, once this run's input and options have been checked
    run_file = target / "run.json"
    if not run_file.exists():
        write_json({**run_id, **extra, "kind": what}, run_file)
        return
    previous = json.loads(run_file.read_text(encoding="utf-8"))
    held = previous.get("kind", what)  # directories from before runs recorded their kind: taken as this kind
    if held != what:
        raise ConfigError(
            f"{target} holds {'an' if held[:1] in 'aeiou' else 'a'} {held}, not {'an' if what[:1] in 'aeiou' else 'a'} "
            f"{what}; choose another --out, or pass --overwrite to replace it"
        )
    unpinned = run_id.get("classifier", "") is None or ("classifier" in previous and previous["classifier"] is None)
    if "classifier" in run_id and unpinned:
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
            old, new = previous["options"], json.loads(json.dumps(extra["options"], default=str))  # as stored
            changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            listed = ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in changed)
            names.append(f"options ({listed})" if listed else "options")
        else:
            names.append({"input_sha256": "input data", "options_fingerprint": "options"}.get(key, key))
    article = "an" if what[:1] in "aeiou" else "a"
    raise ConfigError(
        f"{target} holds {article} {what} that differs in: {'; '.join(names)}; rerun it with the same ones, "
        "choose a new --out, or pass --overwrite to replace it"
    )


@contextlib.contextmanager
def writing(path: Path, *, kept: str) -> Iterator[None]:
    """Within the block, an ``OSError`` while writing ``path`` becomes an :class:`OutputError` saying ``kept``."""
    try:
        yield
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}; {kept}") from err
