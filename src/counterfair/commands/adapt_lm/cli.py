"""``counterfair adapt-lm``: a language model adapted to the user's texts (the domain perplexity of paper 002)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console, require_extras


@app.command(
    "adapt-lm",
    short_help="Adapt a language model to your texts (the domain perplexity of paper 002).",
)
def adapt_lm_command(
    data: Annotated[Path, typer.Argument(help="Domain texts (CSV/TSV/JSONL/JSON/Parquet).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the adapted transformers model.")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    base: Annotated[str, typer.Option(help="Base causal LM.")] = "gemma-3-270m",
    layers: Annotated[int, typer.Option(help="Number of final blocks to fine-tune.")] = 2,
    epochs: Annotated[int, typer.Option(help="Passes over the texts.")] = 1,
    limit: Annotated[int | None, typer.Option(help="Only the first N texts.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Adapt an LM to domain texts (the ppl-fine model of paper 002) by fine-tuning its last blocks on the CPU."""
    require_extras("counterfair adapt-lm", "metrics")
    from ...io import cell_text, read_table
    from ...progress import RichProgress
    from ..feedback.core import adapt_lm

    texts = [cell_text(v) or "" for v in read_table(data)[text_column].tolist()][:limit]
    with RichProgress(enabled=not quiet) as progress:
        path = adapt_lm(
            [t for t in texts if t.strip()], out, base=base, train_layers=layers, epochs=epochs, progress=progress
        )
    console.print(f"wrote {path}; use it with --ppl-fine-model {path}")
