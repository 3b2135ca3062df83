"""The documentation's generated pages (tools/docs_hooks.py): the CLI reference holds every command, the options table
every option with one placeholder, the API page every public name; paper numbers link to their citations. The site
itself is built with warnings as errors by `make test` (`make docs`)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

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


def test_the_summary_reference_lists_every_key_a_run_writes() -> None:
    """The generated summary.json page comes from the TypedDicts the cores build with: every top-level key of a real
    audit's and bias run's summary is in its command's table, and each part it links to has a section."""
    import numpy as np
    import pandas as pd

    page = hooks.summary_reference()

    def keys_of(section: str) -> set[str]:
        table = page.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
        return set(re.findall(r"^\| `(\w+)` \|", table, re.M))

    texts = ["I am a gay man.", "My Muslim neighbour waved.", "A deaf friend called.", "The weather is fine."]
    audit = cf.audit(texts, lambda t: np.full(len(t), 0.2), methods=["swap"], bootstrap=20, label_column=None)
    assert set(audit.summary) <= keys_of("audit") and {"groups", "effects", "coverage"} <= set(audit.summary)
    labelled = pd.DataFrame({"text": texts * 3, "label": [0, 1] * 6})
    bias = cf.bias(labelled, classifier=lambda t: np.linspace(0.1, 0.9, len(t)), bootstrap=10)
    assert set(bias.summary) <= keys_of("bias")
    for part in set(re.findall(r"\]\(#(\w+)\)", page)):
        assert re.search(rf"^### {part}$", page, re.M | re.I), part


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

    from counterfair.commands.audit.options import demo_path

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


def test_every_environment_variable_the_code_reads_is_documented() -> None:
    """#69 item 10: ``OPENAI_API_KEY`` was read but documented nowhere; docs/reference/environment.md lists every
    variable the package reads (found in its source), and no variable it no longer reads."""
    source = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "src" / "counterfair").rglob("*.py"))
    read = set(re.findall(r"\b(COUNTERFAIR_[A-Z_]*[A-Z]|OPENAI_API_KEY|MLFLOW_TRACKING_URI)\b", source))
    read = {v for v in read if v != "COUNTERFAIR_ENCODER_"} | {"COUNTERFAIR_ENCODER_FR", "COUNTERFAIR_ENCODER_DE"}
    page = (REPO / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([A-Z_]+)`(?:, `([A-Z_]+)`)?", page, flags=re.MULTILINE))
    documented = {v for pair in listed for v in pair if v}
    assert read - documented == set(), f"read but not documented: {sorted(read - documented)}"
    assert documented - read == set(), f"documented but not read: {sorted(documented - read)}"
