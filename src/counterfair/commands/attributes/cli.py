"""``counterfair attributes``: the lexicon packs (word lists, identity sets, names, gender swaps): list, show,
validate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ...command_line import app, console

attributes_app = typer.Typer(
    help="Lexicon packs: the attributes (word lists), identity sets, names, nationalities and gender swaps.",
    no_args_is_help=True,
)
app.add_typer(
    attributes_app,
    name="attributes",
)


@attributes_app.command("list")
def attributes_list() -> None:
    """The built-in packs, with kind, version, language, size and source."""
    from ...lexicons.attributes import pack_catalogue

    columns = ("name", "kind", "version", "language", "terms", "source")
    table = Table(title="lexicon packs (--attributes NAME; your own: --attributes FILE.yaml)")
    for column in columns:
        table.add_column(column, justify="right" if column in ("version", "terms") else "left")
    for row in pack_catalogue():
        table.add_row(*("" if row[c] is None else str(row[c]) for c in columns))
    console.print(table)


@attributes_app.command("show")
def attributes_show(
    pack: Annotated[str, typer.Argument(help="A built-in pack's name or a pack file (YAML/JSON).")],
) -> None:
    """Everything a pack holds: provenance, groups, terms, forms."""
    import json

    from ...lexicons.attributes import describe_pack, load_pack

    console.print_json(json.dumps(describe_pack(load_pack(pack)), ensure_ascii=False))


@attributes_app.command("validate")
def attributes_validate(
    file: Annotated[Path, typer.Argument(help="A pack file (YAML/JSON) of kind wordlist, identity or gender.")],
) -> None:
    """Check a pack file: errors name the key and stop with exit code 2; warnings are printed."""
    from ...lexicons.attributes import describe_pack, validate_pack

    pack, warnings = validate_pack(file)
    info = describe_pack(pack)
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    console.print(f"{file}: valid {info['kind']} pack {info['name']!r} with {info['terms']} terms")
