"""What counterfair keeps on disk between runs (``$COUNTERFAIR_CACHE``, else ``~/.cache/counterfair``), and clearing it.

Every part can be deleted at any time: the next run that needs it rebuilds it (models are reassembled from their
pip packages, conversions redone, the run store starts empty and runs recompute what it held).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

#: the parts of the cache and what each holds (anything else found there is listed as "other")
PARTS: dict[str, str] = {
    "gguf": "GGUF models reassembled from their chunk packages (the rewriting LLM: about 0.7-1.1 GB)",
    "converted": "model copies converted for transformers (Gemma-3-270M for perplexity: about 570 MB in float16)",
    "store.sqlite": "the run store: classifier scores, generated candidates, metric values and guard verdicts by input",
    "wordnet": "NLTK's view of Debian's WordNet (the synonym editor)",
    "sha256.json": "verified model digests by path, size and modification time",
    "llama_native.json": "which llama.cpp path is safe on this machine",
    "logs": "tracebacks of internal errors, one file each (what an exit 3 points to)",
}


#: the parts whose folder has a name other programs use too: only the files counterfair writes there are cleared
OWN_FILES = {"logs": "crash-*.log"}


@dataclass(frozen=True)
class CacheEntry:
    name: str
    path: Path
    bytes: int
    holds: str


def _part(name: str) -> str:
    """The part of :data:`PARTS` a cache entry belongs to (the store's ``-wal``/``-shm`` files are the store's)."""
    return "store.sqlite" if name.startswith("store.sqlite") else name


def _size(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def cache_entries() -> list[CacheEntry]:
    """The cache's top-level entries with their sizes, largest first."""
    from .models import cache_root

    root = cache_root()
    if not root.is_dir():
        return []
    found = []
    for path in root.iterdir():
        found.append(CacheEntry(path.name, path, _size(path), PARTS.get(_part(path.name), "other")))
    return sorted(found, key=lambda e: (-e.bytes, e.name))


def to_clear(parts: list[str] | None = None) -> list[CacheEntry]:
    """The entries :func:`clear_cache` would delete: counterfair's own parts (``parts`` of :data:`PARTS`; None: every
    one of them), never an entry listed as "other" (``$COUNTERFAIR_CACHE`` may be a folder other programs use too)."""
    unknown = [p for p in parts or [] if p not in PARTS]
    if unknown:
        raise ConfigError(f"unknown cache part(s) {', '.join(unknown)}; the parts are: {', '.join(PARTS)}")
    wanted = set(PARTS) if parts is None else set(parts)
    return [entry for entry in cache_entries() if _part(entry.name) in wanted]


def clear_cache(parts: list[str] | None = None) -> list[CacheEntry]:
    """Delete ``parts`` of the cache (names of :data:`PARTS`; None: all of counterfair's parts, nothing else);
    returns what was deleted."""
    removed = []
    for entry in to_clear(parts):
        pattern = OWN_FILES.get(entry.name)
        if pattern is not None and entry.path.is_dir() and not entry.path.is_symlink():
            # a folder of a common name (logs/) in a cache other programs may share: only counterfair's files go
            for path in entry.path.glob(pattern):
                if path.is_file() and not path.is_symlink():
                    path.unlink()
            if not any(entry.path.iterdir()):
                entry.path.rmdir()
        elif entry.path.is_dir() and not entry.path.is_symlink():
            shutil.rmtree(entry.path)
        else:
            entry.path.unlink()
        removed.append(entry)
    return removed
