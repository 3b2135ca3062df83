"""The audit's options (:class:`AuditOptions`) and what they decide before any work: the attributes a text
references, the identity set, the time estimate and the plan (:func:`plan`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ... import vocabulary
from ...editors.registry import (
    IDENTITY_SWAP,
    default_editors,
    editor_spec,
    resolve_detector,
    swaps_identities,
)
from ...errors import ConfigError, InputError
from ...io import read_texts, text_frame
from ...labels import binary_labels
from ...lexicons.attributes import IdentitySet, is_swap_attribute, known_attributes, load_attribute
from ...records import knob, option
from ...summaries import AuditInput
from ...text import MAX_TEXT_CHARS
from ..bias.core import check_bootstrap_cap
from ..generate.options import RETRY_NEARNESS, normalize_methods, uses_sampled_method

SECONDS_FIXED = 25.0  # loading spaCy, MiniLM and the classifier


def demo_path(language: str | None = None) -> Path:
    """The built-in demo texts of a language (its entry's ``demo``; ``auto``: English's): non-toxic,
    identity-referencing sentences written for counterfair."""
    from ...language_registry import get_language

    entry = get_language(language)
    if entry.demo is None:
        raise ConfigError(f"--demo: {entry.name} has no demo texts; give a DATA file")
    return entry.path(entry.demo)


@dataclass
class AuditOptions:
    classifier: str = knob("profanity-check")  # the classifier's own identity joins the run's (claim_run_dir)
    attributes: list[str] | None = option(
        None,
        help=(
            "Comma-separated attributes or packs (default: every paper-000 attribute the texts "
            "reference); gender, names and nationality add their swaps; `counterfair attributes list` "
            "shows them all."
        ),
    )
    methods: list[str] = field(default_factory=lambda: list(default_editors("audit")))
    text_column: str = option("text", help="Column with the texts.")
    id_column: str | None = option(None, help="Column with unique ids.")
    threshold: float = option(0.5, help="Score threshold for flips.")
    positive_label: str | None = option(None, help="Classifier label whose probability is the score.")
    # the classes' names, in the classifier's order (#83 item 1): an sklearn pipeline or a callable of classes 0/1 reads
    # "P(toxic)" instead of "P(1)" in every view
    labels: list[str] | None = field(
        default=None,
        metadata={
            "later": True,
            "help": "Comma-separated names of the classifier's classes, in its order (e.g. non-toxic,toxic): the "
            "score reads P(toxic) instead of P(1) everywhere.",
        },
    )
    identities: str | None = option(None, help="Identity terms for swaps (default: Dixon et al.'s 50).")
    guard: bool = option(True, help="Skip non-identity uses of ambiguous terms ('a black car').")
    llm: str = option("llamacpp:qwen2.5-coder-1.5b-instruct", help="LLM for the llm method.")
    samples: int = option(16, help="LLM samples per input and attempt.")
    max_attempts: int = option(5, help="LLM attempts per text when no sample passes the filters.")
    # an LLM rewrite is sampled again only while a candidate came this near to passing the filters (GenerateOptions)
    retry_nearness: float = field(
        default=RETRY_NEARNESS,
        metadata={"applies": uses_sampled_method, "before": 0.0, "help": vocabulary.RETRY_NEARNESS},
    )
    llm_parallel: int | None = knob(None, help=vocabulary.LLM_PARALLEL)
    llm_concurrency: int | None = knob(None, help=vocabulary.LLM_CONCURRENCY)
    engine: str = knob("local", help=vocabulary.ENGINE)
    address: str | None = knob(None, help=vocabulary.ADDRESS)  # a Ray cluster (None: start a local Ray)
    batch_size: int = knob(64, help=vocabulary.CLASSIFIER_BATCH)  # how fast, not what: a rerun with another resumes
    detector: str = option(
        "auto",
        help=(
            "Attribute detector of the llm method's filter: auto (keyword+llm, which also sees allusions "
            "such as 'during Eid'), keyword, keyword+llm, mlp:DIR[#LABEL] or llm."
        ),
    )
    seed: int = option(0, help="Seed.")
    # not part of the run's identity, as before
    bootstrap: int = knob(2000, help="Bootstrap resamples of every interval.")
    top_examples: int = knob(12, help="Pairs with the largest score change that the summary and report list.")
    only_good: str | None = option(
        None, help="A consolidated rating project: audit only the pairs its raters judged good."
    )
    # matched non-identity swaps (counterfair.analysis.placebo): "default" (the built-in words of ``language``, and
    # what the run records), "en", "fr", "de", a file, or None
    placebo: str | None = option(
        "default",
        help=(
            "Placebo words matched to each identity swap: default (the built-in ones of the audit's "
            "--language), en, fr or de, a YAML file, or none."
        ),
    )
    max_text_chars: int = option(MAX_TEXT_CHARS, help=vocabulary.MAX_TEXT_CHARS)
    encoding: str = option("utf-8", help=vocabulary.ENCODING)  # of the input file (a byte-order mark overrides it)
    # gold labels (1/0, true/false, toxic/non-toxic): adds the labelled-data bias metrics
    # (counterfair.commands.bias.core) of the originals' scores, per identity group, beside the counterfactual results
    # (later: old runs keep their identity)
    label_column: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": (
                "Column with gold labels (1/0, toxic/non-toxic): adds the bias AUCs per group (as counterfair bias)."
            ),
        },
    )
    # a consolidated rating project: each rated pair marked good or poor in pairs.csv's ``rating`` column (every pair
    # stays; the report plots the two kinds apart, paper 000 Fig. 3)
    ratings: str | None = field(
        default=None,
        metadata={
            "later": True,
            "help": (
                "A consolidated rating project: mark each rated pair good or poor (pairs.csv's rating "
                "column); the report plots the two kinds apart."
            ),
        },
    )
    # auto | en | fr | de | es: the word lists, the default identity set (identity-fr, identity-de, identity-es, swapped
    # with agreement), the placebo words and the tokenizer (counterfair.language_registry); auto: read from the texts
    # (in_language) once they are read; an English audit keeps the identity it had before
    # (before: runs made while the default was English keep their identity, and resume, when the texts read as English)
    language: str = field(default="auto", metadata={"later": True, "before": "en", "help": vocabulary.LANGUAGE_AUTO})
    # probes where the texts are thin (counterfair.analysis.probes): a first name written beside a person the text
    # names ("my neighbour Lakisha"), an identity term before it ("my Muslim neighbour"), measured and gated apart
    # (families names_probe, identity_probe); auto: where the family's natural slots are in fewer than 400 texts
    probes: str = field(
        default="auto",
        metadata={
            "later": True,
            "help": "Probe slots where the texts are thin: auto (first names beside a person the text names, "
            "identity terms before it, where fewer than 400 texts name one), always, or off; measured and gated "
            "apart (names_probe:*, identity_probe:*).",
        },
    )

    def __post_init__(self) -> None:
        from ...language_registry import AUTO, get_language

        if str(self.language).strip().lower() == AUTO:  # read from the texts (in_language), then set as given
            self.language = AUTO
        else:
            entry = get_language(self.language)
            self.language = entry.code
            if not entry.default:
                self.identities = self.identities or entry.identity_set
            if self.placebo in ("default", "builtin"):
                self.placebo = self.language  # an English run records "en", as it always did
        from ...analysis.probes import probes_wanted

        probes_wanted(self.probes, 0)  # a bad mode named before any work
        self.methods = normalize_methods(self.methods, "audit")
        self.detector = resolve_detector(self.detector, self.methods)
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"threshold must be in (0, 1), got {self.threshold}")
        check_bootstrap_cap(self.bootstrap)


def estimate_seconds(counts: dict[str, int], identity_texts: int, methods: list[str], engine: str = "local") -> float:
    """A rough up-front estimate of the audit's wall time on 2 CPU cores, from each editor's seconds per text
    (:class:`~counterfair.editors.registry.EditorSpec`) and what the engine takes to start
    (:data:`~counterfair.engine.STARTUP_SECONDS`)."""
    from ...engine import STARTUP_SECONDS

    total = SECONDS_FIXED + STARTUP_SECONDS.get(engine, 0.0)
    for method in methods:
        spec = editor_spec(method)
        total += spec.seconds_per_text * (identity_texts if spec.identity_texts else sum(counts.values()))
    return total


def in_language(opts: AuditOptions, frame: pd.DataFrame) -> AuditOptions:
    """The options with ``--language auto`` read from the texts
    (:func:`~counterfair.language_registry.detect_language`: English unless another language's own stop words clearly
    lead), and what that language implies set (its identity set and placebo words); given options as they are."""
    from ...language_registry import AUTO, detect_language

    if opts.language != AUTO:
        return opts
    return replace(opts, language=detect_language(frame["text"]))


def read_input(source: Any, opts: AuditOptions) -> tuple[pd.DataFrame, str]:
    """The audit's input (:func:`~counterfair.io.read_texts`) as a table of ids and texts, and its origin."""
    labels = {opts.label_column: "--label-column"} if opts.label_column else {}
    read = read_texts(
        source, text_column=opts.text_column, id_column=opts.id_column, columns=labels, encoding=opts.encoding
    )
    frame = text_frame({"id": read.ids, "text": read.filled()})
    if opts.label_column:
        frame["label"] = binary_labels(read.frame, opts.label_column, read.origin)
    return frame, read.origin


