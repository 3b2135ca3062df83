"""Unintended bias on labelled data (``counterfair bias``, :func:`bias`): per identity group, the subgroup, BPSN and
BNSP AUC (Borkan et al. 2019) and the pinned AUC (Dixon et al. 2018) with bootstrap intervals and their counts; the
generalized mean of each over groups (p = −5) and the Jigsaw final metric, with intervals from a joint bootstrap of
all rows, and the false positive / false negative equality differences at the threshold.

* **subgroup AUC**: the AUC on the texts that mention the group — low: the classifier separates toxic from
  non-toxic texts about the group poorly.
* **BPSN AUC** (background positive, subgroup negative): the group's non-toxic texts against the other toxic ones —
  low: non-toxic texts that mention the group score as high as toxic ones (false positives for the group).
* **BNSP AUC** (background negative, subgroup positive): the group's toxic texts against the other non-toxic ones —
  low: the group's toxic texts score low (false negatives for the group).

Group membership comes from columns (``group_columns``: booleans, or scores cut at 0.5 as in Jigsaw's data) or from
the identity terms counterfair matches (``identities``, with the swap's guard), one group per identity group. A group
whose texts lack positives or negatives gets ``None`` for the AUCs that need them, with the reason in ``notes``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ... import __version__, vocabulary
from ...classifiers import CachedClassifier
from ...errors import ConfigError, InputError
from ...io import read_texts
from ...labels import binary_labels, positive_index
from ...metrics import fairness as FM
from ...progress import NullProgress, ProgressHook
from ...records import knob, option, options_signature
from ...summaries import BiasSummary, ClassifierInfo, Estimate, GroupBias
from .result import BiasResult

MetricName = Literal["subgroup_auc", "bpsn_auc", "bnsp_auc"]
METRICS: tuple[MetricName, ...] = ("subgroup_auc", "bpsn_auc", "bnsp_auc")


def check_threshold_and_bootstrap(threshold: float, bootstrap: int) -> None:
    """The labelled-data commands' shared checks: a threshold inside (0, 1), a bootstrap of 0 or more resamples."""
    if not 0.0 < threshold < 1.0:
        raise ConfigError(f"threshold must be in (0, 1), got {threshold}")
    if bootstrap < 0:
        raise ConfigError(f"bootstrap must be 0 (no intervals) or positive, got {bootstrap}")
    check_bootstrap_cap(bootstrap)


MAX_BOOTSTRAP = 100_000


def check_bootstrap_cap(bootstrap: int) -> None:
    """Refuse a resample count no interval needs (``--bootstrap 1000000000`` would run for days in silence)."""
    if bootstrap > MAX_BOOTSTRAP:
        raise ConfigError(
            f"bootstrap {bootstrap:,} is more resamples than any interval needs: at most {MAX_BOOTSTRAP:,} (the "
            "default 1,000 serves a report; 10,000 is the usual choice for publication)"
        )


@dataclass
class BiasOptions:
    classifier: str = knob("profanity-check")  # the classifier's own identity joins the run's (claim_run_dir)
    engine: str = knob("local", help=vocabulary.ENGINE)
    address: str | None = knob(None, help=vocabulary.ADDRESS)  # a Ray cluster (None: start a local Ray)
    batch_size: int = knob(64, help=vocabulary.CLASSIFIER_BATCH)  # how fast, not what: a rerun with another resumes
    label_column: str = option("label", help="Column with the gold label: 1/0, true/false, toxic/non-toxic.")
    text_column: str = option("text", help="Column with the texts.")
    id_column: str | None = option(None, help="Column with unique ids (default: row number).")
    group_columns: list[str] | None = option(
        None, help="Comma-separated membership columns (booleans, or scores cut at --group-threshold)."
    )
    identities: str | None = option(
        None, help="Without group columns: the identity set whose terms mark membership (default dixon50)."
    )
    guard: bool = option(True, help="Skip non-identity uses of ambiguous terms ('a black car').")
    positive_label: str | None = option(
        None, help="Classifier label whose probability is the score (default: the second)."
    )
    threshold: float = option(0.5, help="Score threshold of the equality differences (FPR, FNR).")
    group_threshold: float = option(0.5, help="A membership score at or above it is a member.")
    bootstrap: int = option(1000, help="Bootstrap resamples of every interval (0: none).")
    seed: int = option(0, help="Seed of the bootstrap and of the pinned AUC's sample.")
    encoding: str = option("utf-8", help=vocabulary.ENCODING)
    # en | fr | de: the default identity set (identity-fr, identity-de: every inflected form is a mention)
    language: str = field(default="en", metadata={"later": True, "help": vocabulary.LANGUAGE})

    def __post_init__(self) -> None:
        from ...language_registry import get_language

        check_threshold_and_bootstrap(self.threshold, self.bootstrap)
        if not 0.0 <= self.group_threshold <= 1.0:  # NaN fails too: nobody would be a member
            raise ConfigError(f"--group-threshold must be a number in [0, 1], got {self.group_threshold}")
        if self.group_columns is not None and self.identities is not None:
            raise ConfigError("give group_columns or identities, not both")
        entry = get_language(self.language)
        self.language = entry.code
        if not entry.default and self.group_columns is None:
            self.identities = self.identities or entry.identity_set


