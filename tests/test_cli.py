from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from counterfair.cli import app
from counterfair.errors import CounterfairError
from counterfair.metrics.cards import CARDS

runner = CliRunner()


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "counterfair.cli", *args], capture_output=True, text=True, check=False, timeout=600
    )


def test_evaluate_general_pair_file(tmp_path: Path, helper_module: str) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("id\tbefore\tafter\nr1\tthis is awful\tthis is fine\nr2\ta quiet day\ta quiet night\n")
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(pairs),
            "--out",
            str(out),
            "--metrics",
            "flip,distance,bleu",
            "--text-column",
            "before",
            "--cf-column",
            "after",
            "--id-column",
            "id",
            "--classifier",
            f"callable:{helper_module}:keyword",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "flip rate" in result.output
    assert "distance_norm" in result.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["headline"]["flip_rate"]["mean"] == 0.5
    assert (out / "rows.csv").read_text(encoding="utf-8").splitlines()[1].startswith("0,r1,ok,")


def test_stage_failure_exits_nonzero_but_writes(tmp_path: Path, helper_module: str) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("orig_text,gen_text\na b,a c\n")
    result = runner.invoke(
        app,
        [
            "evaluate",
            str(pairs),
            "--out",
            str(tmp_path / "o"),
            "--metrics",
            "flip,distance",
            "--classifier",
            f"callable:{helper_module}:raises",
            "-q",
        ],
    )
    assert result.exit_code == 1
    assert "backend exploded" in result.output
    assert (tmp_path / "o" / "rows.csv").exists()


