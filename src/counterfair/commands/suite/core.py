"""Functional test suites (``counterfair suite run``, :func:`suite`): cases with a gold label, the behaviour they check
(a *functionality*) and the group they target, in HateCheck's layout (Röttger et al. 2021: ``test_case``,
``label_gold``, ``functionality``, ``target_ident``; every column name can be changed). The classifier's score at the
threshold gives each case a prediction; the suite reports the accuracy overall, per functionality, per target and per
(functionality, target) cell with Wilson intervals, the worst first, and the bias AUCs of
:mod:`counterfair.commands.bias.core` with the targets as groups.

Without a file, the suite is counterfair's own template suite (``resources/suites/templates.yaml``), expanded over an
identity set's terms: :func:`template_suite`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from functools import cache
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ... import __version__, vocabulary
from ...classifiers import CachedClassifier
from ...errors import ConfigError, InputError
from ...io import read_texts, row_ids
from ...labels import binary_labels, positive_index
from ...metrics import fairness as FM
from ...progress import ProgressHook
from ...records import knob, option
from ...summaries import ClassifierInfo, Estimate, SuiteCell, SuiteSummary
from ...text import indefinite_article
from ..bias.core import BiasOptions, bias_core, check_threshold_and_bootstrap
from .result import SuiteResult

BUILTIN = "counterfair-templates"  # the name the built-in suite is recorded under
CASE_ID = "case_id"  # HateCheck's id column: a suite's case ids when no --id-column is given
FEW = 10  # a cell with fewer cases is marked as resting on few cases


@dataclass
class SuiteOptions:
    classifier: str = knob("profanity-check")  # the classifier's own identity joins the run's (claim_run_dir)
    engine: str = knob("local", help=vocabulary.ENGINE)
    address: str | None = knob(None, help=vocabulary.ADDRESS)  # a Ray cluster (None: start a local Ray)
    batch_size: int = knob(64, help=vocabulary.CLASSIFIER_BATCH)  # how fast, not what: a rerun with another resumes
    text_column: str = option("test_case", help="Column with the test case's text.")
    label_column: str = option(
        "label_gold", help="Column with the gold label: hateful/non-hateful, 1/0, toxic/non-toxic."
    )
    functionality_column: str = option("functionality", help="Column with the case's functionality.")
    target_column: str | None = option(
        "target_ident", help="Column with the targeted group ('' for none: no per-target rows, no bias AUCs)."
    )
    id_column: str | None = option(None, help="Column with unique ids (default: row number).")
    identities: str | None = option(
        None, help="The built-in suite's identity set (default dixon50; ignored with CASES)."
    )
    positive_label: str | None = option(
        None, help="Classifier label whose probability is the score (default: the second)."
    )
    threshold: float = option(0.5, help="A score at or above it predicts hateful.")
    bootstrap: int = option(1000, help="Bootstrap resamples of the bias AUCs' intervals (0: none).")
    seed: int = option(0, help="Seed of the bootstrap.")
    encoding: str = option("utf-8", help=vocabulary.ENCODING)

    def __post_init__(self) -> None:
        check_threshold_and_bootstrap(self.threshold, self.bootstrap)


# ------------------------------------------------------------------------------------------------ the template suite


class Functionality(TypedDict):
    """One behaviour of the template suite: its gold label and its templates."""

    label: str
    templates: list[str]


class SuiteTemplates(TypedDict):
    """``resources/suites/templates.yaml``: the word lists and the functionalities."""

    words: dict[str, list[str]]
    functionalities: dict[str, Functionality]


@cache
def _templates() -> SuiteTemplates:
    """The suite's templates, checked for the shape the expansion reads (a ConfigError naming the key)."""
    from ...lexicons.attributes import resource_mapping

    spec = resource_mapping("suites", "templates")
    words, functionalities = spec.get("words"), spec.get("functionalities")
    if not isinstance(words, dict) or not all(isinstance(v, list) for v in words.values()):
        raise ConfigError("suites/templates.yaml: 'words' must map each list's name to its words")
    if not isinstance(functionalities, dict):
        raise ConfigError("suites/templates.yaml: 'functionalities' must map each name to its label and templates")
    for name, entry in functionalities.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("label"), str):
            raise ConfigError(f"suites/templates.yaml: functionality {name!r} needs a label")
        if not isinstance(entry.get("templates"), list):
            raise ConfigError(f"suites/templates.yaml: functionality {name!r} needs a list of templates")
    return {
        "words": {str(k): [str(w) for w in v] for k, v in words.items()},
        "functionalities": {
            str(k): {"label": v["label"], "templates": [str(t) for t in v["templates"]]}
            for k, v in functionalities.items()
        },
    }


def indefinite(phrase: str) -> str:
    """``phrase`` with "a" or "an": "an Asian", "a European", "a gay person", "an LGBT person"."""
    return f"{indefinite_article(phrase)} {phrase}"


_SLOT = re.compile(r"\{(\w+)\}")