MEMBERSHIP_BLOCK = 2000  # texts per progress step while finding identity terms


def memberships(
    frame: pd.DataFrame, texts: list[str], opts: BiasOptions, origin: str, hook: ProgressHook | None = None
) -> dict[str, np.ndarray]:
    """Group -> which rows mention it: from the group columns, else from the identity terms matched in the texts
    (``hook``: progress over the texts, which the guard may parse)."""
    if opts.group_columns:
        out = {}
        for column in opts.group_columns:
            if column not in frame.columns:
                raise InputError(
                    f"{origin}: no group column {column!r} (set with --group-columns, or group_columns= in Python)"
                )
            values = pd.to_numeric(frame[column].replace({"True": 1, "False": 0, True: 1, False: 0}), errors="coerce")
            if values.isna().any():
                row = int(np.flatnonzero(values.isna().to_numpy())[0])
                raise InputError(f"{origin}: row {row} of group column {column!r} is not a number or a boolean")
            out[column] = values.to_numpy(dtype=float) >= opts.group_threshold
        return out
    from ...editors.registry import identity_editor
    from ...lexicons.attributes import load_identity_set

    found = load_identity_set(opts.identities, min_terms=1)  # bias swaps nothing: one term is one group
    editor: Any = identity_editor(found, guard="spacy" if opts.guard else None)
    hook = hook or NullProgress()
    hook.start("finding identity terms" + (" (the guard parses ambiguous ones)" if opts.guard else ""), len(texts))
    mentioned: list[set[str]] = []
    for start in range(0, len(texts), MEMBERSHIP_BLOCK):
        block = texts[start : start + MEMBERSHIP_BLOCK]
        mentioned += [{editor.identities.group_of(m.term) for m in found} for found in editor.identity_matches(block)]
        hook.advance(len(block))
    groups = sorted({editor.identities.group_of(t) for t in editor.identities.terms})  # every group, with texts or not
    return {g: np.array([g in text_groups for text_groups in mentioned], dtype=bool) for g in groups}


def _interval(values: Sequence[float | None], value: float | None, n: int) -> Estimate:
    """``value`` with the percentile interval of its bootstrap draws."""
    finite = np.array([v for v in values if v is not None], dtype=float)
    if value is None or finite.size < 2:
        return Estimate(value=value, n=n)
    low, high = np.percentile(finite, [2.5, 97.5])
    return Estimate(value=value, ci_low=float(low), ci_high=float(high), n=n)


def _auc_estimate(
    y: np.ndarray, s: np.ndarray, rows: np.ndarray, opts: BiasOptions, rng: np.random.Generator
) -> Estimate:
    """The AUC on ``rows`` and its percentile bootstrap interval (rows resampled with replacement)."""
    ys, ss = y[rows], s[rows]
    value = FM.auc(ys, ss)
    draws = []
    if value is not None and min(int(ys.sum()), int((~ys).sum())) >= 2:
        for _ in range(opts.bootstrap):
            pick = rng.integers(0, rows.size, rows.size)
            draws.append(FM.auc(ys[pick], ss[pick]))
    return _interval([d for d in draws if d is not None], value, int(rows.size))


