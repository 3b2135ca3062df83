"""The documentation's generated pages (tools/docs_hooks.py): the CLI reference holds every command, the options table
every option with one placeholder, the API page every public name; paper numbers link to their citations. The site
itself is built with warnings as errors by `make test` (`make docs`)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import counterfair as cf

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "tools" / "docs_hooks.py")
assert spec and spec.loader
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)


def test_generated_reference_pages_cover_the_commands_options_and_api() -> None:
    cli = hooks.cli_reference()
    commands = [name for name, _ in hooks._commands()]
    assert len(commands) >= 30
    for name in commands:
        assert f"## `counterfair {name}`" in cli, name
    assert "&#x27;" not in cli and "<str>" not in cli and "* `--classifier SPEC`" in cli
    options = hooks.options_reference()
    row = next(line for line in options.splitlines() if line.startswith("| `--attributes`"))
    assert "`NAME|FILE,...`" in row or "`NAME|FILE`" in row
    assert "`generate`" in row and "`audit`" in row
    api = hooks.api_reference()
    listed = set(re.findall(r"^::: counterfair\.[\w.]+\.(\w+)$", api, re.M))
    assert {n for n in cf.__all__ if n[0].isupper() and n.endswith(("Options", "Result"))} <= listed
    assert {"audit", "generate", "evaluate", "ctf", "feedback", "bias", "suite", "assert_fair"} <= listed


def test_paper_numbers_link_to_their_citation_outside_code() -> None:
    page = SimpleNamespace(file=SimpleNamespace(src_uri="how-to/generate.md"))
    text = "As paper 000 says (`paper 001`),\n```bash\n# paper 002\n```\nand papers 004."
    out = hooks.on_page_markdown(text, page, None, None)
    assert "[paper 000](../concepts/papers.md#paper-000)" in out
    assert "`paper 001`" in out and "# paper 002" in out  # code left alone
    assert "[papers 004](../concepts/papers.md#paper-004)" in out
    papers = (REPO / "docs" / "concepts" / "papers.md").read_text(encoding="utf-8")
    for number in ("000", "001", "002", "004"):
        assert f"{{#paper-{number}}}" in papers


def test_the_demo_size_in_the_docs_is_the_demos() -> None:
    """#34 item 9: the README said 64 demo texts while the demo audits 80: every "N sentences/texts" said of the demo
    in the README and the docs is the demo file's row count."""
    import pandas as pd

    from counterfair.core.audit import demo_path

    rows = len(pd.read_csv(demo_path()))
    # the user's pages (benchmark rows are measurements of their day and say so)
    pages = [REPO / "README.md", *sorted(p for p in (REPO / "docs").rglob("*.md") if p.name != "benchmarks.md")]
    said = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"(?<![\d,.])(\d+) (?:demo )?(?:sentences|texts)", text):
            if "demo" in text[max(0, match.start() - 80) : match.end() + 80].lower():
                said.append((page.name, int(match.group(1))))
    assert said, "the quickstart states the demo's size"
    assert all(n == rows for _, n in said), (rows, said)


# Figures the docs state, each with the results JSON it comes from (#49 item 13): (page, the sentence's words around
# the figure with {} where it stands, results file, the keys into the JSON, how it is written). A rerun that moves a
# figure fails here until the page says the new one.
DOC_FIGURES = [
    (
        "docs/how-to/llm-audit.md",
        "is found in {}–",
        "llm_calibration.json",
        ("results", "favour", "100", "flagged"),
        "{:.0%}",
    ),
    (
        "docs/how-to/llm-audit.md",
        "–{} % of runs at 100 prompts × 5 samples",
        "llm_calibration.json",
        ("results", "group", "100", "flagged"),
        "{:.0%}",
    ),
    (
        "docs/how-to/llm-audit.md",
        "needs about 200 prompts ({} %)",
        "llm_calibration.json",
        ("results", "term", "200", "flagged"),
        "{:.0%}",
    ),
    (
        "docs/concepts/labelled-data.md",
        "| profanity-check (default) | 0.892 | {} |",
        "bias_dixon.json",
        ("classifiers", "profanity-check", "overall", "final_metric"),
        "{:.3f}",
    ),
    (
        "docs/concepts/labelled-data.md",
        "| sexuality {} |",
        "bias_dixon.json",
        ("classifiers", "profanity-check", "groups", "sexuality", "bpsn_auc"),
        "{:.3f}",
    ),
    (
        "docs/how-to/bias.md",
        "lowest BPSN AUC ({})",
        "bias_dixon.json",
        ("classifiers", "profanity-check", "groups", "sexuality", "bpsn_auc"),
        "{:.3f}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "of the occurrences it keeps, **{} %** are identity uses",
        "guard_accuracy.json",
        ("tuning", "overall", "precision", "value"),
        "{:.0%}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "and it keeps **{} %** of the identity",
        "guard_accuracy.json",
        ("tuning", "overall", "recall", "value"),
        "{:.0%}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "drawn after the rule was changed,\n{} %",
        "guard_accuracy.json",
        ("heldout", "overall", "precision", "value"),
        "{:.0%}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "% and {} %. Per term",
        "guard_accuracy.json",
        ("heldout", "overall", "recall", "value"),
        "{:.0%}",
    ),
    (
        "docs/how-to/generate.md",
        "its precision is {} % and its recall",
        "guard_accuracy.json",
        ("tuning", "overall", "precision", "value"),
        "{:.0%}",
    ),
    (
        "docs/reference/run-directories.md",
        "`bias` took {} s of CPU with the guard on a first run",
        "bias_floor.json",
        ("sides", "counterfair (guard)", "cpu_seconds"),
        "{:.1f}",
    ),
    (
        "docs/reference/run-directories.md",
        "and {} s on a rerun with another classifier",
        "bias_floor.json",
        ("sides", "counterfair (guard, verdicts stored)", "cpu_seconds"),
        "{:.1f}",
    ),
]


@pytest.mark.parametrize(("page", "words", "results", "path", "form"), DOC_FIGURES)
def test_a_figure_in_the_docs_is_its_results_json(
    page: str, words: str, results: str, path: tuple[str, ...], form: str
) -> None:
    """#49 item 13: the docs said 0.891 and 0.777 after a rerun gave 0.889 and 0.775; these figures are read from the
    results JSON they come from."""
    import json

    value: Any = json.loads((REPO / "benchmarks" / "results" / results).read_text(encoding="utf-8"))
    for key in path:
        value = value[key]
    written = form.format(value).rstrip("%")
    text = " ".join((REPO / page).read_text(encoding="utf-8").split())
    assert " ".join(words.format(written).split()) in text, (page, words, written)
