"""A report for every command (views/page.py, each slice's page.py): ctf, generate, feedback, bias and suite runs write
report.html and report.md with the verdict before the first table, a failed gate is stated in the verdict block,
`counterfair report DIR` rebuilds the same page, missing values render one way, and rows resting on few cases are
marked or left out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import counterfair as cf
from counterfair.commands.feedback.core import FeedbackOptions
from counterfair.commands.feedback.shell import run_feedback
from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.shell import run_generate
from counterfair.commands.registry import page_of
from counterfair.views.page import MISSING, Page, Table, to_html, to_markdown, to_notebook_html

TEXTS = [
    "I am a Muslim and I pray every day.",
    "My gay neighbour grows tomatoes.",
    "The weather is lovely today.",
    "Christian families met at the park.",
]


def _scores(texts: list[str]) -> np.ndarray:
    p = np.array([0.7 if "gay" in t.lower() else 0.2 + 0.01 * len(t) % 0.1 for t in texts])
    return np.column_stack([1 - p, p])


def _verdict_first(directory: Path) -> str:
    html = (directory / "report.html").read_text()
    assert html.index('id="verdict"') < html.index("<table"), directory
    assert (directory / "report.md").read_text().splitlines()[2].startswith("Verdict: ")
    return html


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pages")
    out = {name: root / name for name in ("ctf", "generate", "feedback", "bias")}
    cf.run_ctf(
        pd.DataFrame({"text": TEXTS}), out["ctf"], classifier=_scores, identities="muslim,christian,gay,straight"
    )
    run_generate(pd.DataFrame({"text": TEXTS}), out["generate"], GenerateOptions(attribute="islam",
                 methods=["ablation", "substitution"]))  # fmt: skip
    edits = root / "edits.csv"
    pd.DataFrame({"orig_text": TEXTS, "gen_text": [t.upper() for t in TEXTS]}).to_csv(edits, index=False)
    run_feedback(pd.DataFrame({"text": TEXTS}), out["feedback"],
                 FeedbackOptions(editor=f"external:{edits}", classifier="profanity-check", steps=1, ppl_model=None),
                 classifier=cf.as_classifier(_scores))  # fmt: skip
    from counterfair.commands.bias.shell import run_bias

    labelled = pd.DataFrame({"text": TEXTS * 2, "label": [0, 1, 0, 1, 1, 0, 1, 0]})
    run_bias(labelled, out["bias"], cf.BiasOptions(bootstrap=20), classifier=cf.as_classifier(_scores),
             rules=["overall_auc < 0.99"])  # fmt: skip
    from typer.testing import CliRunner

    from counterfair.cli import app

    a = cf.audit(TEXTS, _scores, methods=["swap"], bootstrap=50, progress=False).save(root / "a")
    b = cf.audit(TEXTS, lambda t: _scores(t)[:, ::-1], methods=["swap"], bootstrap=50, progress=False).save(root / "b")
    out["compare"] = root / "compare"
    done = CliRunner().invoke(app, ["compare", str(a), str(b), "--bootstrap", "50", "--out", str(out["compare"])])
    assert done.exit_code == 0, done.output
    return out


def test_every_command_writes_a_verdict_first_report(runs: dict[str, Path]) -> None:
    for directory in runs.values():
        _verdict_first(directory)
    ctf = (runs["ctf"] / "report.md").read_text()
    assert (
        "Verdict: CTF gap" in ctf
        and "Swap: grammatical swaps (nouns, plurals, articles) with the identity guard" in ctf
    )
    assert "(one text)" in ctf  # every source term here is in one text: marked as such
    assert "(few swaps) |" in ctf  # so is every direction resting on fewer than 5 swaps
    assert "toxic" not in ctf.split("## ")[0].replace("probability of 1", "")  # no toxic/non-toxic rows of 0 texts
    generate = (runs["generate"] / "report.md").read_text()
    assert (
        "| ablation | 4 |" in generate and "Verdict: counterfactuals for the attribute islam by 2 methods" in generate
    )
    # which detector judged "still referencing", and what it cannot see (#34 item 2)
    assert (
        '"Still referencing" is judged by the keyword attribute detector: the attribute\'s word list only, so'
        in generate
    )
    compare = (runs["compare"] / "report.md").read_text()
    assert compare.startswith("# Two classifiers on the same pairs") and "Verdict: " in compare.split("## ")[0]
    assert (
        "## Disparity beyond placebo (in the slot): B − A per group" in compare
        and "## CTF gap: B − A per group" in compare
    )
    assert "in the slot, A: " in compare.split("## ")[0]  # each side's in-slot findings in the headline
    feedback = (runs["feedback"] / "report.md").read_text()
    assert "Verdict: external fed its own output" in feedback and "| 1 | 4 |" in feedback


def test_a_failed_gate_is_stated_in_the_verdict_block(runs: dict[str, Path]) -> None:
    html = _verdict_first(runs["bias"])
    block = html[html.index('id="verdict"') : html.index("</section>")]
    assert 'class="verdict fail"' in html and "Fairness gate: <b" in block and "FAIL" in block
    assert "FAIL: fail if the overall AUC is below 0.99" in block


def test_report_rebuilds_the_same_page(runs: dict[str, Path]) -> None:
    from .conftest import run_cli

    for name in ("ctf", "feedback"):
        before = (runs[name] / "report.html").read_text()
        (runs[name] / "report.html").unlink()
        done = run_cli("report", str(runs[name]))
        assert done.returncode == 0, done.stderr[-1500:]
        assert (runs[name] / "report.html").read_text() == before
    assert page_of(runs["ctf"]) is not None


def test_a_finished_run_opens_as_its_result_and_check_reads_its_metrics(runs: dict[str, Path], tmp_path: Path) -> None:
    """#48: the run kinds (counterfair.commands.registry) opens a run directory as its command's result object,
    rebuilds its report and lets ``counterfair check`` ask a bias or suite run's result for its gate metrics."""
    import json

    from typer.testing import CliRunner

    from counterfair.cli import app
    from counterfair.commands.registry import RUNS
    from counterfair.errors import ConfigError, InputError
    from counterfair.summaries import SUMMARIES

    assert set(SUMMARIES) | {"llm-audit"} == set(RUNS)  # every command that writes a summary is registered
    bias = cf.open_run(runs["bias"])
    written = json.loads((runs["bias"] / "summary.json").read_text())["gate"]
    again = bias.check("overall_auc < 0.99")  # the run's own rule, on the metrics read back from its folder
    assert isinstance(bias, cf.BiasResult) and written["verdict"] == again["verdict"] == "fail"
    assert [c["value"] for c in again["checks"]] == [c["value"] for c in written["checks"]]
    groups = json.loads((runs["bias"] / "summary.json").read_text())["groups"]
    assert len(bias.rows) == 8 and set(bias.by_group.index) == set(groups) and "schema_version" not in bias.rows
    ctf = cf.open_run(runs["ctf"])
    assert isinstance(ctf, cf.CTFResult) and len(ctf.pairs) == len(pd.read_csv(runs["ctf"] / "pairs.csv"))
    feedback = cf.open_run(runs["feedback"])
    assert isinstance(feedback, cf.FeedbackResult) and len(feedback.steps) == len(
        pd.read_csv(runs["feedback"] / "steps.csv")
    )
    assert list(feedback.inconsistency) == list(
        json.loads((runs["feedback"] / "summary.json").read_text())["inconsistency"]
    )
    generate = cf.open_run(runs["generate"])
    assert len(generate.counterfactuals) == 2 * len(TEXTS)  # one row per input and method
    audit = cf.open_run(runs["compare"].parent / "a")
    assert isinstance(audit, cf.AuditResult) and audit.gate_metrics()["ctf_gap"] is not None
    with pytest.raises(InputError, match="no result object"):
        cf.open_run(runs["compare"])
    with pytest.raises(InputError, match="not a finished counterfair run"):
        cf.open_run(tmp_path)
    (tmp_path / "summary.json").write_text('{"schema_version": "1", "command": "elsewhere"}')
    with pytest.raises(InputError, match="written by 'elsewhere'"):
        cf.open_run(tmp_path)
    runner = CliRunner()
    failed = runner.invoke(app, ["check", str(runs["bias"]), "--fail-if", "overall_auc < 0.99"])
    assert failed.exit_code == 1 and "overall AUC" in failed.output
    refused = runner.invoke(app, ["check", str(runs["ctf"]), "--fail-if", "ctf_gap > 0.5"])
    assert isinstance(refused.exception, ConfigError) and "no fairness gate" in str(refused.exception)  # exit 2


