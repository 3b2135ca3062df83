"""The rating store: pairs to rate, raters, and their ratings, in one SQLite file (WAL mode).

Criteria (paper 000 §3.3 and App. C):

* ``fluent`` — is the counterfactual fluent and consistent? ``yes`` / ``no`` / ``unsure``
* ``reference`` — does it reference the attribute? ``explicit`` / ``implicit`` / ``none``
* ``same_label`` — should it get the original's label? ``yes`` / ``no`` / ``unsure``
* ``meaning`` — similarity of meaning to the original, 0-4
* ``reject`` — reject for another reason (0/1)

Assignment follows paper 000 §4.3: every pair gets two raters; a pair whose two ratings disagree on a categorical
criterion goes to a third rater. A rater is always offered, in the project's shuffled order, first the pairs that
need a tie-breaker they have not rated, then the pairs with fewer than two ratings.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ..editors.registry import swap_methods, swaps_identities
from ..errors import ConfigError, InputError, SchemaError
from ..records import SCHEMA_VERSION

FLUENT = ("yes", "no", "unsure")
REFERENCE = ("explicit", "implicit", "none")
SAME_LABEL = ("yes", "no", "unsure")
MEANING = (0, 1, 2, 3, 4)
CATEGORICAL = ("fluent", "reference", "same_label")
EXPORT_COLUMNS = ["pair_id", "rater", "fluent", "reference", "same_label", "meaning", "reject"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pairs (
    pair_id TEXT PRIMARY KEY, position INTEGER NOT NULL, original TEXT NOT NULL, counterfactual TEXT NOT NULL,
    attribute TEXT NOT NULL, method TEXT, topic TEXT
);
CREATE TABLE IF NOT EXISTS ratings (
    pair_id TEXT NOT NULL REFERENCES pairs(pair_id), rater TEXT NOT NULL, fluent TEXT NOT NULL,
    reference TEXT NOT NULL, same_label TEXT NOT NULL, meaning INTEGER NOT NULL, reject INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'app', raw TEXT, created REAL NOT NULL, PRIMARY KEY (pair_id, rater)
);
"""
# added without a schema bump (older projects get it on open): a rater's passphrase, set at their first sign-in
_RATERS = "CREATE TABLE IF NOT EXISTS raters (name TEXT PRIMARY KEY, salt BLOB NOT NULL, hash BLOB NOT NULL)"


class PairToRate(TypedDict):
    """One pair of a rating project, as the ``pairs`` table holds it."""

    pair_id: str
    position: int
    original: str
    counterfactual: str
    attribute: str
    method: str | None
    topic: str | None


def _passphrase_hash(passphrase: str, salt: bytes) -> bytes:
    import hashlib

    return hashlib.scrypt(passphrase.encode("utf-8"), salt=salt, n=2**14, r=8, p=1)


def rater_name(raw: Any) -> str:
    """A rater's name as stored: NFKC-normalised (full-width letters become plain ones), invisible format and control
    characters (zero-width spaces and joiners, soft hyphens, NUL) removed, whitespace collapsed, case folded ("Bob"
    and "BOB" are one rater); at most 64 characters. Two names that differ only in what a reader cannot tell apart, or
    in case, are one rater; ``LLM:gpt`` is ``llm:gpt``, an LLM judge's name."""
    import unicodedata

    if raw is None or (isinstance(raw, float) and raw != raw):
        return ""
    text = unicodedata.normalize("NFKC", str(raw))
    text = "".join(ch for ch in text if ch.isspace() or unicodedata.category(ch) not in ("Cf", "Cc"))
    return " ".join(text.casefold().split())[:64]


@dataclass(frozen=True)
class Rating:
    pair_id: str
    rater: str
    fluent: str
    reference: str
    same_label: str
    meaning: int
    reject: bool = False

    def validate(self, where: str = "rating") -> Rating:
        if not self.rater.strip():
            raise InputError(f"{where}: the rater name is empty")
        for name, value, allowed in (
            ("fluent", self.fluent, FLUENT),
            ("reference", self.reference, REFERENCE),
            ("same_label", self.same_label, SAME_LABEL),
        ):
            if value not in allowed:
                raise InputError(f"{where}: {name} must be one of {', '.join(allowed)}, not {value!r}")
        if self.meaning not in MEANING:
            raise InputError(f"{where}: meaning must be an integer from 0 to 4, not {self.meaning!r}")
        return self


def _rating(row: sqlite3.Row) -> Rating:
    """A stored rating row as a :class:`Rating` (the reject box included)."""
    return Rating(
        row["pair_id"],
        row["rater"],
        row["fluent"],
        row["reference"],
        row["same_label"],
        int(row["meaning"]),
        bool(row["reject"]),
    )


