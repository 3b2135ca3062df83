"""One reader for the YAML and JSON files a user hands counterfair (``--config``, attribute packs, placebo lists,
prompt files), with the limits a hostile or damaged file cannot get past: a size cap, no binary content, no YAML
aliases (a 392-byte alias bomb expanded to 5 GB), a cap on the number of list items, and a mapping at the top.
Each refusal is a :class:`~counterfair.errors.ConfigError` naming the file and what to change."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import ConfigError

MAX_BYTES = 5_000_000  # far above any pack counterfair ships (the largest is under 60 KB)
MAX_ITEMS = 20_000  # list items and keys in the whole file (a 24,000-term pack validates in 13 s on 2 cores)


def _no_alias_loader() -> Any:
    import yaml

    class NoAliasLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML without stubs
        """PyYAML's safe loader refusing aliases (``*name``: anchors and aliases let a few bytes expand into
        gigabytes, and no counterfair file needs them) and a key given twice in one mapping (YAML keeps the last one
        silently: a rule or a term list written twice would lose the first)."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ConfigError(
                    f"line {event.start_mark.line + 1}: a YAML alias (*{event.anchor}); aliases are not accepted, "
                    "write the values out"
                )
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if isinstance(key, str | int | float | bool) and key in seen:
                    raise ConfigError(
                        f"line {line}: the key {key!r} is given twice (also on line {seen[key]}); YAML keeps only "
                        "the last, so say it once"
                    )
                if isinstance(key, str | int | float | bool):
                    seen[key] = line
            return super().construct_mapping(node, deep=deep)

    return NoAliasLoader


def _count_items(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_count_items(v) for v in value.values()) + len(value)
    if isinstance(value, list):
        return sum(_count_items(v) for v in value) + len(value)
    return 0


def read_capped(path: Path | str, what: str, *, max_bytes: int = MAX_BYTES) -> bytes:
    """A user's file of bounded size, whole: a regular file (a symbolic link is followed to one; a device, a FIFO or a
    folder is refused, as ``/dev/zero`` or a pipe would be read without end) of at most ``max_bytes``, read as
    ``max_bytes`` + 1 bytes at most whatever its size says (a file that grows while it is read is refused too)."""
    import stat

    path = Path(path)
    where = f"{what} {path}"
    refused = ConfigError(f"{where}: not a regular file (a device, a pipe or a folder); give a file")
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # before open(): opening a pipe waits for a writer
            raise refused
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # replaced since: what was opened counts
                raise refused
            raw = handle.read(max_bytes + 1)
    except OSError as err:
        raise ConfigError(f"{where}: cannot read it ({err.strerror or err})") from err
    if len(raw) > max_bytes:
        raise ConfigError(
            f"{where}: more than {max_bytes:,} bytes; at most {max_bytes:,} are read (is it the right file?)"
        )
    return raw


def read_mapping(
    path: Path | str, what: str, *, max_bytes: int = MAX_BYTES, max_items: int = MAX_ITEMS
) -> dict[str, Any]:
    """The mapping in a YAML (or ``.json``) file; ``what`` names the file in errors ("--config", "attribute pack")."""
    import yaml

    path = Path(path)
    where = f"{what} {path}"
    raw = read_capped(path, what, max_bytes=max_bytes)
    if b"\x00" in raw:
        raise ConfigError(f"{where}: a binary file (it holds NUL bytes), not YAML or JSON")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{where}: not UTF-8 text (byte {err.start}); save it as UTF-8") from err
    try:
        is_json = path.suffix.lower() == ".json"
        data = json.loads(text) if is_json else yaml.load(text, Loader=_no_alias_loader())  # a SafeLoader subclass
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from None
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise ConfigError(f"{where}: not valid {kind} ({' '.join(str(err).split())})") from err  # one line
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys to values at the top, got {type(data).__name__}")
    items = _count_items(data)
    if items > max_items:
        raise ConfigError(f"{where}: {items:,} list items and keys; at most {max_items:,} are accepted")
    return data
