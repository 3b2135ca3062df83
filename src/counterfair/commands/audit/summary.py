"""The audit's ``summary.json`` as the core builds it from what it tallied: an
:class:`~counterfair.summaries.AuditSummary` of per-method :class:`~counterfair.summaries.GroupChange` entries, the
swaps' CTF gaps (:class:`~counterfair.summaries.GapReport`), coverage (which inputs a method reached, and why not), the
originals' scores and the command that reproduces the run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, fields, replace
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ... import __version__
from ...classifiers import CachedClassifier
from ...editors.registry import (
    resolve_detector,
)
from ...language_registry import get_language
from ...summaries import (
    AuditInput,
    AuditSummary,
    ClassifierInfo,
    Coverage,
    GapReport,
    GroupChange,
    MeanEstimate,
    Originals,
)
from ..generate.options import is_sampled, uses_sampled_method
from .options import AuditOptions, attribute_matcher, identity_set_of, swap_methods_of, uses_llm
from .tallies import MethodTally


class Tallied(Protocol):
    """What the summary reads of the audit's tallies (:class:`~counterfair.commands.audit.core.AuditTallies`)."""

    methods: dict[tuple[str, str], MethodTally]
    ctf: dict[str, Any]
    unscored: int

    def swap_ctf(self, attribute: str) -> GapReport: ...

    def top_examples(self) -> list[dict[Any, Any]]: ...


def joined_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)] or frames[:1]  # an empty block (no slots without a placebo) adds nothing
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _mean_ci(values: np.ndarray, tally: MethodTally, opts: AuditOptions) -> MeanEstimate:
    """The mean change over pairs with its interval over texts (a text's pairs are not independent draws), its keys
    ``n``, ``mean``, ``ci_low``, ``ci_high``."""
    if values.size == 0:
        return MeanEstimate.from_dict({"n": 0, "mean": None, "ci_low": None, "ci_high": None})
    low, high = tally.change_interval(n_resamples=opts.bootstrap, seed=opts.seed)
    return MeanEstimate.from_dict({"n": int(values.size), "mean": float(values.mean()), "ci_low": low, "ci_high": high})


def audit_summary(
    opts: AuditOptions,
    the_plan: AuditInput,
    generated: dict[str, Any],
    made: Tallied,
    orig_scores: dict[str, float],
    clf: CachedClassifier,
    index: int,
    origin: str,
) -> AuditSummary:
    """The summary as far as the tallies go; the audit core adds the sections after ``reproduce``."""
    groups = [
        _group_entry(name, str(method), result, made.methods.get((str(method), name), MethodTally()), opts)
        for name, result in generated.items()
        for method in result.counterfactuals["method"].unique()
    ]
    ctf_by_attribute = {name: made.swap_ctf(name) for name in sorted(made.ctf)}
    return AuditSummary(
        counterfair_version=__version__,
        command="audit",
        input=replace(the_plan, source=origin),
        classifier=ClassifierInfo.from_dict(clf.summary_info()),
        positive_label=clf.labels[index],
        threshold=opts.threshold,
        originals=_originals(orig_scores, opts.threshold),
        pairs_without_score=made.unscored,
        groups=tuple(groups),
        ctf=ctf_by_attribute.get("identity"),
        ctf_by_attribute=ctf_by_attribute,
        top_examples=tuple(made.top_examples()),
        signatures={name: r.typed_summary.signatures for name, r in generated.items()},
        options={**asdict(opts), "classifier": clf.spec},
        reproduce=_reproduce_command(opts, origin, clf),
    )


EXAMPLE_COLUMNS = [
    "method",
    "attribute",
    "input_id",
    "source_text",
    "cf_text",
    "edits",
    "score_orig",
    "score_cf",
    "diff",
    "source_term",
    "target_term",
]


