"""``counterfair metrics``: the metric cards (definition, range, direction, reference)."""

from __future__ import annotations

from ...command_line import app, console


@app.command(
    "metrics",
    short_help="Show the metric cards: definition, range, direction, reference.",
)
def metrics_cards() -> None:
    """Show the metric cards: definition, range, direction, reference."""
    from ...metrics.cards import CARDS

    for card in CARDS.values():
        console.print(f"[bold]{card.name}[/bold]  columns: {', '.join(card.columns)}")
        console.print(f"  {card.definition}")
        console.print(f"  range: {card.range}; direction: {card.direction}")
        console.print(f"  reference: {card.reference}\n")
