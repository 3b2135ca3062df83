"""``counterfair nli-pairs``: NLI revisions (SNLI layout) turned into a pair file for ``evaluate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...command_line import app, console


@app.command("nli-pairs", short_help="Turn NLI revisions (SNLI layout) into pairs for evaluate.")
def nli_pairs(
    original: Annotated[Path, typer.Argument(help="Original pairs (sentence1, sentence2, gold_label), e.g. SNLI.")],
    revised: Annotated[Path, typer.Argument(help="Revisions of those pairs, in the original file's order.")],
    part: Annotated[str, typer.Option(help="Which input the revisions edited: premise or hypothesis.")] = "premise",
    out: Annotated[Path, typer.Option("--out", "-o", help="Pair file to write (CSV, JSONL, ...).")] = Path(
        "nli-pairs.csv"
    ),
) -> None:
    """Build an evaluate pair file from an NLI original file and its revisions (CEval's SNLI layout): orig_text and
    gen_text are the revised input before and after, context the other input, target_label the revision's label."""
    from ...nli import nli_revision_pairs
    from ...writing import write_table

    table = nli_revision_pairs(original, revised, part=part)
    write_table(table, out)
    revised_input = "first" if part == "premise" else "second"
    console.print(
        f"wrote {out}: {len(table)} revisions of {table['original_row'].nunique()} originals. Evaluate with "
        f"--context-column context --revised-input {revised_input} --target-column target_label"
    )
