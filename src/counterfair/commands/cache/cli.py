"""``counterfair cache``: what counterfair keeps on disk between runs (info, clear)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ...command_line import app, console, err_console

cache_app = typer.Typer(
    help="What counterfair keeps on disk between runs: sizes, and clearing it.", no_args_is_help=True
)
app.add_typer(
    cache_app,
    name="cache",
)


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


@cache_app.command("info")
def cache_info() -> None:
    """Each part of the cache ($COUNTERFAIR_CACHE, else ~/.cache/counterfair): size and what it holds."""
    from ...cache import cache_entries
    from ...models import cache_root

    entries = cache_entries()
    table = Table(title=f"cache: {cache_root()}")
    for column in ("part", "size", "holds"):
        table.add_column(column)
    for entry in entries:
        table.add_row(entry.name, _mb(entry.bytes), entry.holds)
    console.print(table)
    console.print(f"total {_mb(sum(e.bytes for e in entries))}; every part can be deleted (counterfair cache clear)")


@cache_app.command("clear")
def cache_clear(
    parts: Annotated[
        list[str] | None,
        typer.Argument(help="Parts to delete (gguf, converted, store.sqlite, ...); none: all of counterfair's."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Delete without asking (needed without a terminal).")
    ] = False,
) -> None:
    """Delete counterfair's parts of the cache (or some of them); runs rebuild what they need. Entries listed as
    "other" by `cache info` are never touched. Asks first, unless --yes."""
    import sys

    from ...cache import cache_entries, clear_cache, to_clear
    from ...models import cache_root

    doomed = to_clear(parts or None)
    others = [e.name for e in cache_entries() if e.holds == "other"]
    kept = f"; kept, not counterfair's: {', '.join(others)}" if others else ""
    if not doomed:
        console.print(f"nothing of counterfair's to delete in {cache_root()}{kept}")
        return
    listing = ", ".join(f"{e.name} ({_mb(e.bytes)})" for e in doomed)
    if not yes:
        if not sys.stdin.isatty():
            err_console.print(f"[red]error:[/red] would delete {listing} from {cache_root()}; pass --yes to confirm")
            raise typer.Exit(2)
        if not typer.confirm(f"delete {listing} from {cache_root()}?", default=False):
            console.print("nothing deleted")
            return
    removed = clear_cache(parts or None)
    freed = sum(e.bytes for e in removed)
    console.print(f"deleted {', '.join(e.name for e in removed)}: {_mb(freed)} freed{kept}")