def _group_entry(
    y: np.ndarray, s: np.ndarray, member: np.ndarray, opts: BiasOptions, rng: np.random.Generator
) -> GroupBias:
    """One group's counts and AUCs with their intervals, and why a value is undefined."""
    subsets = FM.bias_subsets(y, member)
    n, n_positive, n_negative = int(member.sum()), int((member & y).sum()), int((member & ~y).sum())
    # drawn in this order from one stream: the three AUCs of METRICS, then the pinned AUC
    subgroup, bpsn, bnsp = (_auc_estimate(y, s, np.flatnonzero(subsets[m]), opts, rng) for m in METRICS)
    pinned = _auc_estimate(y, s, FM.pinned_rows(member, rng), opts, rng)
    notes = []
    if n == 0:
        notes.append("no text mentions the group")
    elif n_positive == 0:
        notes.append("no positive (toxic) text mentions the group: subgroup and BNSP AUC undefined")
    if n and n_negative == 0:
        notes.append("no negative (non-toxic) text mentions the group: subgroup and BPSN AUC undefined")
    return GroupBias(
        n=n,
        n_positive=n_positive,
        n_negative=n_negative,
        subgroup_auc=subgroup,
        bpsn_auc=bpsn,
        bnsp_auc=bnsp,
        pinned_auc=pinned,
        notes=tuple(notes),
    )


def _equality(
    y: np.ndarray, pred: np.ndarray, members: dict[str, np.ndarray], opts: BiasOptions, rng: np.random.Generator
) -> tuple[Estimate, Estimate]:
    fped, fned = FM.equality_differences(y, pred, members)
    draws: list[tuple[float | None, float | None]] = []
    for _ in range(opts.bootstrap if members else 0):
        pick = rng.integers(0, y.size, y.size)
        draws.append(FM.equality_differences(y[pick], pred[pick], {g: m[pick] for g, m in members.items()}))
    return (
        _interval([d[0] for d in draws if d[0] is not None], fped, int(y.size)),
        _interval([d[1] for d in draws if d[1] is not None], fned, int(y.size)),
    )


def _summary_draws(
    y: np.ndarray, s: np.ndarray, members: dict[str, np.ndarray], opts: BiasOptions, rng: np.random.Generator
) -> dict[str, list[float | None]]:
    """Bootstrap draws of the generalized means and the final metric: each draw resamples every row once and
    recomputes every group's three AUCs, their power means and the overall AUC."""
    out: dict[str, list[float | None]] = {m: [] for m in (*METRICS, "final_metric")}
    for _ in range(opts.bootstrap if members else 0):
        pick = rng.integers(0, y.size, y.size)
        yy, ss = y[pick], s[pick]
        per: dict[str, list[float | None]] = {m: [] for m in METRICS}
        for member in members.values():
            for metric, rows in FM.bias_subsets(yy, member[pick]).items():
                per[metric].append(FM.auc(yy[rows], ss[rows]))
        means = [FM.power_mean(per[m]) for m in METRICS]
        for metric, value in zip(METRICS, means, strict=True):
            out[metric].append(value)
        out["final_metric"].append(FM.final_metric(FM.auc(yy, ss), means))
    return out


def bias_core(
    labels: np.ndarray,
    scores: np.ndarray,
    members: dict[str, np.ndarray],
    opts: BiasOptions,
    hook: ProgressHook | None = None,
) -> BiasSummary:
    """The metrics alone (summary.json's ``overall_auc``, ``generalized_mean``, ``final_metric``, ``fped``, ``fned``,
    ``groups``) from gold labels, the classifier's scores and group memberships (``hook``: progress, one step for
    the overall AUC, each group, the joint bootstrap and the equality differences)."""
    hook = hook or NullProgress()
    hook.start(f"metrics and intervals ({opts.bootstrap:,} resamples each)", len(members) + 3)
    y, s = np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float)
    rng = np.random.default_rng(opts.seed)
    overall = _auc_estimate(y, s, np.arange(y.size), opts, rng)
    hook.advance(1)
    # each group draws from its own stream (seed, group name): adding a group leaves the others' intervals as they were
    groups: dict[str, GroupBias] = {}
    for g, m in members.items():
        groups[g] = _group_entry(y, s, m, opts, np.random.default_rng([opts.seed, zlib.crc32(g.encode())]))
        hook.advance(1)
    means = {metric: FM.power_mean([getattr(e, metric).value for e in groups.values()]) for metric in METRICS}
    final = FM.final_metric(overall.value, list(means.values()))
    # the summary figures rest on every group at once: one joint bootstrap of all rows, on a stream of its own
    draws = _summary_draws(y, s, members, opts, np.random.default_rng([opts.seed, zlib.crc32(b"summary")]))
    hook.advance(1)
    fped, fned = _equality(y, s >= opts.threshold, members, opts, rng)
    hook.advance(1)
    return BiasSummary(
        overall_auc=overall,
        final_metric=_interval(draws["final_metric"], final, int(y.size)),
        generalized_mean={m: _interval(draws[m], means[m], int(y.size)) for m in METRICS},
        generalized_mean_power=FM.POWER,
        fped=fped,
        fned=fned,
        groups=groups,
        groups_without_values=tuple(sorted(g for g, e in groups.items() if e.notes)),
    )


