"""``counterfair select``: texts fit for generation (paper 000's rules), with what each rule removed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console, help_text, one_attribute


@app.command(
    "select",
    short_help="Pick texts fit for generation (paper 000's rules) and count what each rule removed.",
)
def select_command(
    data: Annotated[Path, typer.Argument(help="Texts (CSV/TSV/JSONL/JSON/Parquet).")],
    attribute: Annotated[
        str,
        typer.Option(
            "--attributes",
            "--attribute",
            callback=one_attribute,
            help="One word-list attribute: islam, judaism, lgbq, transgender, or a YAML/JSON word-list file.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the kept texts (CSV).")],
    text_column: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    attribute_column: Annotated[
        str | None, typer.Option(help="Column with the attribute-reference probability (else --detector).")
    ] = None,
    detector: Annotated[
        str, typer.Option(help=help_text("Attribute detector: keyword, keyword+llm, mlp:DIR[#LABEL] or llm."))
    ] = "keyword",
    llm: Annotated[
        str, typer.Option(help="LLM for --detector llm or keyword+llm.")
    ] = "llamacpp:qwen2.5-coder-1.5b-instruct",
    toxicity_column: Annotated[
        str | None, typer.Option(help="Column with a toxicity score (else --classifier).")
    ] = None,
    classifier: Annotated[str, typer.Option(help="Toxicity classifier when there is no --toxicity-column.")] = (
        "profanity-check"
    ),
    min_words: Annotated[int, typer.Option(help="Fewest words (paper 000: 10).")] = 10,
    max_words: Annotated[int, typer.Option(help="Most words (paper 000: 45).")] = 45,
    min_attribute: Annotated[float, typer.Option(help="Least attribute probability (paper 000: 0.8).")] = 0.8,
    max_toxicity: Annotated[float, typer.Option(help="Largest toxicity (paper 000: 0.1).")] = 0.1,
) -> None:
    """Select texts as paper 000 §4.1 (10-45 words, no URL, attribute probability >= 0.8, toxicity <= 0.1) and say
    how many each rule removed."""
    from types import SimpleNamespace

    from ...detectors import DETECTORS_WITH_LLM
    from ...needs import require
    from ...selection import select_texts
    from ...writing import write_json, write_table

    require(SimpleNamespace(detector=detector, llm=llm, classifier=None if toxicity_column else classifier))

    the_llm = None
    if detector in DETECTORS_WITH_LLM:
        from ...llm import load_llm

        the_llm = load_llm(llm)
    kept, report = select_texts(
        data,
        attribute=attribute,
        text_column=text_column,
        attribute_column=attribute_column,
        detector=detector,
        llm=the_llm,
        toxicity_column=toxicity_column,
        classifier=None if toxicity_column else classifier,
        min_words=min_words,
        max_words=max_words,
        min_attribute=min_attribute,
        max_toxicity=max_toxicity,
    )
    write_table(kept, out)
    write_json(report, out.with_suffix(".summary.json"))
    removed = ", ".join(f"{rule} {n}" for rule, n in report["removed"].items())
    console.print(f"kept {report['kept']} of {report['texts']} texts; removed by rule: {removed}")
    console.print(f"wrote {out} and {out.with_suffix('.summary.json')}")
