"""What the report pages share: an edit's word-level highlight (:func:`edit_html`), the plots embedded
(:func:`embed_figures`, :mod:`.plots`), the page template rendered with every value escaped (:func:`render`) and
written whole (:func:`write_page`). Each command's page is in its slice (``commands/<name>/page.py``)."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from ...writing import atomic_open
from . import plots

__all__ = ["edit_html", "embed_figures", "plots", "render", "write_page"]

HIGHLIGHT_TOKENS = 20_000  # a changed stretch longer than this (words, both sides) is shown whole, not diffed
CONTEXT_WORDS = 30  # unchanged words shown around each edit; longer unchanged runs are elided


def edit_html(original: str, counterfactual: str) -> str:
    """Word-level diff: removed words in ``<del>``, added ones in ``<ins>``; everything escaped.

    Linear in the texts' length: the common prefix and suffix are cut off first, only the changed middle is diffed
    (rapidfuzz's word-level Levenshtein, the distance counterfair reports), a middle longer than
    :data:`HIGHLIGHT_TOKENS` is shown as one deletion and one insertion, and unchanged runs longer than twice
    :data:`CONTEXT_WORDS` are elided ("… 1,234 words …"). One long text can no longer hang a report."""
    a, b = original.split(), counterfactual.split()
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    parts = [_equal(a[:head], first=True)] if head else []
    if len(mid_a) + len(mid_b) > HIGHLIGHT_TOKENS:  # too long to diff: one deletion and one insertion, elided
        parts += _changed(mid_a, mid_b, elide=True)
    else:
        from rapidfuzz.distance import Levenshtein

        for op in Levenshtein.opcodes(mid_a, mid_b):
            if op.tag == "equal":
                parts.append(_equal(mid_a[op.src_start : op.src_end]))
            else:
                parts += _changed(mid_a[op.src_start : op.src_end], mid_b[op.dest_start : op.dest_end])
    if tail:
        parts.append(_equal(a[len(a) - tail :], last=True))
    return " ".join(p for p in parts if p)


def _changed(removed: list[str], added: list[str], *, elide: bool = False) -> list[str]:
    def shown(words: list[str]) -> str:
        if not elide or len(words) <= 2 * CONTEXT_WORDS:
            return html.escape(" ".join(words))
        middle = f'</del><span class="elided"> … {len(words) - 2 * CONTEXT_WORDS:,} words … </span><del>'
        return html.escape(" ".join(words[:CONTEXT_WORDS])) + middle + html.escape(" ".join(words[-CONTEXT_WORDS:]))

    out = [f"<del>{shown(removed)}</del>"] if removed else []
    return out + ([f"<ins>{shown(added).replace('</del>', '</ins>').replace('<del>', '<ins>')}</ins>"] if added else [])


def _equal(words: list[str], *, first: bool = False, last: bool = False) -> str:
    """Unchanged words, with the middle of a long run elided (all of it before the first edit or after the last)."""
    keep = CONTEXT_WORDS
    if len(words) <= (keep if first or last else 2 * keep):
        return html.escape(" ".join(words))
    gap = f'<span class="elided">… {len(words) - (keep if first or last else 2 * keep):,} words …</span>'
    if first:
        return gap + " " + html.escape(" ".join(words[-keep:]))
    if last:
        return html.escape(" ".join(words[:keep])) + " " + gap
    return html.escape(" ".join(words[:keep])) + " " + gap + " " + html.escape(" ".join(words[-keep:]))


def embed_figures(made: list[tuple[str, str, dict[str, str] | None]]) -> list[dict[str, str]]:
    """(name, caption, paths from a plot function) -> what the templates show: the PNG inline, a link to the SVG."""
    figures = []
    for name, caption, paths in made:
        if paths is None:
            continue
        png = base64.b64encode(Path(paths["png"]).read_bytes()).decode("ascii")
        figures.append({"name": name, "caption": caption, "png": png, "svg": f"plots/{name}.svg"})
    return figures


def render(template: str, **context: Any) -> str:
    """A report template rendered with HTML escaping of every value (texts are user data)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape(["j2", "html"])
    )
    return env.get_template(template).render(**context)


def write_page(page: str, path: Path) -> None:
    """A report page (HTML, Markdown) written whole, a URL's credentials redacted (:mod:`counterfair.redact`)."""
    from ...redact import redact

    with atomic_open(path, "w", encoding="utf-8") as handle:
        handle.write(redact(page))