def score_texts(clf: CachedClassifier, texts: list[str], opts: BiasOptions, hook: ProgressHook) -> np.ndarray:
    index = positive_index(clf.labels, opts.positive_label)
    hook.start(f"classifier ({clf.spec})", len(set(texts)))  # distinct texts: what the classifier scores
    proba = clf.predict_proba(texts, on_batch=hook.advance)
    return np.asarray(proba, dtype=float)[:, index]


def bias_summary(metrics: BiasSummary, opts: BiasOptions, clf: CachedClassifier, origin: str, n: int) -> BiasSummary:
    """The command's summary: the run's facts around :func:`bias_core`'s metrics."""
    from dataclasses import asdict, replace

    return replace(
        metrics,
        counterfair_version=__version__,
        command="bias",
        input={"source": origin, "texts": n},
        classifier=ClassifierInfo.from_dict(clf.summary_info()),
        positive_label=clf.labels[positive_index(clf.labels, opts.positive_label)],
        threshold=opts.threshold,
        membership="columns" if opts.group_columns else f"identity terms ({opts.identities or 'dixon50'})",
        options=asdict(opts),
    )


def bias_rows(ids: list[str], labels: np.ndarray, scores: np.ndarray, members: dict[str, np.ndarray]) -> pd.DataFrame:
    table = pd.DataFrame({"input_id": ids, "label": labels.astype(int), "score": scores})
    for group, member in members.items():
        table[f"group:{group}"] = member.astype(int)
    return table


def read_labelled(source: Any, opts: BiasOptions, labels: Any = None) -> tuple[Any, np.ndarray]:
    """The input read once (texts, ids, table) and the gold labels as 0/1."""
    columns = {} if labels is not None else {opts.label_column: "--label-column"}
    read = read_texts(source, text_column=opts.text_column, id_column=opts.id_column, columns=columns,
                      encoding=opts.encoding)  # fmt: skip
    if labels is not None:
        gold = binary_labels(pd.DataFrame({"label": list(labels)}), "label", "labels")
    else:
        gold = binary_labels(read.frame, opts.label_column, read.origin)
    if len(gold) != len(read.texts):
        raise InputError(f"labels: {len(gold)} labels for {len(read.texts)} texts")
    return read, np.asarray(gold, dtype=float)


@options_signature(BiasOptions, skip=("classifier",))
def bias(
    texts: Any,
    labels: Any = None,
    classifier: Any = "profanity-check",
    *,
    progress: ProgressHook | bool | None = None,
    **options: Any,
) -> BiasResult:
    """The unintended-bias metrics in memory: ``texts`` (a list, or a table with ``label_column`` when ``labels`` is
    None), gold ``labels`` (0/1, true/false, toxic/non-toxic), ``classifier`` (anything ``as_classifier`` takes);
    ``options``: :class:`BiasOptions`'s fields (``group_columns``, ``identities``, ``threshold``, ``bootstrap``,
    ...)."""
    from ...classifiers import as_classifier
    from ...needs import require_in_memory
    from ...records import make_options

    require_in_memory(BiasOptions, options, classifier=classifier)  # a missing extra is named before any work
    clf = as_classifier(classifier)
    opts = make_options(BiasOptions, {"classifier": clf.spec, **options})
    from ...classifiers.remote import on_engine

    on_engine(clf, opts.engine, opts.address)
    read, gold = read_labelled(texts, opts, labels)
    texts_ = read.every_text("bias")
    from ...progress import resolve_progress

    hook = resolve_progress(progress)
    members = memberships(read.frame, texts_, opts, read.origin, hook)
    scores = score_texts(clf, texts_, opts, hook)
    summary = bias_summary(bias_core(gold, scores, members, opts, hook), opts, clf, read.origin, len(texts_))
    return BiasResult(bias_rows(read.ids, gold, scores, members), summary)
