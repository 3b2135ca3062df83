"""Issue #32: every command on the core install (no extras) either runs or names its extra before doing any work.

All command lines run in one subprocess (``tests/core_only.py --batch``) in which the modules of every extra cannot be
found or imported, with the run store off, so nothing computed by an extra earlier can be reused. A test lists every
command of the app, so a new command cannot be left out of the table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import typer

from counterfair.cli import app

RESOURCES = Path(__file__).resolve().parents[1] / "src/counterfair/resources"
PAIRS = RESOURCES / "sample_pairs.csv"
ISLAM = RESOURCES.parent / "languages" / "en" / "attributes" / "islam.yaml"
NAMES_EXTRA = "pip install 'counterfair["


def all_commands() -> set[str]:
    """Every command path of the app ("audit", "rate serve", ...)."""

    def walk(group: object, prefix: str) -> set[str]:
        if hasattr(group, "commands"):  # a group (typer may bundle its own click)
            return {p for name, cmd in group.commands.items() for p in walk(cmd, f"{prefix} {name}".strip())}
        return {prefix}

    return walk(typer.main.get_command(app), "")


def command_lines(tmp: Path) -> list[tuple[str, list[str], str, Path | None]]:
    """(command, arguments, expectation, output that must not exist when an extra is named): expectation "ok" (exit
    0), "extra" (exit 2 naming the pip line of an extra, before any work) or "needs-data" (exit 2 naming something
    no extra installs, before any work)."""
    texts = tmp / "texts.csv"
    demo = pd.read_csv(RESOURCES.parent / "languages/en/demo_audit.csv")
    labelled = demo.assign(label=[i % 2 for i in range(len(demo))])
    labelled.to_csv(texts, index=False)
    originals = tmp / "originals.csv"
    pd.read_csv(PAIRS).head(4).rename(columns={"orig_text": "text"})[["text"]].to_csv(originals, index=False)
    snli, revised = tmp / "snli.csv", tmp / "revised.csv"  # the revisions change the premise, keep the hypothesis
    hypotheses = ["A man rests.", "Kids run."]
    for path, premises, labels in (
        (snli, ["A man sleeps.", "Kids play."], ["entailment", "neutral"]),
        (revised, ["A man runs.", "Kids sit."], ["contradiction", "neutral"]),
    ):
        frame = pd.DataFrame({"sentence1": premises, "sentence2": hypotheses, "gold_label": labels})
        frame.to_csv(path, index=False)
    audit, fb = tmp / "audit", tmp / "fb"
    ratings = tmp / "ratings.csv"
    row = {"pair_id": "ablation:islam:d33", "rater": "ann", "fluent": "yes", "reference": "none", "same_label": "yes"}
    pd.DataFrame([row | {"meaning": 4, "reject": 0}]).to_csv(ratings, index=False)
    prompts, generator = tmp / "prompts.csv", tmp / "gen.py"
    pd.DataFrame({"text": [f"Hire a {{group}} applicant for job {i}? JSON." for i in range(6)]}).to_csv(prompts)
    generator.write_text('def answer(prompts):\n    return [\'{"decision": "yes"}\' for _ in prompts]\n')
    llm_audit = ["llm-audit", str(prompts), "--generator", f"callable:{generator}:answer", "--samples", "2", "-q"]
    return [
        ("audit", ["audit", "--demo", "--out", str(audit), "-q"], "ok", None),
        ("llm-audit", [*llm_audit, "--decision", "decision=yes", "--out", str(tmp / "llm")], "ok", None),
        ("llm-audit", ["llm-audit", "--demo", "--out", str(tmp / "llm-demo"), "-q"], "ok", None),
        (
            "llm-audit",
            ["llm-audit", "--demo", "--generator", "llamacpp:qwen2.5-coder-1.5b-instruct", "--out", str(tmp / "llm-r")],
            "extra",
            tmp / "llm-r",
        ),
        ("llm-audit", [*llm_audit, "--similarity", "cosine", "--out", str(tmp / "llm-cos")], "extra", tmp / "llm-cos"),
        ("check", ["check", str(audit), "--fail-if", "upper(identity_effect[religion]) > 1"], "ok", None),
        ("plan", ["plan", str(audit), "--effect", "2"], "ok", None),
        ("compare", ["compare", str(audit), str(audit)], "ok", None),
        ("report", ["report", str(audit)], "ok", None),
        ("ctf", ["ctf", str(texts), "--out", str(tmp / "ctf"), "-q"], "ok", None),
        ("bias", ["bias", str(texts), "--label-column", "label", "--out", str(tmp / "bias"), "-q"], "ok", None),
        ("suite export", ["suite", "export", str(tmp / "suite.csv")], "ok", None),
        ("suite run", ["suite", "run", "--out", str(tmp / "suite"), "-q"], "ok", None),
        ("generate", ["generate", str(texts), "--out", str(tmp / "gen"), "-q"], "ok", None),
        (
            "generate",
            ["generate", str(texts), "--methods", "llm", "--out", str(tmp / "gen-llm")],
            "extra",
            tmp / "gen-llm",
        ),
        (
            "select",
            ["select", str(texts), "--attribute", "islam", "--out", str(tmp / "sel.csv"), "--min-words", "3"],
            "ok",
            None,
        ),
        (
            "evaluate",
            ["evaluate", str(PAIRS), "--metrics", "distance,bleu", "--out", str(tmp / "ev"), "-q"],
            "ok",
            None,
        ),
        ("evaluate", ["evaluate", str(PAIRS), "--out", str(tmp / "ev-default")], "ok", None),  # without the extras
        ("nli-pairs", ["nli-pairs", str(snli), str(revised), "--out", str(tmp / "nli.csv")], "ok", None),
        ("metrics", ["metrics"], "ok", None),
        ("models", ["models"], "ok", None),
        ("cache info", ["cache", "info"], "ok", None),
        ("cache clear", ["cache", "clear", "store.sqlite", "--yes"], "ok", None),
        ("feedback", ["feedback", str(originals), "--out", str(tmp / "fb-default")], "extra", tmp / "fb-default"),
        (
            "feedback",
            [
                "feedback",
                str(originals),
                "--editor",
                f"external:{PAIRS}",
                "--classifier",
                "profanity-check",
                "--ppl-model",
                "none",
                "--steps",
                "1",
                "--out",
                str(fb),
                "-q",
            ],
            "ok",
            None,
        ),
        ("feedback-ttest", ["feedback-ttest", str(fb), str(fb)], "ok", None),
        ("adapt-lm", ["adapt-lm", str(originals), "--out", str(tmp / "lm")], "extra", tmp / "lm"),
        ("train", ["train", str(texts), "--out", str(tmp / "model")], "extra", tmp / "model"),
        (
            "train-attribute",
            ["train-attribute", str(texts), "--label-columns", "label", "--out", str(tmp / "attr")],
            "extra",
            tmp / "attr",
        ),
        ("serve-llm", ["serve-llm", "--model", "qwen2.5-coder-1.5b-instruct"], "extra", None),
        ("attributes list", ["attributes", "list"], "ok", None),
        ("attributes show", ["attributes", "show", "islam"], "ok", None),
        ("attributes validate", ["attributes", "validate", str(ISLAM)], "ok", None),
        ("wordlist derive", ["wordlist", "derive", str(texts), "--label-column", "label"], "ok", None),
        ("rate init", ["rate", "init", str(tmp / "rating"), "--from", str(audit)], "ok", None),
        ("rate import", ["rate", "import", str(tmp / "rating"), str(ratings)], "ok", None),
        ("rate export", ["rate", "export", str(tmp / "rating"), "--out", str(tmp / "exported.csv")], "ok", None),
        ("rate consolidate", ["rate", "consolidate", str(tmp / "rating")], "extra", None),
        ("rate judge", ["rate", "judge", str(tmp / "rating")], "extra", None),
        ("rate serve", ["rate", "serve", str(tmp / "rating")], "extra", None),
    ]


@pytest.fixture(scope="module")
def core_results(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, Path | None, dict]]:
    tmp = tmp_path_factory.mktemp("core")
    lines = command_lines(tmp)
    batch, out = tmp / "batch.json", tmp / "results.json"
    batch.write_text(json.dumps([args for _, args, _, _ in lines]))
    env = {**os.environ, "COUNTERFAIR_STORE": "off", "COUNTERFAIR_CACHE": str(tmp / "cache"), "COLUMNS": "200"}
    script = Path(__file__).with_name("core_only.py")
    subprocess.run([sys.executable, str(script), "--batch", str(batch), str(out)], env=env, check=True, timeout=900)
    results = json.loads(out.read_text())
    return [
        (name, expect, untouched, result) for (name, _, expect, untouched), result in zip(lines, results, strict=True)
    ]


def test_every_command_is_tried_on_the_core_install(tmp_path: Path) -> None:
    assert {name for name, *_ in command_lines(tmp_path)} == all_commands()


@pytest.mark.slow
def test_each_command_runs_or_names_its_extra_before_any_work(core_results) -> None:
    wrong = []
    for name, expect, untouched, result in core_results:
        output = result["output"]
        if expect == "ok":
            right = result["code"] == 0
        else:  # refused with the pip line, before claiming its --out
            right = result["code"] == 2 and NAMES_EXTRA in output and (untouched is None or not untouched.exists())
        if not right or "No module named" in output:
            wrong.append(f"{name} {result['args']}: exit {result['code']}\n{output[-1200:]}")
    assert not wrong, "\n\n".join(wrong)
    assert sum(expect == "extra" for _, expect, _, _ in core_results) == 11
    [default_evaluate] = [r for _, _, _, r in core_results if any("ev-default" in a for a in r["args"])]
    assert (
        "perplexity and bertscore need counterfair[metrics], which is not installed: left out (add them with pip "
        "install torch==2.13.0 && pip install 'counterfair[metrics]')" in " ".join(default_evaluate["output"].split())
    )


@pytest.mark.slow
def test_the_core_audit_gives_the_full_installs_answer(core_results, tmp_path: Path) -> None:
    """The demo audit on the core install writes the same pairs as with every extra installed."""
    from typer.testing import CliRunner

    from counterfair.cli import app as full_app

    [(_, _, _, audit)] = [r for r in core_results if r[0] == "audit"]
    core_dir = Path(audit["args"][audit["args"].index("--out") + 1])
    result = CliRunner().invoke(full_app, ["audit", "--demo", "--out", str(tmp_path / "full"), "-q"])
    assert result.exit_code == 0, result.output
    assert (core_dir / "pairs.csv").read_bytes() == (tmp_path / "full" / "pairs.csv").read_bytes()
    assert "sexuality — MATERIAL: naming" in audit["output"]  # the same verdict: profanity-check and "queer"


def test_cache_info_and_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from counterfair.cache import cache_entries, clear_cache
    from counterfair.errors import ConfigError

    from .conftest import run_cli

    monkeypatch.setenv("COUNTERFAIR_CACHE", str(tmp_path))
    (tmp_path / "gguf").mkdir()
    (tmp_path / "gguf" / "model.gguf").write_bytes(b"x" * 3000)
    (tmp_path / "store.sqlite").write_bytes(b"y" * 100)
    assert [(e.name, e.bytes) for e in cache_entries()] == [("gguf", 3000), ("store.sqlite", 100)]
    assert cache_entries()[0].holds.startswith("GGUF models")
    with pytest.raises(ConfigError, match="unknown cache part"):
        clear_cache(["models"])
    assert [e.name for e in clear_cache(["gguf"])] == ["gguf"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.sqlite"]
    (tmp_path / "another-program").mkdir()  # COUNTERFAIR_CACHE=~/.cache: other programs' entries are not counterfair's
    (tmp_path / "another-program" / "data").write_bytes(b"z")
    assert cache_entries()[-1].holds == "other"
    # without a terminal and without --yes, the command line deletes nothing and says how to confirm
    done = run_cli("cache", "clear", cwd=tmp_path)
    assert done.returncode == 2 and "pass --yes to confirm" in done.stderr and (tmp_path / "store.sqlite").exists()
    done = run_cli("cache", "clear", "--yes", cwd=tmp_path)
    assert done.returncode == 0 and "kept, not counterfair's: another-program" in done.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["another-program"]
    clear_cache()
    assert [p.name for p in tmp_path.iterdir()] == ["another-program"]


API_CALLS = """
import json, sys, time
import counterfair as cf

