"""The run store: finished work, content-addressed, in one SQLite file (WAL mode), shared by every run.

A result is stored under the sha256 of (component, parameters, model identity, sha256 of the input), so a repeated
run — or another run that meets the same text, model and parameters — reuses it instead of computing it again:
classifier probabilities, perplexities, BERTScores and per-text generation results. Results whose identity cannot be
pinned down (a ``callable:`` or ``http:`` classifier, whose code or server may change) are never stored.

Location: ``$COUNTERFAIR_STORE`` if set (a path, or ``off`` to disable it), else ``<cache>/store.sqlite``. Several
processes may use it at once (WAL; writes are short transactions).

A cache never stops a run: a damaged file (truncated, not a database, malformed pages) is moved aside to
``store.sqlite.corrupt-<time>`` with a :class:`StoreWarning` and a new store is started; if the store still cannot be
used (locked for a minute, unreadable), it is switched off for the rest of the process, again with a warning, and
the work is simply computed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, component TEXT NOT NULL, value TEXT NOT NULL,
                                    created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS results_component ON results (component);
"""


def content_key(component: str, params: Mapping[str, Any], model: Mapping[str, Any] | None, payload: str) -> str:
    """The store key of one result: sha256 over component, parameters, model identity and the input's sha256."""
    return content_keys(component, params, model)(payload)


def content_keys(component: str, params: Mapping[str, Any], model: Mapping[str, Any] | None) -> Callable[[str], str]:
    """:func:`content_key` for many inputs of one component, parameters and model: what they share is serialised
    once (the guard's parameters list every identity term; serialising them per text was a sixth of a rerun)."""
    blob = json.dumps([component, params, model, ""], sort_keys=True, default=str, separators=(",", ":"))
    head = blob[: -len('""]')].encode("utf-8")  # the same bytes as a whole list ending in the input's digest

    def key(payload: str) -> str:
        digest = hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()  # a lone surrogate: its own
        return hashlib.sha256(head + b'"' + digest.encode("ascii") + b'"]').hexdigest()

    return key


class StoreWarning(UserWarning):
    """The run store was damaged or unusable; it was rebuilt or switched off, and the run went on."""


class RunStore:
    """Content-addressed results; ``get_many`` / ``put_many`` work in batches."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        self.damaged = 0  # values dropped as damaged or of the wrong shape (recomputed)
        self.disabled = False
        self._guarded(self._initialise, None)

    def _initialise(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = self._db()
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)
        db.commit()

    def _guarded(self, operation: Any, fallback: Any) -> Any:
        """Run ``operation``; on a damaged file move it aside and retry once on a new store; if the store still
        fails, switch it off and return ``fallback``."""
        if self.disabled:
            return fallback
        for attempt in (0, 1):
            try:
                return operation()
            except (sqlite3.DatabaseError, OSError) as err:
                damaged = isinstance(err, sqlite3.DatabaseError) and not isinstance(err, sqlite3.OperationalError)
                if damaged and attempt == 0:
                    self._move_aside(err)
                    continue
                warnings.warn(
                    f"the run store {self.path} cannot be used ({err}); it is off for this run, results are computed",
                    StoreWarning,
                    stacklevel=3,
                )
                self.disabled = True
        return fallback

    def _move_aside(self, err: Exception) -> None:
        connection = getattr(self._local, "db", None)
        if connection is not None:
            connection.close()
            self._local.db = None
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{self.path}{suffix}")
            if part.exists():
                os.replace(part, Path(f"{aside}{suffix}"))
        warnings.warn(
            f"the run store {self.path} was damaged ({err}); moved it to {aside} and started a new one",
            StoreWarning,
            stacklevel=4,
        )
        self._initialise()

    def _db(self) -> sqlite3.Connection:
        connection = getattr(self._local, "db", None)
        if connection is None or getattr(self._local, "pid", None) != os.getpid():
            connection = sqlite3.connect(self.path, timeout=60)
            self._local.db, self._local.pid = connection, os.getpid()
        return connection

    def get_many(self, keys: Sequence[str], valid: Callable[[Any], bool] | None = None) -> dict[str, Any]:
        """The stored values of ``keys`` that are there and sound. ``valid`` says whether a value has the shape the
        caller expects (a probability row of the classifier's width, a record with its fields); a value that is not
        JSON or not valid is a miss — deleted, so the recomputed one is stored, and counted in one warning — never a
        crash or a wrong number."""
        result: dict[str, Any] = self._guarded(lambda: self._get_many(keys, valid), {})
        return result

    def _get_many(self, keys: Sequence[str], valid: Callable[[Any], bool] | None) -> dict[str, Any]:
        found: dict[str, Any] = {}
        damaged: list[str] = []
        db = self._db()
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, raw in db.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk):
                try:
                    value = json.loads(raw)
                    sound = valid is None or bool(valid(value))
                except (ValueError, TypeError, KeyError, AttributeError):
                    sound = False
                if sound:
                    found[key] = value
                else:
                    damaged.append(key)
        if damaged:
            for start in range(0, len(damaged), 500):
                part = damaged[start : start + 500]
                db.execute(f"DELETE FROM results WHERE key IN ({','.join('?' * len(part))})", part)
            db.commit()
            self.damaged += len(damaged)
            warnings.warn(
                f"run store {self.path}: {len(damaged)} damaged or mismatched cached values were dropped and are "
                "recomputed",
                StoreWarning,
                stacklevel=4,
            )
        self.hits += len(found)
        self.misses += len(unique) - len(found)
        return found

    def put_many(self, rows: Sequence[tuple[str, str, Any]]) -> None:
        """Store (key, component, value) rows; existing keys are kept (the first result wins)."""
        if rows:
            self._guarded(lambda: self._put_many(rows), None)

    def _put_many(self, rows: Sequence[tuple[str, str, Any]]) -> None:
        db = self._db()
        now = time.time()
        db.executemany(
            "INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?)",
            [(k, c, json.dumps(v, default=float), now) for k, c, v in rows],
        )
        db.commit()

    def stats(self) -> dict[str, int]:
        query = "SELECT component, COUNT(*) FROM results GROUP BY component"
        result: dict[str, int] = self._guarded(lambda: dict(self._db().execute(query).fetchall()), {})
        return result


@cache
def _open(path: str) -> RunStore:
    return RunStore(path)


def default_store() -> RunStore | None:
    """The shared store (``$COUNTERFAIR_STORE``, or ``<cache>/store.sqlite``), or ``None`` when it is off."""
    setting = os.environ.get("COUNTERFAIR_STORE")
    if setting and setting.lower() in ("off", "0", "none", "false"):
        return None
    if setting:
        return _open(str(Path(setting).expanduser()))
    from .models import cache_root

    return _open(str(cache_root() / "store.sqlite"))