def _fill(template: str, values: dict[str, str]) -> str:
    def slot(name: str) -> str:  # {a_X}: X with its indefinite article
        return indefinite(values[name[2:]]) if name.startswith("a_") else values[name]

    text = _SLOT.sub(lambda m: slot(m.group(1)), template)
    return text[:1].upper() + text[1:]


def template_suite(identities: str | None = None) -> pd.DataFrame:
    """counterfair's own functional suite, expanded over the terms of ``identities`` (default dixon50): one row per
    case with ``case_id``, ``test_case``, ``label_gold`` (hateful / non-hateful), ``functionality``,
    ``target_ident`` (the term's group), ``term`` and ``template``."""
    from ...lexicons.attributes import load_identity_set

    spec = _templates()
    ids = load_identity_set(identities)
    rows = []
    for functionality, entry in spec["functionalities"].items():
        for template in entry["templates"]:
            lists = [w for w in ("positive", "negative") if re.search(r"\{(a_)?" + w + r"\}", template)]
            words: list[tuple[str | None, str]] = [(w, word) for w in lists for word in spec["words"][w]] or [
                (None, "")
            ]
            for term in ids.terms:
                forms = ids.forms_of(term)
                values = {"adjective": forms.adjective, "plural": forms.plural, "noun": forms.noun}
                for slot, word in words:
                    text = _fill(template, values | ({slot: word} if slot else {}))
                    rows.append((text, entry["label"], functionality, ids.group_of(term), term, template))
    frame = pd.DataFrame(rows, columns=["test_case", "label_gold", "functionality", "target_ident", "term", "template"])
    frame.insert(0, "case_id", [f"t{i:05d}" for i in range(len(frame))])
    return frame


# ------------------------------------------------------------------------------------------------ the metrics


def _accuracy(correct: np.ndarray) -> Estimate:
    n, k = int(correct.size), int(correct.sum())
    low, high = FM.wilson(k, n)
    return Estimate(value=k / n if n else None, ci_low=low, ci_high=high, n=n)


def _cells(correct: np.ndarray, gold: np.ndarray, keys: pd.Series) -> dict[str, SuiteCell]:
    """Per key (a functionality, a target): its cases, how many are positive, the accuracy with Wilson's interval;
    the worst accuracy first (ties by name)."""
    out: dict[str, SuiteCell] = {}
    for key in sorted(keys.dropna().unique(), key=str):
        mask = (keys == key).to_numpy()
        out[str(key)] = SuiteCell(
            n=int(mask.sum()),
            n_positive=int(gold[mask].sum()),
            accuracy=_accuracy(correct[mask]),
            few=bool(mask.sum() < FEW),
        )
    return dict(sorted(out.items(), key=lambda kv: (kv[1].accuracy.value, kv[0])))


def suite_core(
    gold: np.ndarray, scores: np.ndarray, functionality: pd.Series, target: pd.Series | None, opts: SuiteOptions
) -> SuiteSummary:
    """The suite's metrics alone from the gold labels (0/1), the classifier's scores, each case's functionality and
    target (``None``/NaN: no target; targets, cells and bias are then None)."""
    y = np.asarray(gold, dtype=bool)
    correct = (np.asarray(scores, dtype=float) >= opts.threshold) == y
    out = SuiteSummary(accuracy=_accuracy(correct), functionalities=_cells(correct, y, functionality.astype(object)))
    if target is None or target.isna().all():
        return out
    target = target.astype(object).where(target.notna(), None)
    targets = _cells(correct, y, target)
    pair = functionality.astype(str) + " × " + target.astype(str)
    cells = _cells(correct, y, pair.where(target.notna(), None))
    members = {str(t): (target == t).to_numpy() for t in sorted(targets)}
    bias_opts = BiasOptions(threshold=opts.threshold, bootstrap=opts.bootstrap, seed=opts.seed)
    return replace(
        out,
        targets=targets,
        cells=tuple(replace(v, functionality=k.split(" × ")[0], target=k.split(" × ")[1]) for k, v in cells.items()),
        bias=bias_core(y.astype(float), np.asarray(scores, dtype=float), members, bias_opts),
    )


# ------------------------------------------------------------------------------------------------ reading, running


@dataclass(frozen=True)
class SuiteInput:
    """A suite as read: origin, case ids, texts, gold labels (0/1), functionalities and targets."""

    origin: str
    ids: list[str]
    texts: list[str]
    gold: np.ndarray
    functionality: pd.Series
    target: pd.Series | None
    id_column: str | None = None  # where the case ids come from (None: the row numbers)


