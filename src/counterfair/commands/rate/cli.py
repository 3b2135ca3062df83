"""``counterfair rate``: human rating of counterfactuals (a web app, CSV exchange, consolidation) and LLM judges."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console, one_attribute, require_extras
from ...views.console import fmt, rating_view

rate_app = typer.Typer(
    help="Human rating of counterfactuals: a web app, CSV exchange, consolidation, LLM judges.", no_args_is_help=True
)
app.add_typer(
    rate_app,
    name="rate",
)


@rate_app.command("init")
def rate_init(
    directory: Annotated[Path, typer.Argument(help="New rating project directory.")],
    source: Annotated[Path, typer.Option("--from", help="A generate run, an audit run, or a CSV of pairs.")],
    attribute: Annotated[
        str | None,
        typer.Option(
            "--attributes",
            "--attribute",
            callback=one_attribute,
            help="The pairs' attribute, when the pairs file has no 'attribute' column.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the shuffled order.")] = 0,
) -> None:
    """Create a rating project from counterfactual pairs (shuffled; the generating method is hidden from raters)."""
    from ...rating import RatingStore, pairs_from_run

    store = RatingStore.create(directory, pairs_from_run(source, attribute=attribute), seed=seed)
    console.print(
        f"{len(store.pairs())} pairs to rate in {store.path}; start the app with: counterfair rate serve {directory}"
    )


@rate_app.command("serve")
def rate_serve(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback requires a token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    token: Annotated[str | None, typer.Option(help="Access token (generated for non-loopback hosts).")] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A host name raters use to reach the app (repeatable); by default the bound address (loopback "
            "names on loopback); on 0.0.0.0 any host unless given."
        ),
    ] = None,
) -> None:
    """Serve the rating web app."""
    require_extras("counterfair rate serve", "rate")
    from ...rating.app import serve

    serve(directory, host=host, port=port, token=token, allowed_hosts=allowed_host)


@rate_app.command("export")
def rate_export(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="CSV file to write.")],
) -> None:
    """Export ratings as CSV (pair_id, rater, fluent, reference, same_label, meaning, reject)."""
    from ...rating import RatingStore

    count = RatingStore(directory).export_csv(out)
    console.print(f"wrote {count} ratings to {out}")


@rate_app.command("import")
def rate_import(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    ratings: Annotated[
        Path, typer.Argument(help="CSV with pair_id, rater, fluent, reference, same_label, meaning, reject.")
    ],
    replace: Annotated[bool, typer.Option(help="Overwrite a rater's earlier rating of the same pair.")] = False,
) -> None:
    """Import ratings made outside the app (every row is checked first; a bad file adds nothing)."""
    from ...rating import RatingStore

    count = RatingStore(directory).import_csv(ratings, replace=replace)
    console.print(f"imported {count} ratings")


@rate_app.command("consolidate")
def rate_consolidate(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    min_meaning: Annotated[float, typer.Option(help="Minimum mean meaning score of a good pair.")] = 2.0,
) -> None:
    """Majority votes, Krippendorff's alpha, good pairs, and tables like paper 000 Tables 3-4."""
    require_extras("counterfair rate consolidate (Krippendorff's alpha)", "rate")
    from ...rating import RatingStore
    from ...rating.consolidate import consolidate

    report = consolidate(RatingStore(directory), min_meaning=min_meaning)
    console.print(f"{report['good_pairs']} good pairs of {report['rated_pairs']} rated ({report['pairs']} in all)")
    console.print("Krippendorff's alpha: " + ", ".join(f"{k} {fmt(v)}" for k, v in report["alpha"].items()))
    console.print(rating_view(report))
    console.print(f"wrote {directory / 'consolidated.csv'} and {directory / 'consolidation.json'}")


@rate_app.command("judge")
def rate_judge(
    directory: Annotated[Path, typer.Argument(help="Rating project directory.")],
    llm: Annotated[str, typer.Option(help="LLM spec.")] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Let an LLM answer the four rating questions for every pair (stored as rater llm:<model>)."""
    from ...needs import llm_extras

    require_extras(f"the LLM {llm!r}", *llm_extras(llm))
    from ...errors import ConfigError as _ConfigError
    from ...lexicons.attributes import load_attribute
    from ...llm import load_llm
    from ...progress import RichProgress
    from ...rating import RatingStore
    from ...rating.judges import judge_store

    def subject(attribute: str) -> str:
        try:
            return load_attribute(attribute).subject
        except _ConfigError:
            return attribute

    with RichProgress(enabled=not quiet) as progress:
        result = judge_store(RatingStore(directory), load_llm(llm), subject_of=subject, progress=progress)
    console.print(
        f"{result['judged'] - result['failed']} pairs judged by {result['rater']}, {result['failed']} "
        f"unparseable (raw answers in {result['log']})"
    )
