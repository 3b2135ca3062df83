"""``counterfair models``: the models counterfair knows, installed or not, and how to install them."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ...command_line import app, console


@app.command(
    short_help="List the models counterfair knows: installed or not, where, and how to install them.",
)
def models(
    verify: Annotated[bool, typer.Option("--verify", help="Compute sha256 of every installed model file.")] = False,
) -> None:
    """List the models counterfair knows: installed or not, file path, sha256 status, install line."""
    from ...models import describe, known_models

    statuses = describe(known_models(), verify=verify)
    table = Table(title="models")
    table.add_column("name", no_wrap=True)
    for column in ("kind", "installed", "sha256"):
        table.add_column(column)
    for status in statuses:
        installed = "yes" if status.installed else "[red]no[/red]"
        table.add_row(status.name, status.kind, installed, status.sha256)
    console.print(table)
    for status in statuses:
        where = status.path if status.installed else f"not installed; install with: {status.pip}"
        console.print(f"[bold]{status.name}[/bold]: {where}", soft_wrap=True)