def attribute_matcher(name: str, language: str = "en") -> Any:
    """A matcher of every word that makes a text reference the attribute or swap pack ``name`` (a built-in word
    list in ``language``)."""
    if not is_swap_attribute(name):
        return load_attribute(name, language).matcher()
    from ...editors.swap import written_forms
    from ...lexicons.attributes import load_swap_set
    from ...text import TermMatcher

    found = load_swap_set(name)
    if isinstance(found, IdentitySet):
        return TermMatcher(written_forms(found), case_sensitive=found.case_sensitive)
    from ...editors.gender import gender_matcher

    return gender_matcher(found)


def default_attributes(language: str = "en", *, swaps: bool = True) -> list[str]:
    """What an audit without ``--attributes`` tests: the language's word-list attributes (paper 000's) and, when it
    swaps identities, the swap packs of the language's entry (gender words; first names in English)."""
    from ...language_registry import get_language

    packs = list(get_language(language).packs) if swaps else []
    return known_attributes(language) + packs


def _attribute_counts(texts: list[str], names: list[str], language: str = "en") -> dict[str, int]:
    counts = {}
    for name in names:
        matcher = attribute_matcher(name, language)  # built once per attribute, not per text
        counts[name] = sum(1 for t in texts if matcher.contains(t))
    return counts