def test_one_missing_value_rendering_and_escaping() -> None:
    frame = pd.DataFrame({"name": ["<b>x</b>", "y"], "value": [None, float("nan")], "n": ["1", "2"]})
    page = Page(command="t", title="T", headline="h <i>", tables=(Table("t", frame, None, "t"),))
    html, md, nb = to_html(page), to_markdown(page), to_notebook_html(page)
    assert html.count(f">{MISSING}<") == 2 and "None" not in html and "NaN" not in html and "nan" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html and "h &lt;i&gt;" in html
    assert f"| &lt;b>x&lt;/b> | {MISSING} | 1 |" in md and nb.count(MISSING) == 2  # inert markup (#47 item 13)


def test_the_evaluation_report_states_its_verdict_before_the_table(tmp_path: Path) -> None:
    from counterfair.commands.evaluate.options import EvaluateOptions
    from counterfair.commands.evaluate.page import build_evaluation_report
    from counterfair.commands.evaluate.shell import evaluate_pairs

    pairs = pd.DataFrame({"orig_text": ["You are an idiot.", "Shut up, fool."], "gen_text": ["You are kind.", "Hi."]})
    evaluate_pairs(pairs, EvaluateOptions(metrics=["flip", "distance"], classifier="profanity-check"),
                   out_dir=tmp_path / "ev")  # fmt: skip
    build_evaluation_report(tmp_path / "ev")  # what the CLI writes after the run
    html = (tmp_path / "ev" / "report.html").read_text()
    assert html.index('id="verdict"') < html.index("<table") and "flips" in html[: html.index("<table")]
    evaluate_pairs(pairs, EvaluateOptions(metrics=["distance"]), out_dir=tmp_path / "ev2")
    build_evaluation_report(tmp_path / "ev2")
    html = (tmp_path / "ev2" / "report.html").read_text()
    assert "Verdict: no flip rate: no classifier was named" in html