class ProjectGone(ConfigError):
    """The project's database is no longer where the store opened it."""


def disagree(a: Rating, b: Rating) -> bool:
    """Whether two ratings are not unanimous on any answer — a category, the meaning score or the reject box; paper
    000 §4.3 passes every such pair to a third rater."""
    return any(getattr(a, c) != getattr(b, c) for c in (*CATEGORICAL, "meaning", "reject"))


class RatingStore:
    """A rating project in ``DIR/ratings.sqlite``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "ratings.sqlite"
        if not self.path.exists():
            raise ConfigError(f"{self.directory}: no rating project here (run counterfair rate init first)")
        try:
            with self._connect() as db:
                version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                db.execute(_RATERS)
        except sqlite3.DatabaseError as err:  # an empty file, another program's database, garbage
            raise ConfigError(
                f"{self.path} is not a counterfair rating project ({err}); make one with counterfair rate init"
            ) from None
        if version is None or version[0] != SCHEMA_VERSION:
            raise SchemaError(
                f"{self.path}: written with schema_version {version and version[0]!r}, this counterfair "
                f"reads {SCHEMA_VERSION!r}; export the ratings with the older version and import them"
            )

    @classmethod
    def create(cls, directory: str | Path, pairs: pd.DataFrame, *, seed: int = 0) -> RatingStore:
        """A new project from a pairs table (``pair_id, original, counterfactual, attribute[, method, topic]``)."""
        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        path = target / "ratings.sqlite"
        if path.exists():
            raise ConfigError(f"{path} exists already; rate it, or choose another directory")
        for column in ("pair_id", "original", "counterfactual", "attribute"):
            if column not in pairs:
                raise InputError(f"pairs table lacks column {column!r}")
        if pairs["pair_id"].duplicated().any():
            dup = pairs.loc[pairs["pair_id"].duplicated(), "pair_id"].iloc[0]
            raise InputError(f"pair_id {dup!r} appears more than once")
        order = np.random.default_rng(seed).permutation(len(pairs))  # shuffled, so the method is not guessable by order
        db = sqlite3.connect(path)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("schema_version", SCHEMA_VERSION), ("created", str(time.time())), ("seed", str(seed))],
            )
            db.executemany(
                "INSERT INTO pairs VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        str(r.pair_id),
                        int(pos),
                        str(r.original),
                        str(r.counterfactual),
                        str(r.attribute),
                        None if pd.isna(getattr(r, "method", None)) else str(getattr(r, "method", None)),
                        None if pd.isna(getattr(r, "topic", None)) else str(getattr(r, "topic", None)),
                    )
                    for pos, r in zip(order, pairs.itertuples(), strict=True)
                ],
            )
            db.commit()
        finally:
            db.close()
        return cls(target)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the existing file (``mode=rw``: a file moved away while the app serves is an error, not a
        new empty database in its place)."""
        try:
            db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=rw", uri=True, timeout=30)
        except sqlite3.OperationalError as err:
            raise ProjectGone(
                f"{self.path} cannot be opened ({err}); it was moved or deleted: put it back (nothing else was lost)"
            ) from None
        db.row_factory = sqlite3.Row
        try:
            yield db
            db.commit()
        finally:
            db.close()

    # ------------------------------------------------------------------------------------------ reading

    def pairs(self) -> pd.DataFrame:
        with self._connect() as db:
            return pd.read_sql_query("SELECT * FROM pairs ORDER BY position", db)

    def pair(self, pair_id: str) -> PairToRate:
        with self._connect() as db:
            row = db.execute("SELECT * FROM pairs WHERE pair_id = ?", (pair_id,)).fetchone()
        if row is None:
            raise InputError(f"no pair {pair_id!r}")
        return {
            "pair_id": row["pair_id"],
            "position": row["position"],
            "original": row["original"],
            "counterfactual": row["counterfactual"],
            "attribute": row["attribute"],
            "method": row["method"],
            "topic": row["topic"],
        }

    def ratings(self, *, human_only: bool = False) -> list[Rating]:
        query = "SELECT * FROM ratings" + (" WHERE source != 'llm'" if human_only else "") + " ORDER BY created"
        with self._connect() as db:
            rows = db.execute(query).fetchall()
        return [_rating(r) for r in rows]

    def ratings_frame(self) -> pd.DataFrame:
        with self._connect() as db:
            return pd.read_sql_query("SELECT * FROM ratings ORDER BY created", db)

    def next_pair(self, rater: str) -> PairToRate | None:
        """The next pair ``rater`` should rate (tie-breakers first), or ``None`` when nothing is left for them."""
        with self._connect() as db:
            pairs = [r["pair_id"] for r in db.execute("SELECT pair_id FROM pairs ORDER BY position")]
            rows = db.execute("SELECT * FROM ratings WHERE source != 'llm'").fetchall()
        by_pair: dict[str, list[Rating]] = {}
        for r in rows:
            by_pair.setdefault(r["pair_id"], []).append(_rating(r))
        mine = {p for p, rs in by_pair.items() if any(x.rater == rater for x in rs)}
        needs_third = [p for p in pairs if p not in mine and len(by_pair.get(p, [])) == 2 and disagree(*by_pair[p])]
        needs_more = [p for p in pairs if p not in mine and len(by_pair.get(p, [])) < 2]
        for candidate in needs_third + needs_more:
            return self.pair(candidate)
        return None

    def progress(self, rater: str | None = None) -> dict[str, int]:
        with self._connect() as db:
            total = db.execute("SELECT COUNT(*) FROM pairs").fetchone()[0]
            counts = dict(
                db.execute("SELECT pair_id, COUNT(*) FROM ratings WHERE source != 'llm' GROUP BY pair_id").fetchall()
            )
            mine = db.execute("SELECT COUNT(*) FROM ratings WHERE rater = ?", (rater,)).fetchone()[0] if rater else 0
        return {
            "pairs": total,
            "with_two_ratings": sum(1 for v in counts.values() if v >= 2),
            "ratings": sum(counts.values()),
            "mine": mine,
        }

    # ------------------------------------------------------------------------------------------ writing

    def sign_in(self, name: str, passphrase: str) -> bool:
        """True when ``passphrase`` is ``name``'s; a name's first sign-in sets it (scrypt, salted), so nobody can
        later continue as that rater without it."""
        import hmac
        import os

        salt = os.urandom(16)
        with self._connect() as db:  # the first sign-in wins a race for a new name; the other is then checked
            db.execute(
                "INSERT OR IGNORE INTO raters VALUES (?, ?, ?)", (name, salt, _passphrase_hash(passphrase, salt))
            )
            row = db.execute("SELECT salt, hash FROM raters WHERE name = ?", (name,)).fetchone()
        return hmac.compare_digest(bytes(row["hash"]), _passphrase_hash(passphrase, bytes(row["salt"])))

    def add(self, rating: Rating, *, source: str = "app", raw: str | None = None, replace: bool = False) -> None:
        rating.validate()
        self.pair(rating.pair_id)  # must exist
        try:
            self._insert([rating], source=source, raw=raw, replace=replace)
        except sqlite3.IntegrityError:
            raise InputError(f"{rating.rater!r} has rated pair {rating.pair_id!r} already") from None

    def add_many(self, ratings: Sequence[Rating], *, source: str, replace: bool = False) -> None:
        """Several ratings in one transaction: all of them, or none when one is refused."""
        try:
            self._insert(ratings, source=source, raw=None, replace=replace)
        except sqlite3.IntegrityError as err:
            raise InputError(f"a rating in the file is in the project already ({err}); nothing was imported") from None

    def _insert(self, ratings: Sequence[Rating], *, source: str, raw: str | None, replace: bool) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        now = time.time()
        rows = [
            (r.pair_id, r.rater, r.fluent, r.reference, r.same_label, r.meaning, int(r.reject), source, raw, now)
            for r in ratings
        ]
        with self._connect() as db:  # one transaction
            db.executemany(f"{verb} INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def export_csv(self, path: str | Path) -> int:
        from ..writing import spreadsheet_safe, write_table

        frame = self.ratings_frame()[["pair_id", "rater", "fluent", "reference", "same_label", "meaning", "reject"]]
        write_table(frame.map(spreadsheet_safe), path)
        return len(frame)

    def import_csv(self, path: str | Path, *, replace: bool = False) -> int:
        """Ratings made outside the app; every row is validated first, so a bad file adds nothing."""
        from ..io import read_table, require_columns
        from ..writing import from_spreadsheet_safe

        frame = read_table(path).map(from_spreadsheet_safe)
        require_columns(frame, dict.fromkeys(EXPORT_COLUMNS[:6], "the CSV header"), origin=str(path))
        known = set(self.pairs()["pair_id"])
        ratings: list[Rating] = []
        seen: dict[tuple[str, str], int] = {}
        for index, row in enumerate(frame.to_dict("records")):
            where = f"{path}: row {index + 2}"
            if str(row["pair_id"]) not in known:
                raise InputError(f"{where}: unknown pair_id {row['pair_id']!r}")
            rater = rater_name(row["rater"])
            if rater.lower().startswith("llm:"):
                raise InputError(f"{where}: rater {rater!r}: names starting with 'llm:' are LLM judges (rate judge)")
            rating = Rating(
                str(row["pair_id"]),
                rater,
                str(row["fluent"]).strip().lower(),
                str(row["reference"]).strip().lower(),
                str(row["same_label"]).strip().lower(),
                _meaning(row["meaning"], where),
                str(row.get("reject", "0")).strip().lower() in ("1", "true", "yes", "1.0"),
            ).validate(where)
            key = (rating.pair_id, rating.rater)
            if key in seen:
                raise InputError(f"{where}: {rater!r} rates pair {rating.pair_id!r} again (row {seen[key]})")
            seen[key] = index + 2
            ratings.append(rating)
        self.add_many(ratings, source="import", replace=replace)  # one transaction: a bad file adds nothing
        return len(ratings)


def _meaning(value: Any, where: str) -> int:
    """A meaning score from a file: a whole number 0-4 (3.7 is refused, not cut to 3; 1e309 is not a number)."""
    import math

    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or not number.is_integer():
        raise InputError(f"{where}: meaning {value!r} is not a whole number from 0 to 4")
    return int(number)


def pair_id(method: Any, attribute: Any, input_id: Any) -> str:
    """The one id of a rated pair, ``method:attribute:input_id``, whether the project was made from a generate run
    or an audit; ``audit --only-good`` looks pairs up by it."""
    return f"{method}:{attribute}:{input_id}"


def _swap_attributes(cfs: pd.DataFrame, run: Path, attribute: str) -> list[str]:
    """Each generated pair's attribute: the run's for word-list and LLM edits; for an identity swap, its source and
    target groups ("sexuality → religion") in the run's identity set."""
    if "source_term" not in cfs or not cfs["method"].isin(swap_methods()).any():
        return [attribute] * len(cfs)
    from ..lexicons.attributes import load_identity_set

    options = json.loads(run.read_text(encoding="utf-8")).get("options", {}) if run.exists() else {}
    identities = load_identity_set(options.get("identities"))
    out = []
    for method, source, target in zip(cfs["method"], cfs["source_term"], cfs["target_term"], strict=True):
        if swaps_identities(method) and isinstance(source, str) and isinstance(target, str):
            out.append(f"{identities.group_of(source)} → {identities.group_of(target)}")
        else:
            out.append(attribute)
    return out


def pairs_from_run(source: str | Path, *, attribute: str | None = None) -> pd.DataFrame:
    """Pairs to rate from a generate run (``counterfactuals.csv``), an audit run (``pairs.csv``), or a CSV with
    ``original`` and ``counterfactual`` columns."""
    from ..io import read_table

    path = Path(source)
    if path.is_dir():
        if (path / "counterfactuals.csv").exists():
            cfs = read_table(path / "counterfactuals.csv")
            cfs = cfs[cfs["status"] == "ok"]
            run = path / "run.json"
            attr = attribute or (
                json.loads(run.read_text(encoding="utf-8")).get("options", {}).get("attribute")
                if run.exists()
                else None
            )
            if attr is None:
                raise InputError(f"{path}: the generate run does not say its attribute (no run.json); give --attribute")
            real = _swap_attributes(cfs, run, attr)  # a swap's pair is about its groups, not the run's attribute
            return pd.DataFrame(
                {
                    "pair_id": [pair_id(m, attr, i) for m, i in zip(cfs["method"], cfs["input_id"], strict=True)],
                    "original": cfs["source_text"],
                    "counterfactual": cfs["text"],
                    "attribute": real,
                    "method": cfs["method"],
                    "topic": real,
                }
            )
        if (path / "pairs.csv").exists():
            pairs = read_table(path / "pairs.csv")
            pairs = pairs[~pairs["method"].isin(swap_methods())]
            return pd.DataFrame(
                {
                    "pair_id": [
                        pair_id(m, a, i)
                        for m, a, i in zip(pairs["method"], pairs["attribute"], pairs["input_id"], strict=True)
                    ],
                    "original": pairs["source_text"],
                    "counterfactual": pairs["cf_text"],
                    "attribute": pairs["attribute"],
                    "method": pairs["method"],
                    "topic": pairs["attribute"],
                }
            )
        raise InputError(f"{path}: neither a generate run (counterfactuals.csv) nor an audit run (pairs.csv)")
    frame = read_table(path)
    for column in ("original", "counterfactual"):
        if column not in frame:
            raise InputError(f"{path}: a pairs file needs columns 'original' and 'counterfactual'")
    if "pair_id" not in frame:
        frame["pair_id"] = [str(i) for i in range(len(frame))]
    if "attribute" not in frame:
        if attribute is None:
            raise InputError(f"{path}: no 'attribute' column; give --attribute")
        frame["attribute"] = attribute
    return frame
