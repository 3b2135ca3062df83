"""The command line: making counterfactuals and choosing texts: generate, select, attributes, wordlist."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ...command_line import (
    MAKE_COMMANDS,
    SETUP_COMMANDS,
    Encoding,
    Language,
    LLMConcurrency,
    LLMParallel,
    MaxTextChars,
    OneAttribute,
    Overwrite,
    RetryNearness,
    app,
    console,
    declared,
    flag,
    joined,
    one_attribute,
    options_from,
)
from ...editors.registry import editors_help
from ...runs import allow_overwrite
from ...views.page import to_console
from .options import GenerateOptions
from .page import generate_page

#: every default of the command's options is GenerateOptions's, read from it (#48: an option declared once)
_GENERATE = declared(GenerateOptions)


@app.command(
    rich_help_panel=MAKE_COMMANDS,
    short_help="Write counterfactual texts: word lists, identity swaps, LLM rewriting with filters.",
)
def generate(
    data: Annotated[Path, typer.Argument(help="Texts that reference the attribute (CSV/TSV/JSONL/JSON/Parquet).")],
    attribute: OneAttribute = _GENERATE.attribute,
    methods: Annotated[str, typer.Option(help="Comma-separated: " + editors_help("generate"))] = ",".join(
        _GENERATE.methods
    ),
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (a rerun with it resumes).")] = Path(
        "counterfair-generate"
    ),
    text_column: Annotated[str, flag(GenerateOptions, "text_column")] = _GENERATE.text_column,
    id_column: Annotated[str | None, flag(GenerateOptions, "id_column")] = _GENERATE.id_column,
    identities: Annotated[str | None, flag(GenerateOptions, "identities")] = _GENERATE.identities,
    guard: Annotated[bool, flag(GenerateOptions, "guard")] = _GENERATE.guard
    is not None,  # the options name the guard ("spacy"); the flag turns it on or off
    llm: Annotated[str, flag(GenerateOptions, "llm")] = _GENERATE.llm,
    polyjuice_model: Annotated[
        str,
        flag(GenerateOptions, "polyjuice_model"),
    ] = _GENERATE.polyjuice_model,
    prompt_style: Annotated[str, flag(GenerateOptions, "prompt_style")] = _GENERATE.prompt_style,
    instruction: Annotated[str | None, flag(GenerateOptions, "instruction")] = _GENERATE.instruction,
    samples: Annotated[int, flag(GenerateOptions, "samples")] = _GENERATE.samples,
    max_attempts: Annotated[int, flag(GenerateOptions, "max_attempts")] = _GENERATE.max_attempts,
    retry_nearness: RetryNearness = _GENERATE.retry_nearness,
    llm_parallel: LLMParallel = _GENERATE.llm_parallel,
    llm_concurrency: LLMConcurrency = _GENERATE.llm_concurrency,
    llm_chunk: Annotated[int, flag(GenerateOptions, "llm_chunk")] = _GENERATE.llm_chunk,
    min_bleu: Annotated[float, flag(GenerateOptions, "min_bleu")] = _GENERATE.min_bleu,
    min_bertscore: Annotated[float, flag(GenerateOptions, "min_bertscore")] = _GENERATE.min_bertscore,
    max_attribute_prob: Annotated[float, flag(GenerateOptions, "max_attribute_prob")] = _GENERATE.max_attribute_prob,
    detector: Annotated[
        str,
        flag(GenerateOptions, "detector"),
    ] = _GENERATE.detector,
    score_methods: Annotated[
        str | None,
        flag(GenerateOptions, "score_methods"),
    ] = joined(_GENERATE.score_methods),
    seed: Annotated[int, flag(GenerateOptions, "seed", min=0)] = _GENERATE.seed,
    engine: Annotated[str, flag(GenerateOptions, "engine")] = _GENERATE.engine,
    address: Annotated[str | None, flag(GenerateOptions, "address")] = _GENERATE.address,
    max_text_chars: MaxTextChars = _GENERATE.max_text_chars,
    encoding: Encoding = _GENERATE.encoding,
    language: Language = _GENERATE.language,
    overwrite: Overwrite = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Generate counterfactuals of attribute-referencing texts: word-list ablation and substitution, identity
    swaps, LLM rewriting with filters. Writes OUT/candidates.csv, OUT/counterfactuals.csv, OUT/summary.json."""
    if overwrite:
        allow_overwrite(out)  # --overwrite: the run's claim replaces the one there
    from ...progress import RichProgress
    from .options import GenerateOptions
    from .shell import run_generate

    options = options_from(
        GenerateOptions,
        locals(),
        methods=methods.split(","),
        guard="spacy" if guard else None,
        score_methods=score_methods.split(",") if score_methods else None,
    )
    from ... import io

    if io.streamed(data, options.fmt) and not quiet:  # the check of every row comes before the first bar
        size = Path(data).stat().st_size / 2**20
        console.print(f"{data}: {size:,.0f} MB, read in blocks of {io.BLOCK_ROWS:,} rows; checking every row first")
    with RichProgress(enabled=not quiet) as progress:
        result = run_generate(data, out, options, progress=progress)
    console.print(to_console(generate_page(result.summary)))
    console.print(f"wrote {out / 'counterfactuals.csv'}, {out / 'candidates.csv'} and {out / 'summary.json'}")


@app.command(
    "select",
    rich_help_panel=MAKE_COMMANDS,
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
        str, typer.Option(help="Attribute detector: keyword, keyword+llm, mlp:DIR[#LABEL] or llm.")
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


attributes_app = typer.Typer(
    help="Lexicon packs: the attributes (word lists), identity sets, names, nationalities and gender swaps.",
    no_args_is_help=True,
)
app.add_typer(attributes_app, name="attributes", rich_help_panel=SETUP_COMMANDS)


@attributes_app.command("list")
def attributes_list() -> None:
    """The built-in packs, with kind, version, language, size and source."""
    from ...lexicons.attributes import pack_catalogue

    columns = ("name", "kind", "version", "language", "terms", "source")
    table = Table(title="lexicon packs (--attributes NAME; your own: --attributes FILE.yaml)")
    for column in columns:
        table.add_column(column, justify="right" if column in ("version", "terms") else "left")
    for row in pack_catalogue():
        table.add_row(*("" if row[c] is None else str(row[c]) for c in columns))
    console.print(table)


@attributes_app.command("show")
def attributes_show(
    pack: Annotated[str, typer.Argument(help="A built-in pack's name or a pack file (YAML/JSON).")],
) -> None:
    """Everything a pack holds: provenance, groups, terms, forms."""
    import json

    from ...lexicons.attributes import describe_pack, load_pack

    console.print_json(json.dumps(describe_pack(load_pack(pack)), ensure_ascii=False))


@attributes_app.command("validate")
def attributes_validate(
    file: Annotated[Path, typer.Argument(help="A pack file (YAML/JSON) of kind wordlist, identity or gender.")],
) -> None:
    """Check a pack file: errors name the key and stop with exit code 2; warnings are printed."""
    from ...lexicons.attributes import describe_pack, validate_pack

    pack, warnings = validate_pack(file)
    info = describe_pack(pack)
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    console.print(f"{file}: valid {info['kind']} pack {info['name']!r} with {info['terms']} terms")


wordlist_app = typer.Typer(help="Word lists for new attributes (paper 000, App. B.1).", no_args_is_help=True)
app.add_typer(wordlist_app, name="wordlist", rich_help_panel=SETUP_COMMANDS)


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
