"""Screenshots of every command's report and of the executed notebook tour, first screen at 1400 × 900, for
docs/gallery.md: python tools/gallery.py [--work DIR]. Needs Chromium (make test installs it) and nbconvert.

Each run uses data that ships with counterfair (the demo texts, the sample pairs, the template suite), so the gallery
can be rebuilt on any machine."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "gallery"
DEMO = ROOT / "src" / "counterfair" / "resources" / "demo_audit.csv"


def cli(*args: str, quiet: bool = True) -> None:
    argv = [sys.executable, "-m", "counterfair.cli", *args, *(["-q"] if quiet else [])]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: a gate rule failed, on purpose below
        raise SystemExit(f"counterfair {' '.join(args)} failed:\n{done.stderr[-2000:]}")


def runs(work: Path) -> dict[str, Path]:
    names = ("audit", "bias", "suite", "ctf", "generate", "feedback", "evaluate", "compare")
    out = {name: work / name for name in names}
    cli("audit", "--demo", "--out", str(out["audit"]), "--fail-if", "default")
    cli("suite", "export", str(work / "suite.csv"), quiet=False)
    suite = pd.read_csv(work / "suite.csv").rename(columns={"test_case": "text", "label_gold": "label"})
    suite[["text", "label"]].to_csv(work / "labelled.csv", index=False)
    cli("bias", str(work / "labelled.csv"), "--label-column", "label", "--out", str(out["bias"]),
        "--fail-if", "lower(bpsn_auc[*]) < 0.6")  # fmt: skip
    cli("suite", "run", "--out", str(out["suite"]), "--fail-if", "lower(accuracy[*]) < 0.3")
    cli("ctf", str(DEMO), "--out", str(out["ctf"]))
    cli("generate", str(DEMO), "--attributes", "lgbq", "--methods", "ablation,substitution,swap",
        "--out", str(out["generate"]))  # fmt: skip
    texts = pd.read_csv(DEMO)["text"]
    edits = pd.DataFrame({"orig_text": texts, "gen_text": [" ".join(t.split()[1:]) for t in texts]})
    edits.to_csv(work / "edits.csv", index=False)
    cli("feedback", str(DEMO), "--editor", f"external:{work / 'edits.csv'}", "--classifier", "profanity-check",
        "--steps", "1", "--ppl-model", "none", "--out", str(out["feedback"]))  # fmt: skip
    cli("evaluate", "--demo", "--metrics", "flip,prob_change,distance,bleu", "--out", str(out["evaluate"]))
    # B: a keyword model that reacts only to "gay", against the default classifier's audit (A)
    (work / "keyword.py").write_text(
        "def score(texts):\n    return [0.9 if 'gay' in t.lower() else 0.1 for t in texts]\n"
    )
    cli("audit", "--demo", "--methods", "swap", "--out", str(work / "a"))
    cli("audit", "--demo", "--methods", "swap", "--classifier", f"callable:{work / 'keyword.py'}:score",
        "--out", str(work / "b"))  # fmt: skip
    cli("compare", str(work / "a"), str(work / "b"), "--out", str(out["compare"]), quiet=False)  # compare has no -q
    return out


def notebook_html(work: Path) -> Path:
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    notebook = nbformat.read(ROOT / "docs" / "tutorials" / "notebook.ipynb", as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3").execute()
    body, _ = HTMLExporter().from_notebook_node(notebook)
    target = work / "notebook.html"
    target.write_text(body, encoding="utf-8")
    return target


def screenshot(page: Path, png: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("Chromium is needed for the screenshots (make test installs it)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
             "--disable-background-networking", "--disable-component-update", f"--user-data-dir={profile}",
             "--window-size=1400,900", f"--screenshot={png}", page.as_uri()],
            capture_output=True, check=True, timeout=120,
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="keep the runs here (default: a temporary folder)")
    args = parser.parse_args()
    GALLERY.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        for name, directory in runs(work).items():
            screenshot(directory / "report.html", GALLERY / f"{name}.png")
            print(f"wrote {GALLERY / f'{name}.png'}")
        screenshot(notebook_html(work), GALLERY / "notebook.png")
        print(f"wrote {GALLERY / 'notebook.png'}")


if __name__ == "__main__":
    main()