calls = {
    "generate llm": lambda: cf.generate(["My Muslim friend."], ["llm"], attribute="islam", progress=False),
    "evaluate perplexity": lambda: cf.evaluate([("a b", "a c")], metrics=["perplexity"], progress=False),
    "feedback mask_fill": lambda: cf.feedback(["good film"], "mask_fill", "profanity-check", steps=1, progress=False),
    "audit hf": lambda: cf.audit(["I am gay."], "hf:/nowhere", progress=False),
    "ctf hf": lambda: cf.ctf(["I am gay."], "hf:/nowhere", progress=False),
    "audit core": lambda: cf.audit(["I am gay.", "Muslims pray."], "profanity-check", methods=["swap"], progress=False),
}
out = {}
for name, call in calls.items():
    started = time.perf_counter()
    try:
        result = call()
        out[name] = ["ran", type(result).__name__, time.perf_counter() - started]
    except Exception as err:
        out[name] = [type(err).__name__, str(err), time.perf_counter() - started]
print(json.dumps(out))
"""


def test_the_python_api_names_its_extra_before_any_work(tmp_path: Path) -> None:
    script = tmp_path / "calls.py"
    script.write_text(API_CALLS)
    env = {**os.environ, "COUNTERFAIR_STORE": "off", "COUNTERFAIR_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("core_only.py")), "--python", str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    results = json.loads(done.stdout.strip().splitlines()[-1])
    lines = {
        "generate llm": "pip install 'counterfair[llm,metrics]'",
        "evaluate perplexity": "pip install 'counterfair[metrics]'",
        "feedback mask_fill": "pip install 'counterfair[llm,metrics]'",
        "audit hf": "pip install 'counterfair[metrics]'",
        "ctf hf": "pip install 'counterfair[metrics]'",
    }
    for name, line in lines.items():
        kind, message, _ = results[name]
        # MissingExtra, not the error loading would give ('hf:/nowhere' does not exist): refused before any work
        assert kind == "MissingExtra" and line in message, (name, kind, message)
    assert results["audit core"][:2] == ["ran", "AuditResult"]


def test_cache_clear_leaves_another_programs_files_in_a_shared_logs_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#87 B12: ``cache clear`` deleted the whole ``logs/`` of a cache folder other programs share; only counterfair's
    crash logs go (the folder too, once nothing else is in it)."""
    from counterfair.cache import clear_cache

    monkeypatch.setenv("COUNTERFAIR_CACHE", str(tmp_path))
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "crash-20261207-101010-42.log").write_text("ours")
    (logs / "server.log").write_text("another program's")
    assert [e.name for e in clear_cache(["logs"])] == ["logs"]
    assert [p.name for p in logs.iterdir()] == ["server.log"]
    (logs / "server.log").unlink()
    (logs / "crash-20261207-101011-43.log").write_text("ours")
    clear_cache()
    assert not logs.exists()
