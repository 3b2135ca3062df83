"""``counterfair wordlist``: word lists for new attributes derived from labelled texts (paper 000, App. B.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ...command_line import app, console

wordlist_app = typer.Typer(help="Word lists for new attributes (paper 000, App. B.1).", no_args_is_help=True)
app.add_typer(
    wordlist_app,
    name="wordlist",
)


@wordlist_app.command("derive")
def wordlist_derive(
    data: Annotated[Path, typer.Argument(help="Texts with an attribute label or score (CSV/TSV/JSONL/Parquet).")],
    label_column: Annotated[str, typer.Option(help="Column with the attribute's score or label.")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    positive: Annotated[
        str | None, typer.Option(help="The label that marks the attribute (default: the column is a score).")
    ] = None,
    threshold: Annotated[float, typer.Option(help="A score above this marks the attribute (paper 000: 0.5).")] = 0.5,
    toxicity_column: Annotated[
        str | None, typer.Option(help="Keep only texts whose toxicity is at most --max-toxicity (paper: < 0.1).")
    ] = None,
    max_toxicity: Annotated[float, typer.Option(help="Largest toxicity kept.")] = 0.1,
    negatives: Annotated[
        int | None, typer.Option(metavar="N", help="Sample this many texts without the attribute.")
    ] = None,
    top: Annotated[int, typer.Option(help="How many terms to propose (paper 000: 20).")] = 20,
    min_count: Annotated[int, typer.Option(help="Least number of attribute texts a term must appear in.")] = 5,
    name: Annotated[str, typer.Option(help="The attribute's name in the YAML draft.")] = "my-attribute",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write a YAML attribute draft to hand-filter.")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the negative sample.")] = 0,
) -> None:
    """Propose the unigrams most associated with an attribute, by naive Bayes, for a word list to filter by hand."""
    from ...lexicons.derive import derive

    derived = derive(
        data,
        label_column=label_column,
        text_column=text_column,
        positive=positive,
        threshold=threshold,
        toxicity_column=toxicity_column,
        max_toxicity=max_toxicity,
        negatives=negatives,
        top=top,
        min_count=min_count,
        seed=seed,
    )
    table = Table(
        title=f"terms of the attribute ({derived.attribute_texts} texts) against the rest ({derived.other_texts})"
    )
    for column in ("term", "log ratio", "attribute texts", "other texts"):
        table.add_column(column, justify="left" if column == "term" else "right")
    for row in derived.terms.itertuples():
        table.add_row(str(row.term), f"{row.log_ratio:.3f}", str(row.attribute_texts), str(row.other_texts))
    console.print(table)
    if any(derived.removed.values()):
        console.print("left out: " + ", ".join(f"{k} {v}" for k, v in derived.removed.items() if v))
    if out is not None:
        out.write_text(derived.to_yaml(name), encoding="utf-8")
        console.print(f"wrote {out}: filter it by hand, then use it as --attribute {out}")
