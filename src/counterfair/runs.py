"""The run-directory shell: every command's output directory is checked, claimed and written through here.

* :func:`prepare_out_dir` — one check for every command, before any work: the directory can be created and written
  (not a file, not under a file, not on a read-only or full file system); otherwise an :class:`OutputError` that
  names the path and the reason. :func:`prepare_run_dir` adds, for a command's run: the folder is new, empty or one
  of counterfair's runs (never a folder of the user's files).
* counterfair deletes only what it wrote: run.json's ``files`` lists the run's entries (:func:`record_files`, when
  the shell returns) and ``--overwrite`` removes only those (:func:`allow_overwrite`).
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
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from .errors import ConfigError, OutputError
from .writing import watch_writes, write_json, written_in

if TYPE_CHECKING:
    import pandas as pd

#: the top-level names counterfair's commands write into a run directory: what ``--overwrite`` may remove from a run
#: made before run.json listed its own files (``files``)
KNOWN_OUTPUTS = frozenset(  # those of the commands that claim a run directory (audit, generate, ctf, bias, ...)
    ".work candidates.csv counterfactuals.csv distance_matrix.csv generate llm_judgements.jsonl pairs.csv plots "
    "report.html report.md responses.csv responses.jsonl rows.csv scores.jsonl slots.csv steps.csv summary.json "
    "text_quality.jsonl pairs.parquet slots.parquet responses.parquet".split()
)
#: where ``--overwrite`` sets the run it replaces aside until the new run has begun (:func:`claim_run_dir`)
REPLACED = ".replaced"
_OWN = (".lock", "run.json", REPLACED)  # a run directory's own bookkeeping
#: counterfair's mark on the run.json it writes
MARK = {"written_by": "counterfair"}


def is_counterfair_run(path: str | Path) -> bool:
    """Whether ``path`` holds a run.json that counterfair wrote: a JSON object with counterfair's mark (:data:`MARK`),
    or one from before the mark (a run's options fingerprint beside its schema version, or a saved result's
    counterfair version). Another tool's run.json — one with a ``"kind"`` of its own — is not a run of counterfair's."""
    run_file = Path(path) / "run.json"
    try:
        data = json.loads(run_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    return (
        data.get("written_by") == MARK["written_by"]
        or ("options_fingerprint" in data and "schema_version" in data)
        or "counterfair_version" in data
    )


def check_run_dir(path: str | Path, *, option: str = "--out") -> None:
    """Refuse an output folder that holds files counterfair did not write: a run goes into a new or empty folder, or
    one of counterfair's own runs (to resume or, with ``--overwrite``, replace it) — never among a user's files."""
    target = Path(path).expanduser()
    if not target.is_dir():
        return
    _restore_replaced(target)  # a run killed while it set the run it replaced aside: that run is back
    entries = sorted(p.name for p in target.iterdir() if p.name != ".lock")
    if not entries or is_counterfair_run(target):
        return
    shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
    why = "a run.json that is not counterfair's" if "run.json" in entries else "no run.json"
    raise OutputError(
        f"{option} {target} holds files that counterfair did not write ({shown}; {why}): a run goes into a new or "
        f"empty folder, or one of counterfair's own runs; choose another {option}, e.g. {target / 'counterfair-run'}"
    )


def prepare_run_dir(path: str | Path, *, option: str = "--out") -> Path:
    """:func:`check_run_dir`, then :func:`prepare_out_dir`: a command's run directory, checked before any work."""
    check_run_dir(path, option=option)
    return prepare_out_dir(path, option=option)


def prepare_save_dir(path: str | Path, *, what: str) -> tuple[Path, set[str]]:
    """The folder a result's ``save()`` writes into, checked as a run's ``--out`` is (new, empty, or counterfair's own:
    never among a user's files) and created; a folder that is not yet a run gets a run.json naming what was saved.
    Returns it and the entries there that are not counterfair's (a user's file put into a saved folder later), which
    :func:`record_files` leaves out of the list a later ``--overwrite`` removes."""
    from . import __version__

    check_run_dir(path, option="the folder given to save()")
    target = prepare_out_dir(path, option="the folder given to save()")
    if not is_counterfair_run(target):
        write_json(
            {**MARK, "kind": f"saved {what} result", "counterfair_version": __version__, "files": []},
            target / "run.json",
        )
    watch_writes(target)
    ours = _run_files(target)
    return target, {p.name for p in target.iterdir() if p.name not in _OWN and p.name not in ours}


