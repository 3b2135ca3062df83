"""The command line: counterfactual token fairness and fair models: ctf, train, train-attribute."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import (
    AUDIT_COMMANDS,
    CLASSIFIER_HELP,
    TRAIN_COMMANDS,
    Address,
    Encoding,
    Engine,
    Language,
    MaxTextChars,
    Overwrite,
    Parquet,
    app,
    console,
    declared,
    flag,
    require_extras,
)
from ...runs import allow_overwrite
from ...views.console import fmt
from ...views.page import to_console
from .core import CTFOptions
from .page import ctf_page

#: every default of the command's options is CTFOptions's, read from it (#48: an option declared once)
_CTF = declared(CTFOptions)


@app.command(
    rich_help_panel=AUDIT_COMMANDS,
    short_help="The CTF gap of identity swaps (paper 001), overall, per term and per direction.",
)
def ctf(
    data: Annotated[Path, typer.Argument(help="Texts (CSV/TSV/JSONL/JSON/Parquet), optionally with a 0/1 label.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for summary.json and pairs.csv.")] = Path(
        "counterfair-ctf"
    ),
    classifier: Annotated[str, typer.Option(help=CLASSIFIER_HELP)] = "profanity-check",
    identities: Annotated[str | None, flag(CTFOptions, "identities")] = _CTF.identities,
    identities_file: Annotated[Path | None, typer.Option(help="Identity terms from a YAML/JSON/TXT file.")] = None,
    text_column: Annotated[str, flag(CTFOptions, "text_column")] = _CTF.text_column,
    id_column: Annotated[str | None, flag(CTFOptions, "id_column")] = _CTF.id_column,
    label_column: Annotated[str | None, flag(CTFOptions, "label_column")] = _CTF.label_column,
    positive_label: Annotated[str | None, flag(CTFOptions, "positive_label")] = _CTF.positive_label,
    guard: Annotated[bool, flag(CTFOptions, "guard")] = _CTF.guard
    is not None,  # the options name the guard ("spacy"); the flag turns it on or off
    tokens_only: Annotated[
        bool,
        typer.Option(
            "--tokens-only",
            help="Paper 001's Φ_A exactly: listed terms swapped token for token (no plurals, noun forms, capitals "
            "or a/an agreement), as blindness assumes.",
        ),
    ] = False,
    seed: Annotated[int, flag(CTFOptions, "seed", min=0)] = _CTF.seed,
    max_text_chars: MaxTextChars = _CTF.max_text_chars,
    encoding: Encoding = _CTF.encoding,
    language: Language = _CTF.language,
    engine: Engine = "local",
    address: Address = None,
    parquet: Parquet = False,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Counterfactual token fairness (paper 001): swap identity terms, compare the classifier's scores, report the
    CTF gap overall, for toxic and non-toxic texts, training and held-out terms, per term and per direction."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .shell import run_ctf

    if identities and identities_file:
        raise typer.BadParameter("give --identities or --identities-file, not both")
    with RichProgress(enabled=not quiet) as progress:
        result = run_ctf(
            data,
            out,
            classifier=classifier,
            identities=str(identities_file) if identities_file else identities,
            text_column=text_column,
            id_column=id_column,
            label_column=label_column,
            positive_label=positive_label,
            guard="spacy" if guard else None,
            grammar=not tokens_only,
            max_text_chars=max_text_chars,
            encoding=encoding,
            language=language,
            seed=seed,
            progress=progress,
            engine=engine,
            address=address,
        )
    if parquet:
        from ...runs import parquet_copies

        parquet_copies(out, ("pairs.csv",))
    console.print(to_console(ctf_page(result.typed_summary)))
    console.print(f"wrote {out / 'summary.json'} and {out / 'pairs.csv'}{' (and pairs.parquet)' if parquet else ''}")


@app.command(
    "train",
    rich_help_panel=TRAIN_COMMANDS,
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
    console.print(
        f"on the {ev['on']}: accuracy {fmt(ev['accuracy'])}, AUC {fmt(ev['auc'])}, TPR {fmt(ev['tpr'])}, "
        f"TNR {fmt(ev['tnr'])}"
    )
    if ev.get("collapse_warning"):
        console.print(f"[yellow]warning:[/yellow] the model may have collapsed: {ev['collapse_warning']}")
    console.print(f"wrote {out}; use it as --classifier model:{out}")


@app.command(
    "train-attribute",
    rich_help_panel=TRAIN_COMMANDS,
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