def read_suite(source: Any, opts: SuiteOptions) -> SuiteInput:
    """The cases of ``source`` (a file, a DataFrame), or the built-in template suite when ``source`` is None."""
    if source is None:
        source, origin = template_suite(opts.identities), f"{BUILTIN} ({opts.identities or 'dixon50'})"
        opts = replace(opts, id_column="case_id", text_column="test_case", label_column="label_gold",
                       functionality_column="functionality")  # fmt: skip  # the built-in suite's own columns
    else:
        origin = None
    columns = {opts.label_column: "--label-column", opts.functionality_column: "--functionality-column"}
    if opts.target_column:
        columns[opts.target_column] = "--target-column"
    read = read_texts(source, text_column=opts.text_column, id_column=opts.id_column, columns=columns,
                      encoding=opts.encoding, origin=origin)  # fmt: skip
    id_column, ids = opts.id_column, read.ids
    if id_column is None and CASE_ID in read.frame.columns:  # HateCheck's own ids, picked up by themselves (a join
        id_column, ids = CASE_ID, row_ids(read.frame, CASE_ID, origin=read.origin)  # back on them went wrong)
    if not read.texts:
        raise InputError(f"{read.origin}: the suite has no cases")
    missing = [i for i, t in enumerate(read.texts) if not t]
    if missing:
        raise InputError(f"{read.origin}: row {missing[0]} has no text in column {opts.text_column!r}")
    functionality = read.frame[opts.functionality_column].reset_index(drop=True)
    if functionality.isna().any():
        row = int(np.flatnonzero(functionality.isna().to_numpy())[0])
        raise InputError(f"{read.origin}: row {row} has no functionality in column {opts.functionality_column!r}")
    target = read.frame[opts.target_column].reset_index(drop=True) if opts.target_column else None
    gold = binary_labels(read.frame, opts.label_column, read.origin)
    return SuiteInput(read.origin, ids, read.every_text("suite run"), gold, functionality, target, id_column)


def score_cases(clf: CachedClassifier, texts: list[str], opts: SuiteOptions, hook: ProgressHook) -> np.ndarray:
    index = positive_index(clf.labels, opts.positive_label)
    hook.start(f"classifier ({clf.spec})", len(set(texts)))  # distinct texts: what the classifier scores
    return np.asarray(clf.predict_proba(texts, on_batch=hook.advance), dtype=float)[:, index]


def suite_summary(metrics: SuiteSummary, opts: SuiteOptions, clf: CachedClassifier, cases: SuiteInput) -> SuiteSummary:
    """The command's summary: the run's facts around :func:`suite_core`'s metrics."""
    return replace(
        metrics,
        counterfair_version=__version__,
        command="suite",
        input={
            "source": cases.origin,
            "cases": len(cases.texts),
            "positive": int(cases.gold.sum()),
            "id_column": cases.id_column,
            "without_target": int(cases.target.isna().sum()) if cases.target is not None else None,
        },
        classifier=ClassifierInfo.from_dict(clf.summary_info()),
        positive_label=clf.labels[positive_index(clf.labels, opts.positive_label)],
        threshold=opts.threshold,
        options=asdict(opts),
    )


def suite_rows(cases: SuiteInput, scores: np.ndarray, opts: SuiteOptions) -> pd.DataFrame:
    predicted = scores >= opts.threshold
    table = pd.DataFrame(
        {
            "case_id": cases.ids,
            "test_case": cases.texts,
            "functionality": cases.functionality.to_numpy(),
            "target": cases.target.to_numpy() if cases.target is not None else None,
            "label": cases.gold.astype(int),
            "score": scores,
            "predicted": predicted.astype(int),
            "correct": (predicted == cases.gold.astype(bool)).astype(int),
        }
    )
    return table


def suite(
    cases: Any = None,
    classifier: Any = "profanity-check",
    *,
    text_column: str = "test_case",
    label_column: str = "label_gold",
    functionality_column: str = "functionality",
    target_column: str | None = "target_ident",
    identities: str | None = None,
    positive_label: str | None = None,
    threshold: float = 0.5,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: ProgressHook | bool | None = None,
) -> SuiteResult:
    """Run a functional test suite in memory and return a :class:`.SuiteResult`: ``cases`` (a
    file or a DataFrame in HateCheck's layout; None: counterfair's template suite over ``identities``),
    ``classifier`` (anything :func:`counterfair.as_classifier` takes). Accuracy per functionality, target and cell
    with Wilson intervals (worst first), and the bias AUCs with the targets as groups."""
    from ...classifiers import as_classifier
    from ...needs import require_in_memory

    require_in_memory(SuiteOptions, {}, classifier=classifier)  # a missing extra is named before any work
    clf = as_classifier(classifier)
    opts = SuiteOptions(
        classifier=clf.spec,
        text_column=text_column,
        label_column=label_column,
        functionality_column=functionality_column,
        target_column=target_column,
        identities=identities,
        positive_label=positive_label,
        threshold=threshold,
        bootstrap=bootstrap,
        seed=seed,
    )
    read = read_suite(cases, opts)
    from ...progress import resolve_progress

    scores = score_cases(clf, read.texts, opts, resolve_progress(progress))
    summary = suite_summary(suite_core(read.gold, scores, read.functionality, read.target, opts), opts, clf, read)
    return SuiteResult(suite_rows(read, scores, opts), summary)