_FOREIGN: dict[str, set[str]] = {}  # per claimed run directory: the entries there at the claim that were not the run's


def _run_files(target: Path) -> set[str]:
    """The entries a run directory's run.json lists as its own (a run from before the list: the names counterfair
    writes, :data:`KNOWN_OUTPUTS`)."""
    data = json.loads((target / "run.json").read_text(encoding="utf-8"))
    listed = data.get("files") if isinstance(data, dict) else None
    return set(map(str, listed)) if isinstance(listed, list) else set(KNOWN_OUTPUTS)


def record_files(target: Path, foreign: set[str] | None = None) -> None:
    """Add the entries this run wrote to its run.json's ``files``, what ``--overwrite`` may remove: those counterfair
    wrote since the claim (:func:`~counterfair.writing.watch_writes`) and the names a run writes
    (:data:`KNOWN_OUTPUTS`), never an entry that was there when the run claimed the folder and was not the run's
    (``foreign``: those a save found there) nor one a user dropped into the folder while the run went on."""
    noted = written_in(target, stop=True)
    if not is_counterfair_run(target):
        return
    run_file = target / "run.json"
    data = json.loads(run_file.read_text(encoding="utf-8"))
    listed = data.get("files") if isinstance(data.get("files"), list) else []
    foreign = _FOREIGN.get(str(target.resolve()), set()) if foreign is None else foreign
    present = {
        p.name
        for p in target.iterdir()
        if p.name not in _OWN and p.name not in foreign and (p.name in noted or p.name in KNOWN_OUTPUTS)
    }
    names = sorted({*map(str, listed), *present})
    if names != listed:
        write_json({**data, "files": names}, run_file)


def parquet_copies(
    run_dir: str | Path,
    names: Sequence[str],
    frames: Mapping[str, pd.DataFrame] | None = None,
    *,
    wanted: bool = True,
) -> None:
    """``--parquet``: each CSV table of a run directory named in ``names`` also as Parquet beside it (``pairs.csv`` →
    ``pairs.parquet``, streamed, typed as the CSV: :func:`~counterfair.writing.csv_to_parquet`), and each of
    ``frames`` (name → table held in memory) as ``NAME.parquet``; the CSVs stay, as every reader of a run expects them.
    Tables that are not there are skipped; the files join the run's list (``--overwrite`` may remove them). Not
    ``wanted`` (a rerun without ``--parquet``): a Parquet copy an earlier run left beside one of these tables is
    removed, as it would disagree with the CSV this run rewrote."""
    from .writing import csv_to_parquet, write_table

    target = Path(run_dir)
    if not wanted:
        for name in [*names, *(f"{n}.csv" for n in frames or {})]:
            (target / name).with_suffix(".parquet").unlink(missing_ok=True)
        return
    for name in names:
        if (target / name).is_file():
            csv_to_parquet(target / name, (target / name).with_suffix(".parquet"))
    for name, frame in (frames or {}).items():
        write_table(frame, target / f"{name}.parquet")
    record_files(target)


def prepare_out_dir(path: str | Path, *, option: str = "--out") -> Path:
    """Create ``path`` if needed and check that files can be written in it; returns it as a ``Path``."""
    target = Path(path).expanduser()
    if target.is_symlink() and not target.exists():
        raise OutputError(
            f"{option} {target} is a symbolic link to {os.readlink(target)}, which does not exist: create that "
            f"folder, or choose another {option}"
        )
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
    lock = Path(target) / ".lock"
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip() or "unknown"
            os.close(fd)
            raise ConfigError(
                f"{target} is in use by another counterfair run (pid {holder}); wait for it to finish, or choose "
                "another --out"
            ) from None
        try:  # the holder we waited on may have removed the file as it finished: lock the file that is there now
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = fd


_OVERWRITE: set[str] = set()  # run directories whose next claim replaces the run there (--overwrite)


