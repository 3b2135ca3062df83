"""Several methods' counterfactuals compared (``counterfair evaluate A B ...``): each method's evaluation (a run
directory each with ``out_dir``), CEval's Table 2, the distance matrix of Fig. 2, and the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ... import __version__
from ...errors import ConfigError
from ...io import read_table
from ...progress import ProgressHook
from ...runs import prepare_save_dir, record_files
from ..evaluate.options import EvaluateOptions
from ..evaluate.shell import evaluate_pairs
from .core import MethodComparison, align_originals, comparison_table, distance_matrix


def evaluate_methods(
    sources: dict[str, Any],
    options: EvaluateOptions | None = None,
    *,
    out_dir: str | Path | None = None,
    classifier: Any = None,
    progress: ProgressHook | None = None,
) -> MethodComparison:
    """Evaluate each method's pairs (a path or a table each) and compare them; with ``out_dir``, every method's run
    directory, ``comparison.csv``, ``distance_matrix.csv``, ``summary.json`` and ``report.html``."""
    if len(sources) < 2:
        raise ConfigError("comparing methods needs at least two pair files")
    opts = options or EvaluateOptions()
    # the folder is checked (new, empty or counterfair's) and made counterfair's before any method's run goes in
    target, foreign = prepare_save_dir(out_dir, what="evaluate-methods") if out_dir is not None else (None, set())
    frames = {name: read_table(src, fmt=opts.fmt, encoding=opts.encoding) for name, src in sources.items()}
    originals, misaligned = align_originals(frames, opts.text_column)
    if classifier is None and {"flip", "prob_change"} & set(opts.metrics or []):
        from ...classifiers import load_classifier

        classifier = load_classifier(
            opts.classifier_spec(), batch_size=opts.batch_size
        )  # shared: originals predicted once
    elif classifier is not None:
        from ...classifiers import as_classifier

        classifier = as_classifier(classifier)
    results = {
        name: evaluate_pairs(
            sources[name],
            opts,
            out_dir=target / "methods" / name if target is not None else None,
            classifier=classifier,
            progress=progress,
        )
        for name in frames
    }
    table = comparison_table(results)
    cfs = {name: frame[opts.cf_column] for name, frame in frames.items()}
    own = {name: frame[opts.text_column] for name, frame in frames.items()}
    matrix = distance_matrix(cfs, originals, opts, misaligned=misaligned, own_originals=own)
    typed = {name: result.typed_summary for name, result in results.items()}
    summary = {
        "counterfair_version": __version__,
        "command": "evaluate-methods",
        "methods": {
            name: str(src) if not isinstance(src, pd.DataFrame) else "DataFrame" for name, src in sources.items()
        },
        "originals": len(originals),
        "table": table.reset_index().to_dict(orient="records"),
        "distance_matrix": {"unit": "tokens (word-level Levenshtein)", "values": matrix.to_dict()},
        "misaligned_rows": misaligned,  # left out of the distances between that method and the others
        "errors": [{"method": n, **e.to_dict()} for n, r in typed.items() for e in r.errors],
        "options": next(iter(typed.values())).options,
        "signatures": {n: r.signatures for n, r in typed.items()},
    }
    comparison = MethodComparison(table, matrix, results, summary)
    if target is not None:
        comparison.save(target)
        from ..evaluate.page import build_evaluation_report

        build_evaluation_report(target)
        record_files(target, foreign)  # the methods' runs too, written before the comparison was saved
    return comparison