def identity_set_of(opts: AuditOptions) -> Any:
    """The audit's identity set, which must be in the audit's language (its placebo words and word lists are)."""
    from ...lexicons.attributes import identity_set_in

    return identity_set_in(opts.identities, opts.language)


def plan(source: Any, options: AuditOptions | None = None) -> AuditInput:
    """What an audit would do (texts per attribute, identity texts) and how long it should take; no models run."""
    opts = options or AuditOptions()
    frame, origin = read_input(source, opts)
    return plan_frame(frame, in_language(opts, frame), origin)


def plan_frame(frame: pd.DataFrame, opts: AuditOptions, origin: str) -> AuditInput:
    """:func:`plan` of texts already read (columns ``id``, ``text``, whatever the input called them)."""
    texts = frame["text"].tolist()
    requested = opts.attributes or default_attributes(opts.language, swaps=bool(swap_methods_of(opts)))
    counts = _attribute_counts(texts, requested, opts.language)
    attr_methods = [m for m in opts.methods if not swaps_identities(m)]
    if not swap_methods_of(opts):
        swaps = [a for a in requested if is_swap_attribute(a)]
        if swaps:
            raise ConfigError(f"--attributes {', '.join(swaps)} are swapped: add {IDENTITY_SWAP} to --methods")
    occurring = {a: n for a, n in counts.items() if n}
    missing = [a for a, n in counts.items() if n == 0]
    from ...editors.swap import written_forms
    from ...text import TermMatcher

    identity_matcher = TermMatcher(written_forms(identity_set_of(opts)))
    identity_texts = sum(1 for t in texts if identity_matcher.contains(t)) if swap_methods_of(opts) else 0
    if opts.attributes and not occurring and not identity_texts:
        others = _attribute_counts(
            texts, [a for a in default_attributes(opts.language) if a not in requested], opts.language
        )
        found = ", ".join(f"{a} ({n} texts)" for a, n in others.items() if n) or "none of the built-in ones"
        raise InputError(f"{origin}: no text references {', '.join(requested)}; attributes that do occur: {found}")
    return AuditInput(
        texts=len(texts),
        attributes=occurring,
        attributes_without_texts=tuple(missing),
        identity_texts=identity_texts,
        methods=tuple(opts.methods),
        estimated_seconds=round(
            estimate_seconds(
                {a: n for a, n in occurring.items() if not is_swap_attribute(a)} if attr_methods else {},
                identity_texts + sum(n for a, n in occurring.items() if is_swap_attribute(a)),
                opts.methods,
                opts.engine,
            ),
            0,
        ),
    )


def swap_methods_of(opts: AuditOptions) -> list[str]:
    """The audit's identity swaps among its methods (the built-in ``swap``, or a plugin's)."""
    return [m for m in opts.methods if swaps_identities(m)]


def uses_llm(opts: AuditOptions) -> bool:
    """Whether a method calls the audit's ``--llm`` (which the reproduce command then names)."""
    return any(editor_spec(m).needs_llm for m in opts.methods)