def allow_overwrite(path: str | Path) -> Path:
    """``--overwrite``: the next :func:`claim_run_dir` of ``path`` replaces the run there instead of resuming or
    refusing it. Nothing is deleted now, so a run that stops earlier (bad input, a missing extra) loses nothing; a
    directory with files but no run.json of counterfair's is refused at once. What the replacement removes is only
    what the run wrote (:func:`_set_aside`, and only once the new run has begun: :func:`_settle_replaced`)."""
    target = Path(path).expanduser()
    if target.is_dir():
        _restore_replaced(target)
    if target.is_dir() and not is_counterfair_run(target) and any(p.name != ".lock" for p in target.iterdir()):
        raise OutputError(
            f"--overwrite refuses to touch {target}: it holds files but no run.json of counterfair's, so counterfair "
            "did not write it"
        )
    _OVERWRITE.add(str(target.resolve()))
    return target


def _set_aside(target: Path) -> None:
    """``--overwrite``: move what the run in a directory this process holds wrote (the entries its run.json lists,
    ``files``; for a run from before that list, the names counterfair writes, :data:`KNOWN_OUTPUTS`) and its run.json
    into ``target/.replaced``. Anything else — a file a user put there — stays where it is. The new run's end decides
    (:func:`_settle_replaced`): a run that stops before writing anything puts the old one back, so an option found bad
    after the claim loses nothing."""
    ours = _run_files(target)
    aside = target / REPLACED
    _remove_tree(aside)  # an older run still set aside (a replacement that stopped after writing): this one replaces it
    aside.mkdir()
    for entry in list(target.iterdir()):  # listed first: the folder changes as entries move
        if entry.name in ours or entry.name == "run.json":
            entry.rename(aside / entry.name)