def _group_entry(name: str, method: str, result: Any, tally: MethodTally, opts: AuditOptions) -> GroupChange:
    """One method on one attribute: inputs and statuses, the filter pass rate, the score change with its CI, flips."""
    cfs = result.counterfactuals
    mine = cfs[cfs["method"] == method]
    cands = None
    if is_sampled(method) and not result.candidates.empty:  # an identity swap's candidates are not read again
        cands = result.candidates[result.candidates["method"] == method]
    diff, scored = tally.changes(), tally.scored
    return GroupChange(
        method=method,
        attribute=name,
        inputs=len(mine),
        with_counterfactual=int((mine["status"] == "ok").sum()),
        status={str(k): int(v) for k, v in mine["status"].value_counts().items()},
        pairs=scored,
        pairs_without_score=tally.pairs - scored,
        filter_pass_rate=(
            float(cands["passed"].mean()) if cands is not None and len(cands) and is_sampled(method) else None
        ),
        score_change=_mean_ci(diff, tally, opts),
        # in place: the changes are not read again (a copy would be 76 MB at 9.5 million pairs; the same sum)
        mean_abs_change=float(np.abs(diff, out=diff).mean()) if diff.size else None,
        flips=tally.flips,
        flip_rate=tally.flips / scored if scored else None,
        mean_score_orig=float(pd.Series(tally.originals(), copy=False).mean()) if scored else None,
    )


#: why a text got no counterfactual pair, as the coverage counts it
CAUSES = {
    "gender_words": "name gender words no slot measured (both genders, or --attributes without gender)",
    "first_names": "name a first name the names pack lacks",
    "identity_words": "name identity words no pack has",
    "guard": "name identity terms the guard judged not about people (a black car, an old house)",
}


def coverage_of(
    frame: pd.DataFrame, reached: set[str], attributes: Mapping[str, int] | None, opts: AuditOptions, shown: int = 50
) -> Coverage:
    """How many texts got at least one counterfactual pair; of those that got none, how many for each cause
    (:data:`CAUSES`) and how many mention each group no built-in set covers
    (:data:`~counterfair.lexicons.attributes.UNCOVERED_GROUPS`); how many texts name gender words ("women", "he") or a
    first name of the names pack that the run did not measure (the pack was not among its attributes)."""
    from ...editors.swap import written_forms
    from ...lexicons.attributes import UNCOVERED_GROUPS, first_names
    from ...text import TermMatcher

    unreached = [(str(i), t) for i, t in zip(frame["id"], frame["text"], strict=True) if str(i) not in reached]
    texts = [t for _, t in unreached if isinstance(t, str)]
    mentions = {group: _count(TermMatcher(words), texts) for group, words in UNCOVERED_GROUPS.items()}
    entry = get_language(opts.language)
    names = "names" in entry.packs  # the language's audit measures first names (English)
    pack_names = _pack_names(opts) if names else set()
    lacking = TermMatcher([n for n in first_names() if n not in pack_names], case_sensitive=True) if names else None
    causes = {
        "gender_words": _count(attribute_matcher(entry.gender_pack), texts) if entry.gender_pack else 0,
        "first_names": _count(lacking, texts) if lacking is not None else 0,
        "identity_words": sum(1 for t in texts if any(TermMatcher(w).contains(t) for w in UNCOVERED_GROUPS.values())),
        "guard": _count(TermMatcher(written_forms(identity_set_of(opts))), texts) if swap_methods_of(opts) else 0,
    }
    tested = attributes or {}
    every = [t for t in frame["text"] if isinstance(t, str)]
    gender = entry.gender_pack
    gender_untested = _count(attribute_matcher(gender), every) if gender and gender not in tested else 0
    names_untested = _count(attribute_matcher("names"), every) if names and "names" not in tested else 0
    # over every text, reached or not: a text that names Mohammed beside Emily is measured for Emily only
    unplaced, seen = _named(lacking, every) if lacking is not None else (0, ())
    said = [f"{n} {CAUSES[c]}" for c, n in causes.items() if n]
    named = [g for g, n in mentions.items() if n]
    hint = None
    if said:
        hint = f"of the {len(unreached)} unreached texts, " + "; ".join(said)
        if named:
            hint += f" ({', '.join(named)}): an identity set of your own (--identities FILE) reaches them"
    return Coverage(
        texts=len(frame),
        reached=len(frame) - len(unreached),
        unreached=len(unreached),
        unreached_ids=tuple(i for i, _ in unreached[:shown]),
        unreached_mentioning=mentions,
        unreached_by_cause=causes,
        gender_untested=gender_untested,
        names_untested=names_untested,
        names_unplaced=unplaced,
        names_unplaced_seen=seen,
        hint=hint,
    )


