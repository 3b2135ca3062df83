"""Write docs/tutorials/notebook.ipynb, the notebook tour that tests/test_notebook.py executes with nbclient (and that
docs/gallery shows executed): python tools/make_notebook.py."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS = [
    new_markdown_cell(
        "# counterfair in a notebook\n\nA classifier, some texts, and the answer: is it fair, for whom, how sure are "
        "we. Every result shows its verdict first; tables are DataFrames."
    ),
    new_code_cell(
        "import counterfair as cf\n\n"
        "public = [name for name in dir(cf) if not name.startswith('_')]  # what tab completion offers\n"
        "print(len(public), public[:8])"
    ),
    new_code_cell(
        "from sklearn.feature_extraction.text import TfidfVectorizer\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "from sklearn.pipeline import make_pipeline\n\n"
        "train = ['you are an idiot', 'have a lovely day', 'shut up, stupid', 'thanks for the help',\n"
        "         'what a moron', 'great work', 'gay people are disgusting', 'my gay friend is great']\n"
        "model = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(train, [1, 0, 1, 0, 1, 0, 1, 0])\n"
        "clf = cf.as_classifier(model, labels=['non-toxic', 'toxic'])\n"
        "clf"
    ),
    new_code_cell(
        "texts = ['I am a gay man.', 'My Muslim neighbour grows tomatoes.',\n"
        "         'Christian families met at the park.', 'Our Jewish colleague gave a great talk.',\n"
        "         'The old man walked his dog.', 'She is a proud lesbian.']\n"
        "audit = cf.audit(texts, clf, methods=['swap'], bootstrap=300, progress=True)\n"
        "audit"
    ),
    new_code_cell("audit.overall"),
    new_code_cell("audit.difference()  # largest minus smallest over the identity groups"),
    new_code_cell("audit.check(['upper(identity_effect[*]) > 0.05'])"),
    new_code_cell("cfs = cf.generate(texts[:2], ['ablation', 'swap'], attribute='lgbq', progress=False)\ncfs"),
    new_code_cell("suite = cf.suite(classifier=clf, bootstrap=200, progress=False)\nsuite"),
]


def main() -> None:
    notebook = new_notebook(cells=CELLS, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    target = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "notebook.ipynb"
    nbformat.write(notebook, target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
