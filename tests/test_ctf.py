from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.commands.ctf.core import PAIR_COLUMNS, ctf_report
from counterfair.commands.ctf.shell import run_ctf
from counterfair.errors import InputError
from counterfair.metrics.fairness import ctf_gap, text_gaps


def test_paper_001_worked_example() -> None:
    # f("Some people are straight") = 0.03; gay 0.99, black 0.47, Christian 0.02 -> 0.47
    assert ctf_gap([0.03], [[0.99, 0.47, 0.02]]) == pytest.approx(0.47)


def test_gap_is_mean_of_per_text_means() -> None:
    # text 1: |0.5-0.1|, |0.5-0.9| -> 0.4 ; text 2: |0.2-0.2| -> 0 ; text 3 has no counterfactual (ignored)
    assert text_gaps([0.5, 0.2, 0.7], [[0.1, 0.9], [0.2], []]).tolist()[:2] == pytest.approx([0.4, 0.0])
    assert ctf_gap([0.5, 0.2, 0.7], [[0.1, 0.9], [0.2], []]) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="undefined"):
        ctf_gap([0.5], [[]])


def _pairs() -> pd.DataFrame:
    rows = [
        # text 0 (non-toxic, train term "white"): two counterfactuals
        (0, 0, "white", "black", "train", "heldout", 0.1, 0.5),
        (0, 0, "white", "asian", "train", "train", 0.1, 0.2),
        # text 1 (toxic, held-out term "gay")
        (1, 1, "gay", "straight", "heldout", "heldout", 0.9, 0.6),
        (1, 1, "gay", "asian", "heldout", "train", 0.9, 0.8),
    ]
    frame = pd.DataFrame(rows, columns=PAIR_COLUMNS[:8])
    frame["diff"] = frame["score_cf"] - frame["score_orig"]
    frame["abs_diff"] = frame["diff"].abs()
    return frame


def test_report_breakdowns_by_hand() -> None:
    report = ctf_report(_pairs())
    # per text: (0.4 + 0.1) / 2 = 0.25 and (0.3 + 0.1) / 2 = 0.2 -> 0.225
    assert report.value == pytest.approx(0.225)
    assert report.by_label["nontoxic"].value == pytest.approx(0.25)
    assert report.by_label["toxic"].value == pytest.approx(0.2)
    # within-split pairs only: train->train is white->asian (0.1); heldout->heldout is gay->straight (0.3)
    assert report.by_split["train"].value == pytest.approx(0.1)
    assert report.by_split["heldout"].value == pytest.approx(0.3)
    assert report.by_label and report.by_split and report.by_direction and report.by_source_term
    direction = {(d.source, d.target): d for d in report.by_direction}
    assert direction[("white", "black")].mean_diff == pytest.approx(0.4)
    assert direction[("gay", "straight")].mean_diff == pytest.approx(-0.3)
    assert report.by_source_term["gay"].value == pytest.approx(0.2)


def test_the_tally_of_blocks_is_the_report_of_the_whole_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """#47: ctf keeps per breakdown its pairs' changes (per source term their targets too) and each text's gaps as its
    block goes by, every piece in the scratch file; the report is the whole table's, value for value (a row without a
    source term is in the overall gap only)."""
    import counterfair.spill as spill
    from counterfair.commands.ctf.core import CTFTally

    monkeypatch.setattr(spill, "SPILL_BYTES", 1)  # every piece on disk

    rng = np.random.default_rng(3)
    frames = []
    for text in range(40):
        for k in range(int(rng.integers(1, 6))):
            source = ["white", "gay", "black", None][int(rng.integers(0, 4))] if k else "gay"
            target = ["asian", "straight", "white"][int(rng.integers(0, 3))]
            split = ["train", "heldout"][int(rng.integers(0, 2))]
            orig = float(rng.random())
            row = (f"t{text}", [0.0, 1.0, np.nan][text % 3], source, target, split, "train", orig, float(rng.random()))
            frames.append(row)
    whole = pd.DataFrame(frames, columns=PAIR_COLUMNS[:8])
    whole["diff"] = whole["score_cf"] - whole["score_orig"]
    whole["abs_diff"] = whole["diff"].abs()
    scratch = spill.Scratch()
    tally = CTFTally(scratch)
    cut = int(np.flatnonzero(whole["input_id"] == "t17")[0])  # blocks end where a text ends
    tally.add(whole.iloc[:cut])
    tally.add(whole.iloc[cut:])
    blocked = tally.report(seed=1, n_resamples=300, min_pairs=2)
    assert scratch.bytes_written >= 8 * len(whole)
    assert blocked == ctf_report(whole, seed=1, n_resamples=300, min_pairs=2)
    # against the breakdowns taken from the table with pandas, one gap_summary each
    from counterfair.metrics.fairness import gap_summary

    def gap(frame: pd.DataFrame) -> dict:
        return gap_summary(frame, seed=1, n_resamples=300)

    overall = {k: v for k, v in blocked.to_dict().items() if not k.startswith("by_")}
    assert overall == gap(whole).to_dict()
    assert blocked.by_label and blocked.by_split and blocked.by_source_term and blocked.by_direction
    assert blocked.by_label["toxic"] == gap(whole[whole["label"] == 1])
    train = whole[(whole["source_split"] == "train") & (whole["target_split"] == "train")]
    assert blocked.by_split["train"].by_label["nontoxic"] == gap(train[train["label"] == 0])
    assert blocked.by_source_term == {str(t): gap(g) for t, g in whole.groupby("source_term")}
    directions = [(s, t, len(g)) for (s, t), g in whole.groupby(["source_term", "target_term"]) if len(g) >= 2]
    assert [(d.source, d.target, d.pairs) for d in blocked.by_direction] == directions
    assert blocked.pairs == len(whole) and sum(e.pairs for e in blocked.by_source_term.values()) < len(whole)