def test_the_score_plot_stays_readable_at_100k_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#31: a 5,036-point scatter was solid ink; above 2,000 pairs a panel shows their density in hexagonal cells."""
    from matplotlib.collections import PathCollection, PolyCollection

    from counterfair.views.report import plots
    from counterfair.views.report.tally import ReportTally

    drawn: list = []
    monkeypatch.setattr(plots, "_save", lambda fig, out, name: drawn.append(fig) or {})
    rng = np.random.default_rng(0)
    many, few = plots.DENSE_POINTS * 50, 300
    pairs = pd.DataFrame(
        {
            "method": ["swap"] * many + ["ablation"] * few,
            "score_orig": rng.random(many + few),
            "score_cf": rng.random(many + few),
        }
    )
    pairs["diff"] = pairs["score_cf"] - pairs["score_orig"]
    plots.score_scatter(ReportTally.of([pairs]).panels, tmp_path, 0.5)
    swap, ablation = drawn[0].axes[:2]
    assert any(isinstance(c, PolyCollection) for c in swap.collections)  # hexagonal cells
    assert any(isinstance(c, PathCollection) for c in ablation.collections)  # dots
    assert swap.get_title() == "swap (n=100,000, pairs per cell)" and ablation.get_title() == "ablation (n=300)"


def test_a_classifier_spec_in_report_mds_heading_is_inert_and_one_line() -> None:
    """#87 B12: the heading of report.md held the classifier's spec as written: a spec with ``<script>`` or a line
    break wrote HTML and a heading of its own into the Markdown."""
    from counterfair.views.page import Page, to_markdown

    md = to_markdown(Page("audit", "Counterfactual fairness audit: callable:<script>x</script>.py\n# owned", "ok"))
    first = md.splitlines()[0]
    assert first == "# Counterfactual fairness audit: callable:&lt;script>x&lt;/script>.py # owned"
    assert "\n# owned" not in md
