"""One registry per extension point: an editor or a classifier kind registered in one file (a plugin) appears in
generate's and audit's method lists, the audit's estimate, the CLI help, and runs through the CLI end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from counterfair.classifiers import (
    ClassifierKind,
    as_classifier,
    load_classifier,
    register_classifier_kind,
    unregister_classifier_kind,
)
from counterfair.classifiers.kinds import find_kind, spec_forms
from counterfair.commands.audit.options import AuditOptions, estimate_seconds
from counterfair.commands.feedback.core import FeedbackOptions
from counterfair.commands.generate.options import GenerateOptions, is_sampled
from counterfair.editors.registry import (
    EditorSpec,
    default_editors,
    editor_names,
    editor_spec,
    editors_help,
    register_editor,
    unregister_editor,
)
from counterfair.errors import ConfigError

PLUGINS = Path(__file__).parent / "plugins"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COUNTERFAIR_PLUGINS": "toy_plugin", "PYTHONPATH": str(PLUGINS)}
    return subprocess.run(
        [sys.executable, "-m", "counterfair.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_a_plugin_editor_and_classifier_kind_run_through_the_cli(tmp_path: Path) -> None:
    helps = {command: _cli(command, "--help", cwd=tmp_path) for command in ("generate", "audit", "feedback")}
    flat = {command: " ".join(done.stdout.replace("│", " ").split()) for command, done in helps.items()}
    assert "shout (the text in capitals)" in flat["generate"] and "shout (the text in capitals)" in flat["audit"]
    assert "shout" not in flat["feedback"]  # the spec offers it to generate and audit only

    done = _cli(
        "audit", "--demo", "--methods", "ablation,shout", "--classifier", "length:100", "--placebo", "none",
        "--out", str(tmp_path / "run"), "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    attribute_texts = sum(summary["input"]["attributes"].values())
    assert attribute_texts == 26  # the demo's Islam, Judaism, LGBQ and transgender texts
    # the estimate from the specs: 25 s fixed + 0.02 s (ablation) + 0.5 s (shout, the plugin's figure) per text
    assert summary["input"]["estimated_seconds"] == round(25 + (0.02 + 0.5) * attribute_texts)  # whole seconds
    assert summary["classifier"]["type"] == "length" and summary["classifier"]["scale"] == 100.0
    pairs = pd.read_csv(tmp_path / "run" / "pairs.csv")
    shout = pairs[pairs["method"] == "shout"]
    assert len(shout) == attribute_texts
    assert (shout["cf_text"] == shout["source_text"].str.upper()).all()
    expected = np.minimum(1.0, shout["source_text"].str.len() / 100)
    np.testing.assert_allclose(shout["score_orig"], expected)
    np.testing.assert_allclose(shout["diff"], 0.0)  # capitals keep the length: the toy classifier cannot tell
    assert {g["method"] for g in summary["groups"]} == {"ablation", "shout"}


def test_a_broken_plugin_is_named(tmp_path: Path) -> None:
    env = {**os.environ, "COUNTERFAIR_PLUGINS": "no_such_plugin_module"}
    done = subprocess.run(
        [sys.executable, "-m", "counterfair.cli", "--help"], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 2
    assert "plugin 'no_such_plugin_module'" in done.stderr and "failed to import" in done.stderr


def test_method_lists_defaults_and_estimates_come_from_the_specs() -> None:
    assert editor_names("generate") == ("ablation", "substitution", "swap", "llm", "polyjuice")
    assert editor_names("audit") == editor_names("generate")
    assert editor_names("feedback") == ("synonym", "mask_fill", "llm_flip", "llm_flip_loop", "external")
    assert default_editors("generate") == ("ablation", "substitution", "swap")  # llm is opt-in (#32)
    assert default_editors("audit") == ("ablation", "substitution", "swap")
    assert GenerateOptions().methods == ["ablation", "substitution", "swap"]
    assert AuditOptions().methods == ["ablation", "substitution", "swap"]
    assert [m for m in editor_names() if is_sampled(m)] == ["llm", "polyjuice"]
    # polyjuice was accepted by AuditOptions and then had no estimate (KeyError); now it is the spec's figure
    assert AuditOptions(methods=["polyjuice"]).methods == ["polyjuice"]
    assert estimate_seconds({"islam": 10}, 4, ["polyjuice", "swap"]) == pytest.approx(25 + 5.4 * 10 + 0.05 * 4)
    assert "external:PATH (counterfactuals from a file)" in editors_help("feedback")
    with pytest.raises(ConfigError, match=r"unknown editor 'shout:x'; the editors are: ablation, .*external:PATH"):
        editor_spec("shout:x")
    with pytest.raises(ConfigError, match="use one of synonym, mask_fill, llm_flip, llm_flip_loop, external:PATH"):
        FeedbackOptions(editor="ablation")  # a generate/audit editor is not a feedback editor


def test_registering_an_editor_in_process() -> None:
    from counterfair.editors.wordlist import AblationEditor

    spec = EditorSpec("strip", lambda ctx, arg: AblationEditor(ctx.attribute), "ablation again", seconds_per_text=1.5)
    register_editor(spec)
    try:
        assert "strip" in editor_names("audit") and "strip" not in default_editors("audit")
        assert GenerateOptions(methods=["strip", "ablation"]).methods == ["ablation", "strip"]  # registry order
        assert estimate_seconds({"islam": 2}, 0, ["strip"]) == pytest.approx(25 + 3.0)
        with pytest.raises(ConfigError, match="already registered"):
            register_editor(spec)
    finally:
        unregister_editor("strip")
    assert "strip" not in editor_names()
    with pytest.raises(ConfigError, match="lower case, no ':'"):
        register_editor(EditorSpec("Bad:Name", spec.build, "x"))
    with pytest.raises(ConfigError, match="commands must be among"):
        EditorSpec("x", spec.build, "x", commands=("audit",), defaults=("generate",))


def test_classifier_kinds_come_from_one_table() -> None:
    forms = spec_forms()
    assert forms.startswith("profanity-check, imdb-sentiment, sklearn:PATH, hf:DIR")
    # as_classifier recognised its own list of kinds, which lacked llm-classifier; now it asks the table
    assert find_kind("llm-classifier:openai:http://127.0.0.1:1") is not None
    assert find_kind("https://127.0.0.1:9/score")[1] == "//127.0.0.1:9/score"
    assert find_kind("owner/model") is None  # a hub id is not a kind
    with pytest.raises(ConfigError, match="unknown classifier kind 'nope' in 'nope:x'; use one of: profanity-check"):
        load_classifier("nope:x")

    class Constant:
        labels: ClassVar[list[str]] = ["a", "b"]

        def __init__(self, p: float) -> None:
            self.p = p

        def predict_proba(self, texts: list[str]) -> np.ndarray:
            return np.array([[1 - self.p, self.p]] * len(texts))

    def build(arg: str, spec: str) -> tuple[Constant, dict[str, object]]:
        return Constant(float(arg)), {"type": "const", "p": float(arg)}

    register_classifier_kind(ClassifierKind("const", build, "const:P", "a constant", pinned=lambda s: False))
    try:
        clf = as_classifier("const:0.25")
        np.testing.assert_allclose(clf.predict_proba(["x", "y"])[:, 1], [0.25, 0.25])
        assert clf.signature()["type"] == "const" and "const:P" in spec_forms()
        with pytest.raises(ConfigError, match="already registered"):
            register_classifier_kind(ClassifierKind("const", build, "const:P", "again"))
    finally:
        unregister_classifier_kind("const")
    assert find_kind("const:0.25") is None


def test_a_plugin_adds_a_command_in_one_file(tmp_path: Path) -> None:
    env = {**os.environ, "COUNTERFAIR_PLUGINS": "command_plugin", "PYTHONPATH": str(PLUGINS)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "counterfair.cli", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    listed = cli("--help")
    assert "Plugin commands" in listed.stdout and "slot-variants" in listed.stdout
    done = cli("slot-variants", "An {group} applicant.", "--identities", "gay,Asian")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[:2] == ["identity\tA gay applicant.", "identity\tAn Asian applicant."]
    assert "placebo\tA hatless applicant." in lines and len(lines) == 2 + 5


def test_an_editor_registered_as_an_identity_swap_is_audited_as_one() -> None:
    """#48: what an editor is comes from its registry entry, not its name. A second identity swap under another name
    (the built-in's builder) gives the audit the same pairs, placebo, in-slot effects and verdict as ``swap``."""
    import counterfair as cf

    def gay_is_toxic(texts: list[str]) -> list[float]:
        return [0.2 + 0.3 * ("gay" in t.lower()) for t in texts]

    texts = ["Some people are gay.", "My Muslim neighbour waved.", "The Jewish baker sold bread.", "Old people vote."]
    register_editor(
        EditorSpec("swap_again", editor_spec("swap").build, "identity swaps again", identity_texts=True, color="#000")
    )
    try:
        mine = cf.audit(texts, gay_is_toxic, methods=["swap_again"], bootstrap=50)
    finally:
        unregister_editor("swap_again")
    theirs = cf.audit(texts, gay_is_toxic, methods=["swap"], bootstrap=50)
    assert set(mine.pairs["method"]) == {"swap_again"} and len(mine.pairs) == len(theirs.pairs) > 40
    same = mine.pairs.drop(columns="method").reset_index(drop=True)
    pd.testing.assert_frame_equal(same, theirs.pairs.drop(columns="method").reset_index(drop=True))
    assert len(mine.slots) == len(theirs.slots) > 0  # its swaps fill the identity slots as the built-in one's do
    effect = mine.typed_summary.effects
    assert effect is not None and theirs.typed_summary.effects is not None
    assert effect.to_dict() == theirs.typed_summary.effects.to_dict()

    def settled(summary: object) -> object:  # the summary without its timings, the second swap called swap
        if isinstance(summary, dict):
            return {k: settled(v) for k, v in summary.items() if "timing" not in k and "seconds" not in k}
        if isinstance(summary, list):
            return [settled(v) for v in summary]
        return "swap" if summary == "swap_again" else summary

    mine_summary = settled(json.loads(json.dumps(mine.summary, default=str)))
    assert isinstance(mine_summary, dict)
    mine_summary["signatures"]["identity"] = {
        "swap" if k == "swap_again" else k: v for k, v in mine_summary["signatures"]["identity"].items()
    }
    assert mine_summary == settled(json.loads(json.dumps(theirs.summary, default=str)))
    assert mine.summary["validity"]["identity_occurrences"] == 4  # the guard's counts read from the swap's own entry