def _remove_tree(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _restore_replaced(target: Path) -> None:
    """Put the run set aside by ``--overwrite`` back where the new run left no run.json of its own (it stopped before
    writing anything, or was killed before its claim was written)."""
    aside = target / REPLACED
    if not aside.is_dir() or (target / "run.json").exists():
        return
    for entry in list(aside.iterdir()):
        _remove_tree(target / entry.name)  # what a run with no run.json of its own began there is not kept over it
        entry.rename(target / entry.name)
    _remove_tree(aside)


def _settle_replaced(target: Path, *, failed: bool) -> None:
    """The end of a run that replaced another (``--overwrite``): the old run goes once the new one finished; it comes
    back where the new one stopped before writing anything (:func:`_unclaim_if_empty` gave its claim back); a new run
    that stopped after writing (a checkpoint to resume) leaves it set aside, until a run there finishes."""
    if not failed:
        _remove_tree(target / REPLACED)
    else:
        _restore_replaced(target)


def release_run_dir(target: Path) -> None:
    """Give up the lock of :func:`lock_run_dir` and remove its file, so a finished run leaves no ``.lock`` (a killed
    one leaves the file, unlocked: the next run takes it)."""
    fd = _HELD.pop(str(Path(target).resolve()), None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.unlink(Path(target) / ".lock")  # while still holding it: a run that opened it re-checks (lock_run_dir)
        os.close(fd)  # closing the descriptor releases the flock


_NEW_CLAIMS: set[str] = set()  # run directories whose run.json this process's current run wrote


def _unclaim_if_empty(target: Path) -> None:
    """A run that stopped (bad input or options found after the claim, an error) before writing anything but its
    run.json gives the folder back: the corrected command starts afresh instead of being refused as a different run
    (#49 item 11). A run that wrote anything (a checkpoint to resume) keeps its claim."""
    with contextlib.suppress(OSError):
        if {p.name for p in target.iterdir()} <= set(_OWN):
            (target / "run.json").unlink(missing_ok=True)


P = ParamSpec("P")
R = TypeVar("R")


def holds_run_dir(shell: Callable[P, R]) -> Callable[P, R]:
    """For a shell ``f(source, out_dir, ...)``: release ``out_dir``'s lock when ``f`` returns or raises."""

    @functools.wraps(shell)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        out_dir = kwargs.get("out_dir", args[1] if len(args) > 1 else None)
        failed = True
        try:
            result = shell(*args, **kwargs)
            failed = False
            return result
        finally:
            if isinstance(out_dir, str | Path):
                target = Path(out_dir)
                key = str(target.resolve())
                if failed and key in _NEW_CLAIMS:
                    _unclaim_if_empty(target)
                _NEW_CLAIMS.discard(key)
                if key in _HELD:  # this process claimed it: list what the run wrote
                    with contextlib.suppress(OSError, ValueError):
                        record_files(target)
                    with contextlib.suppress(OSError):
                        _settle_replaced(target, failed=failed)
                release_run_dir(target)

    return wrapper


def claim_run_dir(
    target: Path,
    run_id: Mapping[str, Any],
    extra: Mapping[str, Any],
    *,
    what: str = "run",
    classifier: Any = None,
    remeasured: Sequence[str] = (),
) -> None:
    """Create ``target/run.json`` for a new run, or check that the one there describes the same run.

    ``run_id`` holds the fields that must match (options fingerprint, input hash, the classifier's identity);
    ``extra`` is recorded beside them for people reading the directory (``options``: the full options, the input's
    path) but not compared. A mismatch is refused with a message that names what differs, down to the options.
    With ``classifier``, its identity joins ``run_id`` (and its signature ``extra``); a classifier whose identity
    cannot be pinned runs once, but such a directory cannot be resumed. ``remeasured``: the keys of ``extra`` a resume
    may change (how an LLM audit's stored responses are measured), rewritten in run.json when it changes them."""
    if classifier is not None:
        signature = classifier.signature()
        run_id = {**run_id, "classifier": classifier.identity()}
        extra = {
            **extra,
            "classifier_signature": signature,
            "classifier_unstable_reason": signature.get("unstable_reason"),
        }
    prepare_run_dir(target)
    lock_run_dir(target)
    key = str(Path(target).resolve())
    watch_writes(target)
    if key in _OVERWRITE:
        _OVERWRITE.discard(key)
        if (target / "run.json").is_file():
            _set_aside(target)  # --overwrite: back if this run stops before it writes anything (_settle_replaced)
    ours = _run_files(target) if is_counterfair_run(target) else set()
    _FOREIGN[key] = {p.name for p in target.iterdir() if p.name not in _OWN and p.name not in ours}
    _remove_stale_temps(target, ours, _FOREIGN[key])
    run_file = target / "run.json"
    if not run_file.exists():
        write_json({**run_id, **extra, "kind": what, **MARK}, run_file)
        _NEW_CLAIMS.add(key)
        return
    previous = json.loads(run_file.read_text(encoding="utf-8"))
    held = previous.get("kind")  # directories from before runs recorded their kind (or a damaged one): this kind
    held = held if isinstance(held, str) and held else what
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
    from .redact import redacted

    differs = [key for key in run_id if previous.get(key) != redacted(run_id[key])]  # as run.json holds it
    if not differs:
        stored = json.loads(json.dumps(redacted({k: extra[k] for k in remeasured}), default=str))
        if any(previous.get(k) != v for k, v in stored.items()):
            write_json({**previous, **stored}, run_file)
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


#: the temporary file of an atomic write (:func:`counterfair.writing.atomic_open`: ``.NAME.XXXXXXXX.tmp``) or of the
#: output folder's write probe, which a run killed with SIGKILL mid-write leaves behind
_STALE_TEMP = re.compile(r"^\.(?:(?P<name>.+)\.[a-z0-9_]{8}\.tmp|write-test-[a-z0-9_]{8})$")


def _remove_stale_temps(target: Path, ours: set[str], foreign: set[str]) -> None:
    """Delete the temporary files killed writers left in the run directory this process now holds (no writer of this
    run is alive: the lock is ours). At the top, only those of the names a run writes (its listed files and
    :data:`KNOWN_OUTPUTS`); folders that are not the run's are not looked into."""
    for root, dirs, files in os.walk(target):
        top = Path(root) == target
        if top:
            dirs[:] = [d for d in dirs if d not in foreign]
        for name in files:
            match = _STALE_TEMP.match(name)
            if match is None or (top and match["name"] is not None and match["name"] not in KNOWN_OUTPUTS | ours):
                continue
            with contextlib.suppress(OSError):
                (Path(root) / name).unlink()


@contextlib.contextmanager
def writing(path: Path, *, kept: str | Callable[[], str]) -> Iterator[None]:
    """Within the block, an ``OSError`` while writing ``path`` becomes an :class:`OutputError` saying ``kept`` (a
    function: asked only then)."""
    try:
        yield
    except OSError as err:
        said = kept() if callable(kept) else kept
        raise OutputError(f"cannot write {path}: {err.strerror or err}; {said}") from err