def test_bad_input_is_one_clear_line_and_exit_code_2(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("text,cf\na,b\n")
    proc = _run("evaluate", str(pairs), "--out", str(tmp_path / "o"), "--metrics", "distance")
    assert proc.returncode == 2
    assert "error:" in proc.stderr
    assert "missing column 'orig_text' (set with --text-column, or text_column= in Python)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_models_and_metrics_commands() -> None:
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0
    for name in ("gemma-3-270m", "all-minilm-l6-v2", "qwen2.5-coder-1.5b-instruct", "profanity-check"):
        assert name in result.output
    result = runner.invoke(app, ["metrics"])
    assert result.exit_code == 0
    assert "CEval" in result.output
    assert "bertscore" in result.output
    assert runner.invoke(app, ["--version"]).output.startswith("counterfair ")


def test_demo_needs_exactly_one_source(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evaluate", "--out", str(tmp_path)])
    assert result.exit_code != 0
    assert "--demo" in result.output


@pytest.mark.slow
@pytest.mark.model
def test_demo_main_job(tmp_path: Path) -> None:
    """What `make demo` runs: every metric on the built-in sample, with the real packaged models."""
    proc = _run("evaluate", "--demo", "--out", str(tmp_path), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "estimated time on 2 CPU cores: about" in proc.stdout and "perplexity" in proc.stdout  # before the work
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"] == {"rows": 16, "scored": 16, "status": {"ok": 16}}
    assert set(summary["metrics"]) == {c for card in CARDS.values() if card.default for c in card.columns}
    # the sample's toxic originals lose their toxicity: profanity-check flips a good share of them
    assert 0.25 <= summary["headline"]["flip_rate"]["mean"] <= 0.75
    assert summary["metrics"]["diversity"]["all"]["n"] == 15  # one row has no second counterfactual


@pytest.mark.slow
def test_audit_demo_main_job(tmp_path: Path) -> None:
    """What `make demo` runs: the audit of the built-in sentences, with a time estimate and a report."""
    proc = _run("audit", "--demo", "--out", str(tmp_path), "--parquet")  # as make demo: no -q
    assert proc.returncode == 0, proc.stderr
    assert "estimated time on 2 CPU cores" in proc.stdout
    assert (tmp_path / "report.html").exists() and (tmp_path / "report.md").exists()
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["command"] == "audit" and summary["ctf"]["ctf_gap"] > 0
    for table in ("pairs", "slots"):  # --parquet: the same tables, typed, beside the CSVs
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / f"{table}.parquet"), pd.read_csv(tmp_path / f"{table}.csv"), check_dtype=False
        )
    assert {"pairs.parquet", "slots.parquet"} <= set(json.loads((tmp_path / "run.json").read_text())["files"])


def test_overwrite_replaces_a_run_only_once_the_new_one_is_checked(tmp_path: Path) -> None:
    """#32: --overwrite replaces a run directory counterfair wrote, but only at the new run's claim: a new run that
    stops on bad input first leaves the old one whole; a directory counterfair did not write is never emptied."""
    data = str(Path(__file__).resolve().parents[1] / "src/counterfair/languages/en/demo_audit.csv")
    out = tmp_path / "gen"
    runner = CliRunner()
    first = runner.invoke(app, ["generate", data, "--methods", "ablation", "--out", str(out), "-q"])
    assert first.exit_code == 0, first.output
    before = (out / "counterfactuals.csv").read_bytes()
    other = ["generate", data, "--methods", "substitution", "--out", str(out), "-q"]
    refused = runner.invoke(app, other)  # in process, errors are raised (the entry point turns them into exit 2)
    assert isinstance(refused.exception, CounterfairError) and "--overwrite" in str(refused.exception)
    broken = runner.invoke(app, [*other, "--text-column", "nope", "--overwrite"])
    assert isinstance(broken.exception, CounterfairError) and "nope" in str(broken.exception)
    assert (out / "counterfactuals.csv").read_bytes() == before  # the old run survived the failed one
    replaced = runner.invoke(app, [*other, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert set(pd.read_csv(out / "counterfactuals.csv")["method"]) == {"substitution"}
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    kept = runner.invoke(app, ["ctf", data, "--out", str(foreign), "--overwrite", "-q"])
    assert isinstance(kept.exception, CounterfairError) and "did not write it" in str(kept.exception)
    assert (foreign / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('threshold: "abc"', "threshold: Input should be a valid number"),
        ("seed: 1.5", "seed: Input should be a valid integer"),
        ("attributes: {a: 1}", "attributes: a value, not a mapping"),
        ("fail_if: 5", "rule '5' is not METRIC[GROUP] OP NUMBER"),
    ],
)
def test_config_values_are_checked_by_the_options_own_types(tmp_path: Path, config: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(config + "\n")
    done = _run("audit", "--demo", "--methods", "swap", "--config", str(path), "--out", str(tmp_path / "run"), "-q")
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_config_string_false_turns_the_guard_off(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text('guard: "false"\nmethods: [swap]\n')
    done = _run("audit", "--demo", "--config", str(path), "--out", str(tmp_path / "run"), "-q")
    assert done.returncode == 0, done.stderr
    options = json.loads((tmp_path / "run" / "run.json").read_text())["options"]
    assert options["guard"] is False and options["methods"] == ["swap"]


@pytest.mark.slow
def test_exit_codes_mean_one_thing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    audit = tmp_path / "audit"
    assert _run("audit", "--demo", "--methods", "swap", "--out", str(audit), "-q").returncode == 0
    rule = "upper(ctf_gap[*]) > 0.1"
    (tmp_path / "a-file").write_text("")
    unwritable = _run("check", str(audit), "--fail-if", rule, "--junit", str(tmp_path / "a-file" / "j.xml"))
    assert unwritable.returncode == 2 and "error: cannot use" in unwritable.stderr
    assert "Traceback" not in unwritable.stderr
    zero = _run("check", str(audit), "--fail-if", rule, "--bootstrap", "0")
    assert zero.returncode == 2 and "--bootstrap" in zero.stderr and "Traceback" not in zero.stderr
    # a bug: one sentence, exit 3, the traceback in a log file
    import importlib

    app_module = importlib.import_module("counterfair.command_line")

    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setenv("COUNTERFAIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(app_module, "app", broken)
    with pytest.raises(SystemExit) as stopped:
        app_module.main()
    assert stopped.value.code == 3
    (log,) = (tmp_path / "cache" / "logs").glob("crash-*.log")
    assert "RuntimeError: boom" in log.read_text() and "Traceback" in log.read_text()


@pytest.mark.parametrize("keep_torch", [False, True])
@pytest.mark.slow
def test_a_command_that_parses_with_spacy_does_not_import_torch(tmp_path: Path, keep_torch: bool) -> None:
    """spaCy's thinc imports torch only to offer layers counterfair's pipelines never use: the command line lets it
    find none (COUNTERFAIR_SPACY_TORCH=1 keeps the old way); torch itself stays importable."""
    import importlib.util
    import os

    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, sys\n"
        "def f(texts):\n"
        "    import importlib.util, thinc.compat  # the classifier runs after the swap's spaCy parses\n"
        "    if importlib.util.find_spec('torch'):\n"
        "        import torch  # still importable\n"
        f"    open({str(tmp_path / 'seen.json')!r}, 'w').write(json.dumps(thinc.compat.has_torch))\n"
        "    return [[0.5, 0.5] for _ in texts]\n",
        encoding="utf-8",
    )
    data = tmp_path / "in.csv"
    data.write_text("text\nSome people are gay.\nA black man waved.\n", encoding="utf-8")
    env = {**os.environ, "COUNTERFAIR_STORE": "off"} | ({"COUNTERFAIR_SPACY_TORCH": "1"} if keep_torch else {})
    command = [sys.executable, "-m", "counterfair.cli", "ctf", str(data), "--classifier", f"callable:{probe}:f"]
    done = subprocess.run([*command, "--out", str(tmp_path / "run"), "-q"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    has_torch = json.loads((tmp_path / "seen.json").read_text())
    assert has_torch is (keep_torch and importlib.util.find_spec("torch") is not None)


def test_help_groups_the_commands_and_puts_the_audits_essentials_first() -> None:
    """#49 item 7: 22 commands in one list, several in paper jargon, and an 85-line audit --help of one panel."""
    from typer.testing import CliRunner

    from counterfair.cli import app

    runner = CliRunner()
    top = runner.invoke(app, ["--help"], env={"COLUMNS": "160"}).output
    panels = [
        "Audit a classifier (no labels needed)",
        "Labelled data: bias metrics and test suites",
        "Make and measure counterfactuals",
        "Train and mitigate",
        "Models, word lists and the cache",
        "Human rating",  # a command group: typer lists groups after the commands
    ]
    assert [top.index(p) for p in panels] == sorted(top.index(p) for p in panels)
    assert "audit            Does naming an identity change the classifier's score?" in top
    assert top.index("audit   ") < top.index("Labelled data")  # the main job first
    usage = runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "160"}).output
    assert usage.index("--classifier") < usage.index("─ Input ─") < usage.index("--methods")
    assert usage.index("─ Input ─") < usage.index("─ LLM ─") < usage.index("--samples")
    assert "'material(term_effect[gay])'" in usage  # rich markup no longer eats "[gay]"


def test_a_warning_on_the_command_line_is_one_line_and_still_recorded_by_a_caller() -> None:
    code = (
        "import warnings\n"
        "from counterfair.command_line import _warnings_as_lines\n"
        "with warnings.catch_warnings(record=True) as seen:  # a caller recording, then the CLI's main starts\n"
        "    warnings.simplefilter('always')\n"
        "    _warnings_as_lines()\n"
        "    warnings.warn('kept for the caller', RuntimeWarning)\n"
        "assert [str(w.message) for w in seen] == ['kept for the caller'], seen\n"
        "warnings.warn('LLM server busy; trying again in 1 s', RuntimeWarning)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "warning: LLM server busy; trying again in 1 s\n"


def test_the_audit_command_reads_its_input_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#70: the command line printed its plan from a first read of the input, then the run read it again; now the run
    reads it once and hands the command line its plan (texts, attributes, the estimate) before the classifier loads."""
    import counterfair.commands.audit.options as audit_options
    import counterfair.commands.audit.shell as audit_shell

    reads: list[object] = []
    real = audit_options.read_input

    def counted(source: object, opts: object) -> object:
        reads.append(source)
        return real(source, opts)  # type: ignore[arg-type]

    monkeypatch.setattr(audit_options, "read_input", counted)
    monkeypatch.setattr(audit_shell, "read_input", counted)
    data = tmp_path / "texts.csv"
    pd.DataFrame({"text": ["Some people are gay.", "My Muslim neighbour waved."]}).to_csv(data, index=False)
    done = CliRunner().invoke(app, ["audit", str(data), "--methods", "swap", "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    assert len(reads) == 1  # one read (the command line printed its plan from a read of its own before)
    assert "auditing profanity-check on 2 texts" in done.output and "estimated time on 2 CPU cores" in done.output


def test_no_help_text_loses_a_bracket_to_rich_markup() -> None:
    """#83 item 6: rich read ``[parquet]`` ("needs the  extra"), ``[#MODEL]`` and ``[#LABEL]`` as markup and dropped
    them from ``--help``; every command's and option's help now shows its text whole."""
    import inspect

    import typer.main
    from rich.text import Text

    lost = []

    def walk(command: Any, path: str) -> None:
        texts = [("help", command.help or ""), *((p.name, getattr(p, "help", None) or "") for p in command.params)]
        for where, text in texts:
            written = inspect.cleandoc(text)
            if Text.from_markup(written).plain != written.replace("\\[", "["):
                lost.append(f"{path} {where}: {written[:60]}")
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "counterfair")
    assert lost == []
    shown = " ".join(CliRunner().invoke(app, ["audit", "--help"], terminal_width=200).output.split())
    assert "needs the [parquet] extra" in shown.replace("│ ", "")


def test_ci_gets_a_junit_file_on_bad_input_properties_and_github_annotations(tmp_path: Path) -> None:
    """#83 item 5: a run stopped on bad input (exit 2) or a command line not understood leaves the asked-for JUnit
    file with an <error> that says why (CI showed nothing); a gate's JUnit file names which counterfair, input and
    classifier it is about; on GitHub Actions each failing check is an ::error:: line and the step summary holds the
    verdict."""
    import xml.etree.ElementTree as ET

    from counterfair.summaries import GateCheck, GateVerdict
    from counterfair.views.ci import github_annotations

    for args, said in (
        (["audit", str(tmp_path / "missing.csv")], "missing.csv"),
        (["audit", "--no-such-option"], "stopped before its fairness gate"),
    ):
        junit = tmp_path / "j.xml"
        done = _run(*args, "--junit", str(junit))
        assert done.returncode == 2, done.stderr
        error = ET.parse(junit).getroot().find("testsuite/testcase/error")
        assert error is not None and said in error.get("message", ""), done.stderr
        junit.unlink()

    run = tmp_path / "run"
    data = tmp_path / "in.csv"
    data.write_text("text\nSome people are gay.\nMy Muslim neighbour waved.\n", encoding="utf-8")
    # a rule the gate could not evaluate also exits 2: the gate's own file, with its checks, is kept
    done = _run("audit", str(data), "--methods", "swap", "--out", str(tmp_path / "e"), "--junit", str(junit),
                "--fail-if", "material(identity_effect[nope])")  # fmt: skip
    assert done.returncode == 2, done.stderr
    cases = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")]
    assert cases == ["material(identity_effect[nope])"], cases
    rule = ["--fail-if", "ctf_gap > 0.9", "--junit", str(junit), "-q"]
    done = runner.invoke(app, ["audit", str(data), "--methods", "swap", "--out", str(run), *rule])
    assert done.exit_code == 0, done.output
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["counterfair_version"] and len(props["input_sha256"]) == 64 and props["kind"] == "audit"
    assert "profanity-check" in props["classifier_signature"]

    failing = GateCheck(rule="r", metric="identity_effect", estimate="material", verdict="fail", message="a, 50% b\nc")
    verdict = GateVerdict(checks=(failing, GateCheck(verdict="pass", message="ok")), verdict="fail", exit_code=1)
    assert github_annotations(verdict, env={}) == []
    summary = tmp_path / "step.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    assert github_annotations(verdict, env=env) == ["::error title=counterfair material::a, 50%25 b%0Ac"]
    assert summary.read_text().startswith("### counterfair fairness gate: fail (exit 1)") and "1 checks passed" in (
        summary.read_text()
    )


def test_quiet_prints_the_verdict_and_the_gate_only(tmp_path: Path) -> None:
    """#83 item 5: ``-q`` printed 172 lines (every table's first rows); it now prints the verdict, the gate and where
    the report is, no plan lines and no tables."""
    done = runner.invoke(app, ["audit", "--demo", "--out", str(tmp_path / "run"), "-q", "--fail-if", "default"])
    assert done.exit_code == 1, done.output
    assert done.output.startswith("Verdict: ") and "fairness gate: fail (exit 1" in done.output
    assert "┏" not in done.output and "auditing " not in done.output and "estimated time" not in done.output
    assert "".join(done.output.split()).endswith("report.html")  # last: where the report is (a long path folds)
