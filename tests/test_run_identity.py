"""One run identity (counterfair.records.run_identity): options dataclasses mark what is not part of a run's identity
(knobs, fields that do not apply, fields added later while at their default), and one function fingerprints them.
The fingerprints below are the ones the five hand-built identities gave before they became one (computed with the
code of commit c5ffcc9): existing run directories still resume."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, fields

from counterfair.commands.audit.options import AuditOptions
from counterfair.commands.bias.core import BiasOptions
from counterfair.commands.ctf.core import CTFOptions, ctf_core
from counterfair.commands.evaluate.options import EvaluateOptions
from counterfair.commands.feedback.core import FeedbackOptions
from counterfair.commands.generate.options import GenerateOptions
from counterfair.records import fingerprint, knob, run_identity


def test_fingerprints_are_the_ones_runs_were_made_with() -> None:
    # #32: llm left generate's default methods; a run made with the old default resumes when it names them
    assert GenerateOptions().fingerprint() == "dc8aa9ef8f57"
    # #50: an LLM run retries only texts whose candidates came near (other outputs): a new identity; a run made before
    # (every text retried) resumes with --retry-nearness 0
    old_llm_run = GenerateOptions(
        methods=["ablation", "substitution", "swap", "llm"], detector="keyword", retry_nearness=0.0
    )
    assert old_llm_run.fingerprint() == "ffdd3755a02e"
    assert GenerateOptions(methods=["ablation", "substitution", "swap", "llm"], detector="keyword").fingerprint() != (
        "ffdd3755a02e"
    )
    assert GenerateOptions(language="fr").fingerprint() == "9537cc6936d3"
    french = GenerateOptions(
        language="fr", methods=[*GenerateOptions().methods, "llm"], detector="keyword", retry_nearness=0.0
    )
    assert french.fingerprint() == "a877642b0ed7"
    # #34: an llm run's detector is keyword+llm by default (other outputs): a new identity; a run without the llm
    # method resolves auto to keyword and keeps its own (above)
    new_llm_run = GenerateOptions(methods=["ablation", "substitution", "swap", "llm"])
    assert new_llm_run.detector == "keyword+llm" and new_llm_run.fingerprint() != old_llm_run.fingerprint()
    assert AuditOptions().detector == "keyword" and AuditOptions(methods=["swap", "llm"]).detector == "keyword+llm"
    assert GenerateOptions(methods=["polyjuice"], retry_nearness=0.0).fingerprint() == "09eef22b31de"
    assert GenerateOptions(chunk=7, engine="ray").fingerprint() == "dc8aa9ef8f57"  # knobs: the same run
    # evaluate names no classifier by default since #31; a run made with the old default resumes when it is named
    named = EvaluateOptions(target_column="label", batch_size=3, classifier="profanity-check")
    assert fingerprint(run_identity(named)) == "6a465b9f9a1f"


def test_what_each_command_leaves_out_of_its_identity() -> None:
    assert set(run_identity(AuditOptions())) >= {"methods", "threshold", "placebo", "seed"}
    assert not {"classifier", "bootstrap", "top_examples", "llm_parallel", "llm_concurrency"} & set(
        run_identity(AuditOptions())
    )
    assert "classifier" not in run_identity(FeedbackOptions()) and "editor" in run_identity(FeedbackOptions())
    evaluate = run_identity(EvaluateOptions())
    assert not {"batch_size", "engine", "address", "ppl_token_budget", "metrics_explicit"} & set(evaluate)
    assert not {"context_column", "revised_input", "target_column"} & set(evaluate)  # later options at default
    assert run_identity(EvaluateOptions(revised_input="second", context_column="premise"))["revised_input"] == "second"
    generate = run_identity(GenerateOptions())
    assert "language" not in generate and "polyjuice_model" not in generate and "chunk" not in generate
    assert run_identity(GenerateOptions(methods=["polyjuice"]))["polyjuice_model"] == "uw-hai/polyjuice"


def test_ctf_options_mirror_the_core() -> None:
    params = inspect.signature(ctf_core).parameters
    how = ("progress", "origin", "write_pairs", "block", "scratch_dir")  # how it runs, not what: not run options
    core = {n: p.default for n, p in params.items() if p.kind is p.KEYWORD_ONLY and n not in how}
    assert {f.name: f.default for f in fields(CTFOptions)} == core
    # run.json lists them alphabetically, as before; language, added later, only when it is not English
    assert list(run_identity(CTFOptions())) == sorted(set(core) - {"language"})
    assert run_identity(CTFOptions(language="fr"))["language"] == "fr"
    assert "language" not in run_identity(AuditOptions()) and "language" not in run_identity(BiasOptions())
    assert run_identity(AuditOptions(language="de"))["identities"] == "identity-de"


def test_run_identity_reads_the_field_metadata() -> None:
    @dataclass
    class Options:
        a: int = 1
        speed: int = knob(4)
        only_with_b: str = field(default="x", metadata={"applies": lambda o: o.a == 2})
        later: str | None = field(default=None, metadata={"later": True})

    assert run_identity(Options()) == {"a": 1}
    assert run_identity(Options(a=2, speed=9, later="y")) == {"a": 2, "only_with_b": "x", "later": "y"}
    assert fingerprint({"a": 1}) != fingerprint({"a": 1}, editor="e")  # more parts: the options beside them