def _pack_names(opts: AuditOptions) -> set[str]:
    """The first names of the built-in names pack and of every names pack of the user's the run measures (an identity
    pack whose groups swap within gender partitions: ``--attributes my_names.yaml``)."""
    from ...lexicons.attributes import IdentitySet, is_swap_attribute, load_swap_set

    found = set(load_swap_set("names").terms)
    for name in opts.attributes or ():
        pack = load_swap_set(name) if is_swap_attribute(name) else None
        if isinstance(pack, IdentitySet) and pack.within:
            found |= set(pack.terms)
    return found


def _count(matcher: Any, texts: list[str]) -> int:
    return sum(1 for text in texts if matcher.contains(text))


def _named(matcher: Any, texts: list[str], shown: int = 8) -> tuple[int, tuple[str, ...]]:
    """How many texts name a term of ``matcher``, and the terms named in the most texts (at most ``shown``, the most
    first; ties alphabetical)."""
    from collections import Counter

    by_term: Counter[str] = Counter()
    count = 0
    for text in texts:
        found = {m.term for m in matcher.find(text)} if matcher.contains(text) else set()
        count += bool(found)
        by_term.update(found)
    return count, tuple(t for t, _ in sorted(by_term.items(), key=lambda kv: (-kv[1], kv[0]))[:shown])


def _originals(orig_scores: dict[str, float], threshold: float) -> Originals:
    values = np.array(list(orig_scores.values()), dtype=float)
    finite = values[np.isfinite(values)]
    return Originals(
        n=int(values.size),
        without_score=int(values.size - finite.size),
        mean_score=float(finite.mean()) if finite.size else None,
        share_above_threshold=float((finite >= threshold).mean()) if finite.size else None,
        labels_only=bool(finite.size >= 2 and np.isin(finite, (0.0, 1.0)).all()),
    )


def _demo_of(language: str) -> str | None:
    entry = get_language(language)
    return str(entry.path(entry.demo)) if entry.demo else None


def _reproduce_command(opts: AuditOptions, origin: str, clf: CachedClassifier) -> str:
    if not clf.cli_spec:
        return (
            f"the classifier was a Python object ({clf.spec}); rerun counterfair.audit() with it and these options "
            "(no command line can rebuild it)"
        )
    parts = [
        "counterfair audit",
        "--demo" if origin == _demo_of(opts.language) else origin,
        f"--classifier {clf.spec}",
        f"--methods {','.join(opts.methods)}",
        f"--threshold {opts.threshold}",
        f"--seed {opts.seed}",
    ]
    if opts.attributes:
        parts.append(f"--attributes {','.join(opts.attributes)}")
    if opts.id_column:
        parts.append(f"--id-column {opts.id_column}")
    if opts.text_column != "text":
        parts.append(f"--text-column {opts.text_column}")
    if uses_llm(opts):
        parts.append(f"--llm {opts.llm}")
    return " ".join(parts + _other_options(opts)) + " --out DIR"


_SHOWN = {"classifier", "methods", "threshold", "seed", "attributes", "id_column", "text_column", "llm"}
_LLM_OPTIONS = ("samples", "detector", "llm_parallel", "llm_concurrency")  # named with the llm only
_NOT_ON_THE_CLI = {"max_attempts", "bootstrap", "top_examples"}


def _other_options(opts: AuditOptions) -> list[str]:
    """The command-line flags of every other option that differs from its default (the language's own identity set
    and placebo words are what ``--language`` gives, so they are not repeated)."""
    import shlex

    from ...language_registry import get_language

    implied = {
        "language": "en",  # as --language auto reads English texts; another language is repeated
        "identities": get_language(opts.language).identity_set,
        "placebo": opts.language,
        "detector": resolve_detector("auto", opts.methods),
    }
    out = []
    for f in fields(AuditOptions):
        value = getattr(opts, f.name)
        if f.name in _SHOWN | _NOT_ON_THE_CLI or value == _default_of(f) or value == implied.get(f.name, _UNSET):
            continue
        if (f.name in _LLM_OPTIONS and not uses_llm(opts)) or (
            f.name == "retry_nearness" and not uses_sampled_method(opts)
        ):
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            out.append(flag if value else f"--no-{f.name.replace('_', '-')}")
        else:
            out.append(f"{flag} {shlex.quote('none' if value is None else str(value))}")
    return out


_UNSET = object()


def _default_of(f: Any) -> Any:
    return f.default_factory() if f.default_factory is not MISSING else f.default