def test_run_ctf_end_to_end(tmp_path: Path, helper_module: str) -> None:
    # a classifier that calls "gay" awful: the straight -> gay swap raises the score
    (tmp_path / "clf.py").write_text(
        "import numpy as np\n"
        "def biased(texts):\n    return np.array([0.9 if 'gay' in t.lower() else 0.1 for t in texts])\n"
    )
    data = pd.DataFrame(
        {"text": ["Some people are straight.", "I like my black car.", "A Christian family"], "toxic": [0, 0, 0]}
    )
    result = run_ctf(
        data,
        tmp_path / "out",
        classifier=f"callable:{tmp_path / 'clf.py'}:biased",
        identities="straight,gay,black,christian",
        label_column="toxic",
    )
    summary = result.summary
    assert result.ctf_gap == summary["ctf_gap"] and len(result.pairs) == summary["pairs"]  # pairs.csv, read now
    # text 0: 3 swaps, one to 'gay' (+0.8) -> 0.8/3 ; text 2: 3 swaps, one to 'gay' -> 0.8/3 ; text 1 guarded
    assert summary["ctf_gap"] == pytest.approx(0.8 / 3)
    assert summary["input"]["texts_with_identity_terms"] == 2
    assert summary["guard"] == {"mode": "spacy", "occurrences": 3, "blocked": 1}  # straight, black (car), christian
    pairs = pd.read_csv(tmp_path / "out" / "pairs.csv")
    assert len(pairs) == 6 and set(pairs["schema_version"].astype(str)) == {"1"}
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk["ctf_gap"] == pytest.approx(0.8 / 3)


def test_no_identity_terms_is_an_error_not_zero(tmp_path: Path) -> None:
    data = pd.DataFrame({"text": ["The weather is nice.", "I like my black car."]})
    with pytest.raises(InputError, match="none of the 2 texts contains an identity term"):
        run_ctf(data, tmp_path, identities="gay,straight,black")


def test_bad_labels(tmp_path: Path) -> None:
    data = pd.DataFrame({"text": ["I am gay.", "I am straight."], "toxic": ["0", None]})
    with pytest.raises(InputError, match="row 1 has no label"):
        run_ctf(data, tmp_path, identities="gay,straight", label_column="toxic")
    data["toxic"] = ["0", "maybe"]
    with pytest.raises(InputError, match="label 'maybe'"):
        run_ctf(data, tmp_path, identities="gay,straight", label_column="toxic")


def test_overlapping_terms_are_reported(tmp_path: Path) -> None:
    data = pd.DataFrame({"text": ["An african american author", "An african author"]})
    summary = run_ctf(data, tmp_path, identities="african,african american,asian").summary
    assert summary["identities"]["overlapping_terms"] == [
        "'african' is part of 'african american' (the longer match wins)"
    ]
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    assert set(pairs[pairs.input_id == 0]["source_term"]) == {"african american"}
    assert np.isfinite(summary["ctf_gap"])


