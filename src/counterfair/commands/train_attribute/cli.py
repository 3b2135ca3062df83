"""``counterfair train-attribute``: the attribute-reference detector of paper 000 (an MLP over MiniLM embeddings)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console, require_extras


@app.command(
    "train-attribute",
    short_help="Train the attribute detector of paper 000 (an MLP over MiniLM embeddings).",
)
def train_attribute(
    data: Annotated[Path, typer.Argument(help="Texts with identity score columns (CivilComments-Identities style).")],
    label_columns: Annotated[str, typer.Option(help="Comma-separated score columns; positive when > 0.5.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for model.safetensors and config.json.")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "comment_text",
    steps: Annotated[
        int | None,
        typer.Option(help="Mini-batches to train (default: the paper's 36000; about 19 min on 2 CPU cores)."),
    ] = None,
    epochs: Annotated[int | None, typer.Option(help="Train this many passes over the data instead of --steps.")] = None,
    negatives: Annotated[
        str, typer.Option(help="Most texts with no positive label to keep (sampled; paper: 20000), or 'all'.")
    ] = "20000",
    batch_size: Annotated[int, typer.Option(help="Batch size.")] = 256,
    seed: Annotated[int, typer.Option(min=0, help="Seed.")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Train the attribute-reference classifier of paper 000 App. A.3 (2-layer MLP, hidden 2048, over MiniLM
    embeddings; multi-label BCE, AdamW lr 1e-3, weight decay 2e-3, batch 256, 36k steps, all positive texts and 20k
    sampled negatives). Use it with --detector mlp:OUT."""
    require_extras("counterfair train-attribute", "metrics")
    from ...detectors import train_attribute_classifier
    from ...errors import ConfigError
    from ...progress import RichProgress

    if negatives != "all" and not (negatives.isdigit() and int(negatives) > 0):
        raise ConfigError(f"--negatives: {negatives!r} is neither a positive number nor 'all'")
    with RichProgress(enabled=not quiet) as progress:
        result = train_attribute_classifier(
            data,
            out,
            text_column=text_column,
            label_columns=[c.strip() for c in label_columns.split(",") if c.strip()],
            steps=steps,
            epochs=epochs,
            negatives=None if negatives == "all" else int(negatives),
            batch_size=batch_size,
            seed=seed,
            progress=progress,
        )
    kept = result.metrics["negatives"]
    console.print(
        f"trained {result.metrics['steps']} steps on {result.metrics['train_rows']} texts "
        f"({kept['kept']} of {kept['available']} without a label) in {result.metrics['seconds']:.0f} s"
    )
    for label, entry in result.metrics.get("validation", {}).items():
        console.print(
            f"{label}: validation F1 {entry['f1']:.3f}" + (f", AUC {entry['auc']:.3f}" if "auc" in entry else "")
        )
    console.print(f"wrote {out / 'model.safetensors'} and {out / 'config.json'}")
