"""The notebook tour (docs/tutorials/notebook.ipynb, written by tools/make_notebook.py) executed with nbclient as a user
would run it: tab completion lists the public names, the Python API shows progress, and the classifier, an audit,
its gate, a list of counterfactuals and a suite show readable views, each with its verdict first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "notebook.ipynb"


@pytest.fixture(scope="module")
def executed() -> list[Any]:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3").execute()
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _text(cell: Any, kind: str = "text/plain") -> str:
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(f"[{output.name}] {output.text}")
        elif kind in output.get("data", {}):
            parts.append(output["data"][kind])
    return "\n".join(parts)


@pytest.mark.slow
def test_the_notebook_runs_with_completion_progress_and_readable_views(executed: list[Any]) -> None:
    names, clf, audit, overall, difference, gate, cfs, suite = (_text(c) for c in executed)
    import counterfair as cf

    public = [name for name in cf.__all__ if not name.startswith("_")]  # what the notebook counts: dir() less dunders
    assert names.startswith(f"[stdout] {len(public)} ['AuditOptions'") and "Warning" not in names
    assert "CachedClassifier('python:Pipeline', 0 texts predicted)" in clf and "[stderr]" not in clf  # no tqdm warning
    assert "swap (identity terms): 100%" in audit and "6/6" in audit, audit  # progress, named by what it counts
    html = _text(executed[2], "text/html")
    assert html.index("Verdict:") < html.index("<table")
    assert "identity_effect" in overall and "ctf_gap_low" in overall
    assert "identity_effect" in difference
    assert (
        gate.startswith("Fairness gate: ") and "more checks" in gate
    )  # 'default': failed checks listed, passes counted
    assert cfs.startswith("Counterfactuals: ") and "I am a man." in cfs
    assert "<table" in _text(executed[6], "text/html")
    assert suite.startswith("SuiteResult(2150 cases")
    assert "Verdict: accuracy" in _text(executed[7], "text/html")