def test_a_gap_over_only_the_scored_pairs_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#16 item 4: 2 counterfactuals, one not in the scores file: gap 0.70 over 1 pair, flagged everywhere."""
    import sys

    from counterfair.cli import main

    data = tmp_path / "c.csv"
    pd.DataFrame({"text": ["Some people are straight."]}).to_csv(data, index=False)
    scores = tmp_path / "scores.csv"
    pd.DataFrame({"text": ["Some people are straight.", "Some people are gay."], "score": [0.1, 0.8]}).to_csv(
        scores, index=False
    )
    out = tmp_path / "ctf"
    argv = ["counterfair", "ctf", str(data), "--identities", "straight,gay,black", "--classifier", f"scores:{scores}"]
    old, sys.argv = sys.argv, [*argv, "--out", str(out), "-q"]
    try:
        with pytest.raises(SystemExit) as done:
            main()
    finally:
        sys.argv = old
    assert done.value.code in (0, None)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ctf_gap"] == pytest.approx(0.7)  # |0.8 - 0.1|, the one scored pair
    assert summary["pairs_without_score"] == 1 and summary["complete"] is False
    assert summary["incomplete_texts"] == {"texts": 1, "ids": ["0"]}
    assert "1 pairs have no score" in capsys.readouterr().out
    from counterfair import ctf

    result = ctf(data, f"scores:{scores}", identities="straight,gay,black")
    assert "1 pairs have no score; the gap is over the scored pairs only." in result._repr_html_()  # its page's note


def test_ctf_claims_its_run_directory_before_any_work(tmp_path, monkeypatch) -> None:
    """#35 item 13: a rerun with other options (or a directory holding an audit) was refused only after the whole
    computation, and an audit's directory was called "a ctf run"."""
    from typer.testing import CliRunner

    from counterfair.cli import app
    from counterfair.commands.ctf import shell as ctf_shell
    from counterfair.errors import ConfigError

    data = tmp_path / "texts.csv"
    data.write_text("text\nI am a gay man.\nMy Muslim neighbour is kind.\n")
    runner = CliRunner()
    first = runner.invoke(app, ["ctf", str(data), "--out", str(tmp_path / "ctf"), "-q"])
    assert first.exit_code == 0, first.output

    def must_not_run(*args, **kwargs):
        raise AssertionError("ctf computed before its run directory was checked")

    monkeypatch.setattr(ctf_shell, "ctf_core", must_not_run)
    other = runner.invoke(app, ["ctf", str(data), "--out", str(tmp_path / "ctf"), "--no-guard", "-q"])
    assert isinstance(other.exception, ConfigError) and "differs in: options (guard: 'spacy' -> None)" in str(
        other.exception
    )
    audit = tmp_path / "audit"
    assert runner.invoke(app, ["audit", str(data), "--methods", "swap", "--out", str(audit), "-q"]).exit_code == 0
    into_audit = runner.invoke(app, ["ctf", str(data), "--out", str(audit), "-q"])
    assert isinstance(into_audit.exception, ConfigError)
    assert f"{audit} holds an audit, not a ctf run" in str(into_audit.exception)


def test_blocks_written_as_they_are_made_equal_the_whole_run_and_keep_no_texts() -> None:
    """#47 item 15: ctf worked on its whole input at once (58 KiB a text; 6 GB at 100k texts). Block by block, each
    block's pairs are handed on as they are made, the classifier forgets its per-text cache, and the pairs, the
    summary and the written table are those of one block holding every text."""
    import counterfair as cf
    from counterfair.commands.ctf.core import PAIR_FILE_COLUMNS, ctf_core

    texts = [
        "I am a gay man.",
        "hello there",
        "My Muslim neighbour is kind.",
        "Some people are straight.",
        "A black car and a Jewish friend.",
        "The weather is nice.",
    ]
    frame = pd.DataFrame({"text": texts, "label": [0, 0, 1, 0, 1, 0]})
    clf = cf.as_classifier(lambda t: np.array([0.9 if "gay" in x.lower() else 0.1 + len(x) / 1000 for x in t]))
    whole, summary = ctf_core(frame, clf, label_column="label", n_resamples=200, block=100)
    written: list[pd.DataFrame] = []
    compact, blocked = ctf_core(frame, clf, label_column="label", n_resamples=200, block=2, write_pairs=written.append)
    assert blocked == summary
    assert len(written) == 3 and clf.cached_texts == 0  # one frame per block with identity terms; cache emptied
    pd.testing.assert_frame_equal(pd.concat(written, ignore_index=True)[PAIR_FILE_COLUMNS], whole[PAIR_FILE_COLUMNS])
    assert compact.empty  # no pair kept: each block's statistics are gathered as it is made (CTFTally)
