"""``counterfair train``: a toxicity classifier trained with a counterfactual-fairness method of paper 001 (blindness,
augmentation, counterfactual logit pairing) or the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console, require_extras
from ...views.console import fmt


@app.command(
    "train",
    short_help="Train a toxicity classifier with a counterfactual-fairness method (paper 001).",
)
def train_command(
    data: Annotated[Path, typer.Argument(help="Texts with a toxic (1) / non-toxic (0) label.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Model directory (usable as --classifier model:DIR).")],
    method: Annotated[str, typer.Option(help="baseline, blind, augment or clp.")] = "baseline",
    lam: Annotated[float, typer.Option("--lambda", help="CLP weight of the logit-pairing term.")] = 1.0,
    nontoxic_only: Annotated[bool, typer.Option(help="CLP: pair non-toxic examples only (CLP_nontox).")] = False,
    augment: Annotated[str, typer.Option(help="Augmentation: all counterfactuals, or one random one.")] = "all",
    architecture: Annotated[str, typer.Option(help="cnn (paper 001) or minilm (head on MiniLM).")] = "cnn",
    identities: Annotated[
        str | None, typer.Option(help="Identity set: dixon50 (35 training / 15 held-out terms) or a file.")
    ] = None,
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    label_column: Annotated[str, typer.Option(help="Column with the labels.")] = "label",
    epochs: Annotated[int, typer.Option(help="Epochs.")] = 10,
    batch_size: Annotated[int, typer.Option(help="Batch size.")] = 64,
    filters: Annotated[int, typer.Option(help="CNN filters per kernel size (paper 001: 300).")] = 300,
    vectors: Annotated[str, typer.Option(help="CNN word vectors: learned, or spacy (medium model).")] = "learned",
    freeze_vectors: Annotated[
        bool, typer.Option(help="Keep pretrained vectors (--vectors spacy) as loaded instead of fine-tuning them.")
    ] = False,
    clp_reduction: Annotated[
        str,
        typer.Option(
            help="CLP pair term over a batch: sum (paper 001's objective; λ compares with the paper's) or mean."
        ),
    ] = "sum",
    seed: Annotated[int, typer.Option(min=0, help="Seed.")] = 0,
    resume: Annotated[bool, typer.Option(help="Continue an interrupted training from OUT/checkpoint.pt.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Train a toxicity classifier with a counterfactual-fairness method of paper 001 (blindness, augmentation,
    counterfactual logit pairing) or the baseline."""
    require_extras("counterfair train", "train")
    from ...progress import RichProgress
    from ...training import TrainConfig, train

    config = TrainConfig(
        method=method,
        lam=lam,
        nontoxic_only=nontoxic_only,
        augment=augment,
        architecture=architecture,
        identities=identities,
        epochs=epochs,
        batch_size=batch_size,
        filters=filters,
        vectors=vectors,
        freeze_vectors=freeze_vectors,
        clp_reduction=clp_reduction,
        seed=seed,
    )
    with RichProgress(enabled=not quiet) as progress:
        result = train(
            data, out, config, text_column=text_column, label_column=label_column, resume=resume, progress=progress
        )
    last = result.history[-1] if result.history else {}
    console.print(f"trained {method} in {result.seconds:.1f} s; final loss {last.get('loss', float('nan')):.4f}")
    ev = result.evaluation
    if ev is not None:
        console.print(
            f"on the {ev['on']}: accuracy {fmt(ev['accuracy'])}, AUC {fmt(ev['auc'])}, TPR {fmt(ev['tpr'])}, "
            f"TNR {fmt(ev['tnr'])}"
        )
        if ev["collapse_warning"]:
            console.print(f"[yellow]warning:[/yellow] the model may have collapsed: {ev['collapse_warning']}")
    console.print(f"wrote {out}; use it as --classifier model:{out}")
