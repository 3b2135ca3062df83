"""Two-input tasks (natural language inference): pair tables for ``evaluate`` from an original file and a file of
human (or generated) revisions, as in CEval's SNLI benchmark (paper 004 §4: revise the premise or the hypothesis so
that the label changes).

Both files have the two inputs and a label (SNLI's ``sentence1``, ``sentence2``, ``gold_label``). The revisions of
one original follow each other, in the original file's order; a revised row belongs to the next original (at or after
the previous one's) whose unchanged sentence is the same, compared with runs of whitespace folded, so one original may
have any number of revisions, or none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .errors import InputError
from .io import cell_text, read_table, require_columns

REVISED_PARTS = ("premise", "hypothesis")


def _fold(text: str | None) -> str:
    return " ".join((text or "").split())


def nli_revision_pairs(
    original: str | Path | pd.DataFrame,
    revised: str | Path | pd.DataFrame,
    *,
    part: str = "premise",
    first: str = "sentence1",
    second: str = "sentence2",
    label: str = "gold_label",
) -> pd.DataFrame:
    """One row per revision: ``orig_text`` / ``gen_text`` (the revised input before and after), ``context`` (the
    input left alone), ``orig_label`` and ``target_label`` (the revision's label), ``original_row``. Evaluate it with
    ``context_column="context"``, ``revised_input="first"`` for a revised premise, ``"second"`` for a hypothesis,
    and ``target_column="target_label"`` to measure the probability change on the label the revision aims at."""
    if part not in REVISED_PARTS:
        raise InputError(f"part must be one of {REVISED_PARTS}, got {part!r}")
    frames = {}
    for name, source in (("original", original), ("revised", revised)):
        frame = source if isinstance(source, pd.DataFrame) else read_table(source)
        where = "DataFrame" if isinstance(source, pd.DataFrame) else str(source)
        require_columns(frame, {first: "first", second: "second", label: "label"}, origin=f"{name} ({where})")
        frames[name] = frame
    changed, kept = (first, second) if part == "premise" else (second, first)
    orig_kept = [_fold(cell_text(v)) for v in frames["original"][kept].tolist()]
    out: list[dict[str, Any]] = []
    at = 0
    for j, row in enumerate(frames["revised"].to_dict("records")):
        key = _fold(cell_text(row[kept]))
        while at < len(orig_kept) and orig_kept[at] != key:
            at += 1
        if at == len(orig_kept):
            raise InputError(
                f"revised row {j}: its {'hypothesis' if part == 'premise' else 'premise'} ({key[:60]!r}) matches no "
                "original row at or after the previous revision's; the revised file must follow the original's order"
            )
        source_row = frames["original"].iloc[at]
        out.append(
            {
                "orig_text": cell_text(source_row[changed]),
                "gen_text": cell_text(row[changed]),
                "context": cell_text(source_row[kept]),
                "orig_label": cell_text(source_row[label]),
                "target_label": cell_text(row[label]),
                "original_row": at,
            }
        )
    return pd.DataFrame(out)
