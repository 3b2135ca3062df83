"""Several methods compared (CEval Table 2, Figs. 1-2) and the evaluate report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.classifiers import as_classifier
from counterfair.commands.evaluate.page import build_evaluation_report
from counterfair.commands.methods.core import parse_method_files
from counterfair.commands.methods.shell import evaluate_methods
from counterfair.errors import ConfigError, InputError

from .conftest import SHARED_DATA, run_cli

ORIGINALS = ["the film was awful and slow", "a fine cast in a dull story", "great fun"]


def sentiment(texts: list[str]) -> np.ndarray:
    """P(pos): 0.1 with 'awful' or 'dull' in the text, else 0.9."""
    return np.array([0.1 if ("awful" in t or "dull" in t) else 0.9 for t in texts])


sentiment.labels = ["neg", "pos"]  # type: ignore[attr-defined]


def _files(tmp_path: Path) -> dict[str, Path]:
    methods = {
        # both negative texts flipped; the positive one left without a counterfactual
        "alpha": ["the film was great and slow", "a fine cast in a bright story", "-1"],
        # one flip, one edit that keeps the label, the positive text flipped
        "beta": ["the film was awful and quick", "a fine cast in a fresh story", "awful fun"],
    }
    out = {}
    for name, cfs in methods.items():
        path = tmp_path / f"{name}.csv"
        pd.DataFrame({"orig_text": ORIGINALS, "gen_text": cfs}).to_csv(path, index=False)
        out[name] = path
    return out


def test_table2_and_distance_matrix_by_hand(tmp_path: Path) -> None:
    files = _files(tmp_path)
    result = evaluate_methods(files, _options(), out_dir=tmp_path / "cmp", classifier=as_classifier(sentiment))
    table = result.table
    # alpha: 2 flips of 3 instances (the -1 row counts as no flip); beta: rows 2 and 3 flip
    assert table.loc["alpha", "flip_rate"] == pytest.approx(2 / 3)
    assert table.loc["beta", "flip_rate"] == pytest.approx(2 / 3)
    assert table.loc["alpha", "with_counterfactual"] == 2 and table.loc["beta", "with_counterfactual"] == 3
    # distance: one token each (alpha 2 pairs, beta 3), per token of the original (6, 7 and 2 tokens) in CEval's
    # column; over the flipped pairs only: beta's rows 1 and 2
    assert table.loc["alpha", "distance_tokens"] == pytest.approx(1.0)
    assert table.loc["alpha", "distance"] == pytest.approx((1 / 6 + 1 / 7) / 2)
    assert table.loc["beta", "distance_flipped"] == pytest.approx((1 / 7 + 1 / 2) / 2)
    # prob change of the contrast label (pos for negative originals, neg for the positive one): alpha +0.8, +0.8;
    # beta 0.0 (awful stays), +0.8, +0.8
    assert table.loc["alpha", "prob_change"] == pytest.approx(0.8)
    assert table.loc["beta", "prob_change"] == pytest.approx((0.0 + 0.8 + 0.8) / 3)
    matrix = result.distance_matrix
    # alpha vs beta, rows 0 and 1 (row 2: alpha has none): "great and slow" vs "awful and quick" = 2; "bright" vs
    # "fresh" = 1 -> 1.5; original vs alpha = 1, original vs beta = 1
    assert matrix.loc["alpha", "beta"] == pytest.approx(1.5) == matrix.loc["beta", "alpha"]
    assert matrix.loc["original", "alpha"] == pytest.approx(1.0)
    assert matrix.loc["original", "beta"] == pytest.approx(1.0)
    assert matrix.loc["beta", "beta"] == 0.0
    out = tmp_path / "cmp"
    for name in ("comparison.csv", "distance_matrix.csv", "summary.json", "report.html", "methods/alpha/rows.csv"):
        assert (out / name).exists(), name
    page = (out / "report.html").read_text()
    assert 'id="fig-contrast_histograms"' in page and 'id="fig-distance_matrix"' in page
    assert "CEval Table 2" in page and "66.7%" in page


def _options() -> object:
    from counterfair.commands.evaluate.options import EvaluateOptions

    return EvaluateOptions(metrics=["flip", "prob_change", "distance"], bootstrap=200, classifier="profanity-check")


def test_methods_must_edit_the_same_originals(tmp_path: Path) -> None:
    files = _files(tmp_path)
    pd.DataFrame({"orig_text": [ORIGINALS[0], "another text", ORIGINALS[2]], "gen_text": ["a", "b", "c"]}).to_csv(
        tmp_path / "gamma.csv", index=False
    )
    with pytest.raises(
        InputError, match=r"gamma, row 1: the original differs from alpha's row 1 \('another text' vs 'a fine cast"
    ):
        evaluate_methods({**files, "gamma": tmp_path / "gamma.csv"}, _options(), classifier=sentiment)
    with pytest.raises(ConfigError, match="at least two"):
        evaluate_methods({"alpha": files["alpha"]}, _options())


def test_method_names_from_stems_or_given(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert parse_method_files([str(files["alpha"]), f"b={files['beta']}"]) == {
        "alpha": files["alpha"],
        "b": files["beta"],
    }
    with pytest.raises(ConfigError, match="two methods are named 'alpha'"):
        parse_method_files([str(files["alpha"]), f"alpha={files['beta']}"])
    with pytest.raises(ConfigError, match="taken by the original texts"):
        parse_method_files([f"original={files['alpha']}", str(files["beta"])])


def _write_clf(tmp_path: Path) -> None:
    """``sentiment`` as a file for ``--classifier callable:clf.py:clf``."""
    (tmp_path / "clf.py").write_text(
        "import numpy as np\n"
        "def clf(texts):\n"
        "    return np.array([0.1 if ('awful' in t or 'dull' in t) else 0.9 for t in texts])\n"
        "clf.labels = ['neg', 'pos']\n"
    )


@pytest.mark.slow
def test_cli_compares_methods_and_report_rebuilds(tmp_path: Path) -> None:
    files = _files(tmp_path)
    _write_clf(tmp_path)
    out = tmp_path / "cmp"
    done = run_cli(
        "evaluate", str(files["alpha"]), f"B={files['beta']}", "--metrics", "flip,prob_change,distance",
        "--classifier", f"callable:{tmp_path / 'clf.py'}:clf", "--bootstrap", "200", "-o", str(out), "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "CEval Table 2" in done.stdout and "0.667" in done.stdout
    table = pd.read_csv(out / "comparison.csv")
    assert table["method"].tolist() == ["alpha", "B"]
    (out / "report.html").unlink()
    rebuilt = run_cli("report", str(out))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "fig-distance_matrix" in (out / "report.html").read_text()


@pytest.mark.slow
def test_single_evaluate_dir_report_has_the_histogram(tmp_path: Path) -> None:
    files = _files(tmp_path)
    _write_clf(tmp_path)
    out = tmp_path / "one"
    done = run_cli(
        "evaluate", str(files["beta"]), "--metrics", "flip,prob_change,distance", "--classifier",
        f"callable:{tmp_path / 'clf.py'}:clf", "--bootstrap", "200", "-o", str(out), "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = (out / "report.html").read_text()
    assert 'id="fig-contrast_histograms"' in page and "fig-distance_matrix" not in page
    assert "66.7%" in page  # the CEval flip rate, 2 of 3
    paths = build_evaluation_report(out)
    assert paths["html"] == out / "report.html"


@pytest.mark.skipif(not (SHARED_DATA / "ceval" / "outputs").exists(), reason="CEval outputs not on this machine")
def test_ceval_outputs_distance_matrix_on_real_methods(tmp_path: Path) -> None:
    """Three of CEval's IMDB methods on their first 12 reviews: the matrix is symmetric, zero on the diagonal, and
    the original-vs-method column equals each method's own mean distance."""
    files = {}
    for name in ("crowd", "expert", "mice"):
        frame = pd.read_csv(SHARED_DATA / "ceval" / "outputs" / "imdb" / f"{name}.csv").head(12)
        files[name] = tmp_path / f"{name}.csv"
        frame.to_csv(files[name], index=False)
    from counterfair.commands.evaluate.options import EvaluateOptions

    result = evaluate_methods(files, EvaluateOptions(metrics=["distance"], bootstrap=200))
    matrix = result.distance_matrix
    assert np.allclose(matrix.to_numpy(), matrix.to_numpy().T) and (np.diag(matrix.to_numpy()) == 0).all()
    for name in files:
        rows = result.results[name].rows
        assert matrix.loc["original", name] == pytest.approx(rows["distance"].mean())
    assert matrix.loc["crowd", "expert"] < matrix.loc["crowd", "mice"]  # the two human edits are closest


@pytest.mark.parametrize("name", ["../../x", "/tmp/elsewhere", "a/b", "..", " "])
def test_a_method_name_that_would_write_outside_out_is_refused(tmp_path: Path, name: str) -> None:
    """#87 B7: ``evaluate "../../x=a.csv" b.csv`` (or an absolute name) wrote the method's run outside --out."""
    with pytest.raises(ConfigError, match="not a plain name"):
        parse_method_files([f"{name}={tmp_path / 'a.csv'}", str(tmp_path / "b.csv")])
    assert set(parse_method_files([f"llm={tmp_path / 'a.csv'}", str(tmp_path / "b.csv")])) == {"llm", "b"}
