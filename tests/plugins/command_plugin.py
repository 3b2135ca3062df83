"""A plugin that adds a command in this one file: ``counterfair slot-variants TEMPLATE`` prints a template's slot
written with each identity term and placebo word of an LLM audit."""

from __future__ import annotations

from typing import Annotated

import typer

from counterfair.plugins import register_command


@register_command
def slot_variants(
    template: Annotated[str, typer.Argument(help="A prompt with {group} where the identity goes.")],
    identities: Annotated[str, typer.Option(help="Comma-separated identity terms.")] = "gay,straight",
) -> None:
    """Print the variants an LLM audit would ask."""
    from counterfair.commands.llm_audit.core import LLMAuditOptions, plan

    table, _ = plan(["0"], [template], LLMAuditOptions(identities=identities))
    for kind, text in zip(table["kind"], table["text"], strict=True):
        typer.echo(f"{kind}\t{text}")
