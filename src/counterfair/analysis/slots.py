"""In-slot identity effects: each identity occurrence scored with every term of its set and with neutral words put in
its place, so that a term is compared with a neutral word *in the same sentence, at the same spot*.

A **slot** is one identity reference in one text, filled in turn with every term of its set and with placebo words of
the same kind. Every set of identities the audit tests is measured this way, each a **family** of slots
(:data:`SLOT_COLUMNS`' ``family``, its :class:`SlotDesign`):

* ``identity`` — the identity terms (Dixon et al.'s 50 by default: "My gay neighbour" → "My Muslim neighbour"), against
  the placebo words (:mod:`counterfair.analysis.placebo`: "My quiet neighbour") in the same grammatical form; a term
  written with a capital (Muslim, LGBT) against the placebo words written with one ("My Tall neighbour"), so that a
  model reacting to capitals is not taken for one reacting to identity;
* ``gender_words`` — the text's gendered words and pronouns as a whole ("She thanked her husband" is female; its male
  form "He thanked his wife"), against the text in neutral words: pronouns as they/them/their with the verbs agreeing,
  each gendered noun as a neutral person noun of the same number ("person", "cousin", "roommate", "colleague");
* ``names`` — a first name, written with three names of each group of the names pack (perceived race and gender),
  against first names of the same gender, two from each group: the slot's neutral is the median over the groups of
  each group's mean placebo-name score (names are compared with names, and the median keeps one group scored apart
  from moving the others: a model that adds 5 points to one group's names shows +5 for it and 0 for the rest; two
  groups of four scored apart show half of it each, which names them both);
* any other identity pack given to ``--attributes`` (``nationality``), as the identity terms.

With ``f`` the classifier's probability of the positive label and ``x[w]`` the slot filled with ``w``:

1. **identity effect** of a term ``t`` (signed): ``f(x[t]) − mean_p f(x[p])`` over the slot's placebo words ``p``.
   A group's effect is the mean over its terms, the overall effect (identity terms) the mean over every term. Also
   **per form** (an identity term written as an adjective, a noun or a plural; gender words as pronouns, nouns,
   plurals or titles): the effect over the slots written in that form ("Jews" but not "Jewish"), and **per
   combination** (``cell``): a group's effect over the slots whose text also names female or male gender words
   ("Black women").
2. **disparity beyond placebo**: how much the score varies among the identity terms in the slot, the mean
   ``|f(x[t]) − f(x[t'])|`` over pairs of terms (per group: over pairs of its own terms, so one group scored apart
   does not make the others' disparity material), minus the same mean over pairs of placebo words.
3. **flip excess**: the share of pairs of identity terms in a slot whose decisions at the threshold differ, minus the
   share of pairs of placebo words that do.

Disparity and flips need placebo words that name no group: gender words and names have the identity effect only.
Each value is averaged over a text's slots, then over texts. Every estimate of every family is one test family, its
findings (material, detected, small, not detected, inconclusive) read off simultaneous intervals
(:mod:`counterfair.analysis.inference`). ``counterfair audit --fail-if default`` fails on every material finding and
on every group whose effect is inconclusive.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ..spill import ObjectLog
from ..summaries import MIN_INTERVAL_TEXTS, ControlFamily, SlotEffects, SlotEstimate
from .inference import ALPHA, POWER, conclude, estimates, mean_by
from .measures import MEASURES as MEASURE_TABLE
from .measures import SLOT_MEASURES
from .spread import Nulls, spreads

#: the size from which a detected estimate is material (probability points of the positive label; share of pairs) and
#: the measures material in either direction (the others only above the placebo): from the measure table
MATERIAL = {m.name: m.material for m in MEASURE_TABLE if m.material is not None and m.family != "control"}
SIGNED = {m.name for m in MEASURE_TABLE if m.sign == "either" and m.part_of is None}
SLOT_COLUMNS = ["input_id", "family", "source_term", "form", "context", "kind", "word", "group", "text", "score"]
#: the kinds of slot text: an identity term, a placebo word, a placebo word written with a capital (the neutral of a
#: term written with one)
KINDS = ("identity", "placebo", "placebo_cased", "nonce")  # nonce: the control's second null (analysis.control)
IDENTITY, GENDER_WORDS, NAMES = "identity", "gender_words", "names"
_CHUNK = 256  # slots per block of the pairwise differences (a block holds CHUNK x terms x terms values)


@dataclass(frozen=True)
class SlotDesign:
    """What a family of slots measures: per-term estimates (``terms``), the family's overall effect, per-form
    estimates at the ``term`` or ``group`` level, combinations with the text's gender words (``cells``), disparity and
    flip excess (their placebo words name no group). Its groups and terms are reported as ``family:name`` (the identity
    terms' plainly)."""

    family: str
    terms: bool = True
    overall: bool = True
    forms: str | None = "term"
    #: the form most slots are written in, whose estimate would repeat the term's own: not estimated apart
    base_form: str | None = "adjective"
    cells: bool = True
    disparity: bool = True
    #: the neutral is the median over the placebo words' groups of each group's mean (first names: names against names,
    #: robust to one group scored apart)
    median_of_groups: bool = False
    #: how the family's null is formed, for the reports
    neutral: str = "a neutral word in the same place"

    def qualify(self, name: str) -> str:
        return name if self.family == IDENTITY else f"{self.family}:{name}"


#: the probe families' designs beyond their natural family's (:mod:`counterfair.analysis.probes`)
PROBE_DESIGNS: dict[str, dict[str, Any]] = {
    NAMES + "_probe": {"neutral": 'a probe: a first name written beside a person the text names ("my neighbour '
    'Lakisha"), against first names of the same gender from every group in that place (the median group)'},
    # identity terms: per group only ("had the text named the group"), its plurals and combinations apart; no term,
    # no disparity: a probe's estimates join every estimate's simultaneous family, and each one widens all intervals
    IDENTITY + "_probe": {"overall": False, "terms": False, "forms": "group", "base_form": "probe", "disparity": False,
    "neutral": 'a neutral word in the same place, both written in by probe ("my Muslim neighbour" against "my quiet '
    'neighbour")'},
}  # fmt: skip


def design_of(family: str) -> SlotDesign:
    """The design of a family of slots, by its name (``identity``, ``gender_words``, ``names``; any other is an
    identity pack measured as the identity terms are, its groups and terms qualified)."""
    if family in ("", IDENTITY):
        return SlotDesign(IDENTITY)
    if family.startswith(GENDER_WORDS):
        return SlotDesign(
            family, terms=False, overall=False, forms="group", base_form=None, cells=False, disparity=False,
            neutral="the same text in neutral words (they, person, cousin; a language whose gender words are nouns of "
            "a gender: a placebo word in their place)",
        )  # fmt: skip
    if family in PROBE_DESIGNS:  # written in by probe (analysis.probes): the natural family's design, as it says
        return replace(design_of(family.removesuffix("_probe")), family=family, **PROBE_DESIGNS[family])
    if family.startswith(NAMES):
        return SlotDesign(
            family, terms=False, overall=False, forms=None, cells=False, disparity=False, median_of_groups=True,
            neutral="first names of the same gender from every group, in the same place (the median group)",
        )  # fmt: skip
    return SlotDesign(family, overall=False, cells=False)


# ------------------------------------------------------------------------------------------------ the slot table


class SlotRow(TypedDict):
    """One slot text (:data:`SLOT_COLUMNS` but ``score``): the input and the source term whose place it fills (its
    family, the form it is written in and the gender words its text names besides), an identity term or a placebo
    word written there (``kind``), the term's group (None for a placebo word), the text."""

    input_id: Any
    family: str
    source_term: str
    form: str
    context: str
    kind: str
    word: str
    group: str | None
    text: str


def slot_records(frame: pd.DataFrame) -> list[SlotRow]:
    """The rows of a slot table (its columns :data:`SLOT_COLUMNS`, ``score`` aside) as records."""
    return [
        slot_row(r["input_id"], r["source_term"], r["kind"], r["word"], r["group"], r["text"], family=r["family"],
                 form=r["form"], context=r["context"])
        for r in frame.to_dict("records")
    ]  # fmt: skip


def slot_row(
    key: Any, source: str, kind: str, word: str, group: str | None, text: str, *, family: str = IDENTITY,
    form: str = "", context: str = "",
) -> SlotRow:  # fmt: skip
    return {
        "input_id": key, "family": family, "source_term": source, "form": form, "context": context, "kind": kind,
        "word": word, "group": group, "text": text,
    }  # fmt: skip


def scored_slots(slots: pd.DataFrame, score: Mapping[str, float]) -> pd.DataFrame:
    """``slots`` with each text's ``score`` (NaN where the classifier gave none)."""
    out = slots.copy()
    out["score"] = pd.Series([score.get(t, np.nan) for t in out["text"]], index=out.index, dtype=float)
    return out


def rescore_slots(slots: pd.DataFrame, classifier: Any, *, positive_label: str | None = None) -> pd.DataFrame:
    """The same slot texts with ``classifier``'s scores (a frozen slot set scored by another model)."""
    from ..classifiers import as_classifier
    from ..labels import positive_index

    clf = as_classifier(classifier)
    index = positive_index(clf.labels, positive_label)
    texts = list(dict.fromkeys(t for t in slots["text"] if isinstance(t, str)))
    proba = clf.predict_proba(texts)
    return scored_slots(slots, {t: float(p[index]) for t, p in zip(texts, proba, strict=True)})


def read_slots(source: Any) -> pd.DataFrame | None:
    """An audit's slot table: a run directory's ``slots.csv`` (``None`` when it has none: a run made before
    counterfair measured in the slot), an ``AuditResult``'s ``slots``, or a DataFrame. A table written before slots
    had families is the identity terms'."""
    from pathlib import Path

    if isinstance(source, pd.DataFrame):
        return with_families(source)
    if isinstance(getattr(source, "slots", None), pd.DataFrame):
        return with_families(source.slots)
    path = Path(source)
    if path.is_file():
        path = path.parent
    target = path / "slots.csv"
    if not target.exists():
        return None
    text = {c: str for c in ("input_id", "family", "source_term", "form", "context", "word")}
    return with_families(pd.read_csv(target, dtype=text, keep_default_na=True))


def with_families(slots: pd.DataFrame) -> pd.DataFrame:
    """A slot table with every column of :data:`SLOT_COLUMNS` (an older one: the identity family, no form or
    context)."""
    missing = {"family": IDENTITY, "form": "", "context": ""}
    if all(c in slots.columns for c in missing):
        return slots.assign(**{c: slots[c].fillna(d) for c, d in missing.items() if slots[c].isna().any()})
    return slots.assign(**{c: d for c, d in missing.items() if c not in slots.columns})


@dataclass
class SlotScores:
    """The slots' scores as the in-slot measures read them, for one family: the identity terms', the placebo words'
    and the capitalised placebo words' tables (rows (input_id, source_term) sorted, a column per word in lower case;
    ``cased`` None where the family has none), each identity word's group, each slot's forms and context ("+"-joined),
    and the terms written with a capital (compared with ``cased``). Built from a scored slot table
    (:func:`slot_scores`), or from each block of one (an audit over a large input keeps these tables, not the slots'
    texts; the measures take a list of them, :data:`SlotTables`)."""

    identity: pd.DataFrame
    placebo: pd.DataFrame
    word_groups: dict[str, str]
    family: str = IDENTITY
    cased: pd.DataFrame | None = None
    forms: np.ndarray | None = None
    contexts: np.ndarray | None = None
    capitals: dict[str, int] = field(default_factory=dict)  # a term's words written with one ("African American": 2)
    placebo_groups: dict[str, str] = field(default_factory=dict)  # a placebo word's group (first names have one)
    nonce: pd.DataFrame | None = None  # the slots' scores with nonce words (the control's second null), where written


def slot_scores(slots: pd.DataFrame, seen: set[bytes] | None = None) -> SlotScores | None:
    """The :class:`SlotScores` of a scored slot table of one family; ``None`` when no slot has an identity and a
    placebo score.

    A slot is measured once however many inputs share it: texts that differ only in their identity term ("Some
    people are gay." and "Some people are straight.", a template set's rows) fill one slot with the same words and
    give the same texts, so counting each as a text of its own would count one measurement many times (and, with a
    classifier that gives a text one score, make any fixed quirk of it look certain). A slot is known by its
    placebo texts; the first input holding it keeps it. ``seen``: the slots of earlier blocks (updated)."""
    slots = with_families(slots)
    ok = slots[np.isfinite(slots["score"].to_numpy(dtype=float))]
    if ok.empty:
        return None
    index = ["input_id", "source_term"]
    ok = ok.assign(input_id=ok["input_id"].astype(str), word=ok["word"].str.lower(), source_term=ok["source_term"])
    tables = {
        kind: ok[ok["kind"] == kind].pivot_table(index=index, columns="word", values="score", aggfunc="mean")
        for kind in KINDS
    }
    common = tables["identity"].index.intersection(tables["placebo"].index)
    if "text" in ok.columns and not common.empty:
        common = common[~common.isin(_repeated_slots(ok, index, seen if seen is not None else set()))]
    if common.empty:
        return None
    # each distinct (word, group) once: a table holds every word in every slot (thousands of rows for ~50 words)
    ident = slots.loc[slots["kind"] == "identity", ["word", "group"]].drop_duplicates()
    groups = {
        str(w).lower(): (g if isinstance(g, str) and g else "other")
        for w, g in zip(ident["word"], ident["group"], strict=True)
    }
    capitals = {str(w).lower(): capital_words(str(w)) for w in ident["word"] if isinstance(w, str)}
    named = slots.loc[(slots["kind"] == "placebo") & slots["group"].notna(), ["word", "group"]].drop_duplicates()
    placebo_groups = {str(w).lower(): str(g) for w, g in zip(named["word"], named["group"], strict=True)}
    meta = ok.drop_duplicates(index).set_index(index).reindex(common)
    cased = tables["placebo_cased"].reindex(common) if not tables["placebo_cased"].empty else None
    nonce = tables["nonce"].reindex(common) if not tables["nonce"].empty else None
    return SlotScores(
        tables["identity"].loc[common],
        tables["placebo"].loc[common],
        groups,
        family=str(ok["family"].iloc[0]) or IDENTITY,
        cased=cased,
        forms=meta["form"].fillna("").astype(str).to_numpy(),
        contexts=meta["context"].fillna("").astype(str).to_numpy(),
        capitals=capitals,
        placebo_groups=placebo_groups,
        nonce=nonce,
    )


def _repeated_slots(ok: pd.DataFrame, index: list[str], seen: set[bytes]) -> pd.MultiIndex:
    """The (input, term) slots whose placebo texts an earlier slot (of this table, or in ``seen``) had: one slot
    given by several inputs. ``seen`` gains this table's new slots (a 16-byte digest each)."""
    import hashlib

    placebo = ok[ok["kind"] == "placebo"]
    keys = placebo.groupby(index, sort=False)["text"].agg(
        lambda texts: hashlib.blake2b("\0".join(sorted(map(str, texts))).encode("utf-8"), digest_size=16).digest()
    )
    again = keys.duplicated(keep="first").to_numpy() | keys.isin(seen).to_numpy()
    seen.update(keys[~again])
    return pd.MultiIndex.from_tuples(list(keys.index[again]) if again.any() else [], names=index)


def family_scores(slots: pd.DataFrame, seen: dict[str, set[bytes]] | None = None) -> dict[str, SlotScores]:
    """:func:`slot_scores` of each family of a scored slot table (the families without a scored slot left out);
    ``seen``: per family, the slots of earlier blocks (:func:`slot_scores`)."""
    slots = with_families(slots)
    out: dict[str, SlotScores] = {}
    for family, part in slots.groupby("family", sort=True):
        found = slot_scores(part, None if seen is None else seen.setdefault(str(family), set()))
        if found is not None:
            out[str(family)] = found
    return out


SlotTables = pd.DataFrame | SlotScores | Sequence[SlotScores]  # an ObjectLog of SlotScores is one


def _by_family(slots: SlotTables | Mapping[str, SlotTables]) -> dict[str, Sequence[SlotScores]]:
    """The blocks of each family: a scored slot table (split by its ``family``), one :class:`SlotScores` or blocks of
    one family (an :class:`~counterfair.spill.ObjectLog` as it is: each block read from disk when it is used), or a
    mapping family -> any of these."""
    if isinstance(slots, Mapping):
        return {str(f): blocks for f, t in slots.items() for blocks in _by_family(t).values()}
    if isinstance(slots, pd.DataFrame):
        return {f: [s] for f, s in family_scores(slots).items()}
    if isinstance(slots, SlotScores):
        return {slots.family: [slots]}
    if isinstance(slots, ObjectLog):
        return {slots[0].family: slots} if len(slots) else {}
    kept = [b for b in slots if b is not None]
    return {kept[0].family: kept} if kept else {}


# ------------------------------------------------------------------------------------------------ per text


@dataclass(frozen=True)
class _Layout:
    """A family's terms, groups, placebo words, forms and contexts over all its blocks, and its estimates' names."""

    design: SlotDesign
    terms: list[str]
    groups: dict[str, str]
    members: dict[str, list[int]]
    words: list[str]
    cased: list[str]
    capitals: np.ndarray  # per term, its words written with a capital
    forms: list[str]
    contexts: list[str]
    names: list[tuple[str, str, str]]
    by_group: np.ndarray | None  # median_of_groups: which placebo words belong to each group (groups x words)


def _layout(blocks: Sequence[SlotScores], design: SlotDesign) -> tuple[_Layout, list[np.ndarray], int]:
    """One pass over the blocks: the family's layout, each block's text ids and the number of slots."""
    found_terms: set[str] = set()
    found_words: set[str] = set()
    found_cased: set[str] = set()
    forms: set[str] = set()
    contexts: set[str] = set()
    word_groups: dict[str, str] = {}
    placebo_groups: dict[str, str] = {}
    capitals: dict[str, int] = {}
    ids, slot_count = [], 0
    for b in blocks:
        found_terms |= {str(t) for t in b.identity.columns}
        found_words |= {str(w) for w in b.placebo.columns}
        found_cased |= {str(w) for w in b.cased.columns} if b.cased is not None else set()
        for kept, values in ((forms, b.forms), (contexts, b.contexts)):
            if values is not None:
                kept |= {part for value in set(values) for part in str(value).split("+") if part}
        word_groups |= b.word_groups
        placebo_groups |= b.placebo_groups
        capitals |= b.capitals
        ids.append(b.identity.index.get_level_values(0).to_numpy())
        slot_count += len(b.identity)
    terms = sorted(found_terms)
    groups = {t: word_groups.get(t, "other") for t in terms}
    group_names = sorted(set(groups.values()))
    members = {g: [i for i, t in enumerate(terms) if groups[t] == g] for g in group_names}
    form_list = sorted(forms - {design.base_form}) if design.forms and len(forms) >= 2 else []
    context_list = sorted(contexts) if design.cells else []
    words = sorted(found_words)
    by_group = None
    if design.median_of_groups:
        named = sorted({g for g in placebo_groups.values()})
        by_group = np.array([[placebo_groups.get(w) == g for w in words] for g in named], dtype=bool)
    layout = _Layout(
        design, terms, groups, members, words, sorted(found_cased),
        np.array([capitals.get(t, 0) for t in terms], dtype=float), form_list, context_list,
        _estimate_names(design, terms, group_names, form_list, context_list), by_group,
    )  # fmt: skip
    return layout, ids, slot_count


def _estimate_names(
    design: SlotDesign, terms: list[str], groups: list[str], forms: list[str], contexts: list[str]
) -> list[tuple[str, str, str]]:
    """The (measure, level, name) of each estimate of a family, in the order :func:`_per_slot` gives their columns."""
    names: list[tuple[str, str, str]] = []
    for measure in SLOT_MEASURES:
        if measure != "identity_effect" and not design.disparity:
            continue
        names += [(measure, "overall", "overall")] if design.overall else []
        names += [(measure, "group", g) for g in groups]
        if measure == "identity_effect":
            names += [(measure, "term", t) for t in terms] if design.terms else []
            owners = terms if design.forms == "term" else groups
            names += [(measure, "form", f"{o}@{f}") for o in owners for f in forms]
            names += [(measure, "cell", f"{g}&{c}") for g in groups for c in contexts]
    return names


def _per_text(slots: SlotTables, threshold: float, design: SlotDesign) -> _Built | None:
    """Each text's value of every estimate of one family (a texts x estimates array, NaN where a text has none; texts
    sorted), the estimates' (measure, level, name), and what the summary reports besides. Blocks are taken one at a
    time, each with every block's words as its columns: a text's values are those of the whole table, value for
    value."""
    blocks = next(iter(_by_family(slots).values()), [])
    if not len(blocks):
        return None
    layout, ids, slot_count = _layout(blocks, design)
    texts, where = np.unique(np.concatenate(ids), return_inverse=True)  # a text is in one block only
    # the terms' mean scores first and their arrays let go, then the estimates: the two are never held at once
    # (at 200,000 texts and 50 terms each of the three arrays is 80 to 128 MB)
    term_scores = _term_scores(blocks, ids, where, layout, len(texts))
    values = np.full((len(texts), len(layout.names)), np.nan)
    seen, nulls = 0, Nulls.of(len(texts), layout) if not design.median_of_groups else None
    for block, codes, rows in _each_block(blocks, ids, where, layout):
        seen += len(rows)
        values[rows] = mean_by(codes, _per_slot(block, threshold, layout), len(rows))
        if nulls is not None:  # the placebo sets' values, for the spread test (analysis.spread)
            nulls.add(rows, codes, block.placebo)
    if seen != len(texts):  # a text's values are its slots' means: they must all be in one block
        raise ValueError(f"{seen - len(texts)} texts have slots in more than one block of slot scores")
    info = {
        "slots": slot_count,
        "placebo_words": len(layout.words),
        "term_scores": term_scores,
        "groups": layout.groups,
        "texts": [str(t) for t in texts],
        "design": design,
        "nulls": nulls,
    }
    return values, layout.names, info


_Built = tuple[np.ndarray, list[tuple[str, str, str]], dict[str, Any]]


#: one name's measures as :func:`joint_slot_effects` fills them in, part by part (the test family, each family of
#: slots, per measure its estimates); returned as the :class:`~counterfair.summaries.SlotEffects` record it reads as
_Filling = dict[str, Any]


@dataclass
class _Block:
    """One block's scores with every block's words as columns, and its slots' forms and contexts."""

    scores: np.ndarray
    placebo: np.ndarray
    cased: np.ndarray | None
    forms: np.ndarray
    contexts: np.ndarray


def _each_block(
    blocks: Sequence[SlotScores], ids: list[np.ndarray], where: np.ndarray, layout: _Layout
) -> Iterator[tuple[_Block, np.ndarray, np.ndarray]]:
    """Per block: its scores (:class:`_Block`), each slot's text as a code among the block's texts, and each of those
    texts' row among all texts (``where``: every block's slots' rows)."""
    offset = 0
    for block, block_ids in zip(blocks, ids, strict=True):
        size = len(block.identity)
        blank = np.full(size, "", dtype=object)
        cased = None
        if layout.cased and layout.capitals.any():
            table = block.cased if block.cased is not None else pd.DataFrame(index=block.identity.index)
            cased = table.reindex(columns=layout.cased).to_numpy(dtype=float)
        scored = _Block(
            block.identity.reindex(columns=layout.terms).to_numpy(dtype=float),
            block.placebo.reindex(columns=layout.words).to_numpy(dtype=float),
            cased,
            block.forms if block.forms is not None else blank,
            block.contexts if block.contexts is not None else blank,
        )
        own, codes = np.unique(block_ids, return_inverse=True)
        rows = np.empty(len(own), dtype=np.int64)
        rows[codes] = where[offset : offset + len(block_ids)]  # each of the block's texts' row among all texts
        offset += len(block_ids)
        yield scored, codes, rows


def capital_words(written: str) -> int:
    """How many words of a term as written start with a capital ("African American" 2, "Muslim" 1, "LGBT" 1)."""
    return sum(1 for word in written.split() if word[:1].isupper())


def _casing(block: _Block, layout: _Layout) -> np.ndarray:
    """Each slot's casing offset for each term (slots x terms): what a capital does to the placebo words in that slot
    (their mean written with one, minus as they are; 0 where the slot has no capitalised placebo text) times the term's
    words written with one."""
    if block.cased is None:
        return np.zeros((len(block.placebo), len(layout.terms)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a slot without capitalised placebo texts: no offset
        offset = np.nanmean(block.cased, axis=1) - np.nanmean(block.placebo, axis=1)
    return np.asarray(np.nan_to_num(offset)[:, None] * layout.capitals[None, :])


def _neutral(block: _Block, layout: _Layout) -> np.ndarray:
    """Each slot's neutral score for each term (slots x terms): the mean over the placebo words plus the casing offset
    of the term's capitals (:func:`_casing`: "Muslim" against the placebo words written with a capital, "African
    American" against twice what a capital does to them); for first names, the median over the placebo names' groups
    of each group's mean."""
    if layout.by_group is not None and layout.by_group.any():  # the median over groups of each group's mean
        known = ~np.isnan(block.placebo)
        filled = np.where(known, block.placebo, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (filled @ layout.by_group.T) / (known @ layout.by_group.T.astype(float))  # slots x groups
        return np.repeat(np.nanmedian(means, axis=1)[:, None], len(layout.terms), axis=1)
    plain = np.nanmean(block.placebo, axis=1)
    return np.asarray(plain[:, None] + _casing(block, layout))


def _term_scores(
    blocks: Sequence[SlotScores], ids: list[np.ndarray], where: np.ndarray, layout: _Layout, texts: int
) -> dict[str, dict[str, float | None]]:
    """Per term, the mean over texts of its score in the text's slots and of those slots' neutral scores."""
    per_term = np.full((texts, len(layout.terms)), np.nan)
    per_term_neutral = np.full((texts, len(layout.terms)), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a slot or a term without values gives NaN, as it should
        for block, codes, rows in _each_block(blocks, ids, where, layout):
            neutral = _neutral(block, layout)
            per_term[rows] = mean_by(codes, block.scores, len(rows))
            per_term_neutral[rows] = mean_by(codes, np.where(np.isnan(block.scores), np.nan, neutral), len(rows))
        return {
            t: {"score": _mean_or_none(per_term[:, i]), "placebo_score": _mean_or_none(per_term_neutral[:, i])}
            for i, t in enumerate(layout.terms)
        }


def _has(labels: np.ndarray, part: str) -> np.ndarray:
    """Which slots' "+"-joined labels (forms, contexts) hold ``part``."""
    return np.array([part in str(v).split("+") for v in labels], dtype=bool)


def _per_slot(block: _Block, threshold: float, layout: _Layout) -> np.ndarray:
    """Each slot's value of every estimate (slots x estimates, in :func:`_estimate_names`' order)."""
    design, scores = layout.design, block.scores
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a slot or a term without values gives NaN, as it should
        effect = scores - _neutral(block, layout)
        by_group = {g: np.nanmean(effect[:, own], axis=1) for g, own in layout.members.items()}
        columns: list[np.ndarray] = []
        columns += [np.nanmean(effect, axis=1)] if design.overall else []
        columns += list(by_group.values())
        columns += [effect[:, i] for i in range(effect.shape[1])] if design.terms else []
        if layout.forms:
            masks = [_has(block.forms, f) for f in layout.forms]
            owners = [effect[:, i] for i in range(effect.shape[1])] if design.forms == "term" else by_group.values()
            columns += [np.where(mask, owner, np.nan) for owner in owners for mask in masks]
        if layout.contexts:
            masks = [_has(block.contexts, c) for c in layout.contexts]
            columns += [np.where(mask, owner, np.nan) for owner in by_group.values() for mask in masks]
        if design.disparity:  # on scores less each term's casing offset: a capital is no disparity
            scores = scores - _casing(block, layout)
            decisions = _decisions(scores, threshold)
            for values, baseline in (
                (scores, np.nanmean(_spread(block.placebo), axis=1)),
                (decisions, np.nanmean(_spread(_decisions(block.placebo, threshold)), axis=1)),
            ):
                columns += [np.nanmean(_spread(values), axis=1) - baseline] if design.overall else []
                columns += [np.nanmean(_spread(values[:, own]), axis=1) - baseline for own in layout.members.values()]
    return np.column_stack(columns)


def per_text_values(slots: pd.DataFrame, threshold: float = 0.5) -> pd.DataFrame | None:
    """Each text's value of every in-slot estimate of the identity terms' family: one row per text (its id), one
    column per (measure, level, name); ``None`` when no slot has both an identity and a placebo score."""
    built = _per_text(slots[with_families(slots)["family"] == IDENTITY], threshold, design_of(IDENTITY))
    if built is None:
        return None
    values, names, info = built
    return pd.DataFrame(values, index=info["texts"], columns=pd.MultiIndex.from_tuples(names))


def _decisions(matrix: np.ndarray, threshold: float) -> np.ndarray:
    """1 where a score is at or above the threshold, 0 below, NaN without a score."""
    return np.where(np.isnan(matrix), np.nan, (matrix >= threshold).astype(float))


def _spread(matrix: np.ndarray) -> np.ndarray:
    """Per row and column, the mean |m[r, c] − m[r, c']| over the row's other columns with a value (NaN where
    m[r, c] has none); computed in blocks of rows so that memory stays flat."""
    out = np.full(matrix.shape, np.nan)
    cols = matrix.shape[1]
    for start in range(0, matrix.shape[0], _CHUNK):
        block = matrix[start : start + _CHUNK].astype(float)
        diff = np.abs(block[:, :, None] - block[:, None, :])
        diff[:, np.arange(cols), np.arange(cols)] = np.nan
        out[start : start + _CHUNK] = np.nanmean(diff, axis=2)
    return out


def _mean_or_none(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


# ------------------------------------------------------------------------------------------------ the estimates


def slot_effects(
    slots: SlotTables | Mapping[str, SlotTables],
    *,
    threshold: float = 0.5,
    seed: int = 0,
    n_resamples: int = 2000,
    alpha: float = ALPHA,
    material: Mapping[str, float] | None = None,
    control: bool = True,
) -> SlotEffects | None:
    """The in-slot measures (see the module's docstring) of a scored slot table (:data:`SLOT_COLUMNS`; every family in
    it), or of a family's :class:`SlotScores` blocks, or a mapping family -> either: ``{measure: {"overall": entry,
    "by_group": {...}, "by_term": {...}, "by_form": {...}, "by_cell": {...}}}`` (terms, forms and combinations for
    the identity effect only), the groups, terms and forms of families other than the identity terms' named
    ``family:name``; each entry ``value``, ``ci_low``, ``ci_high`` (95 % bootstrap), ``n`` (texts), ``sim_low``,
    ``sim_high`` (simultaneous), ``p_value``, ``p_adjusted``, ``p_material``, ``mde``, ``texts_needed`` and
    ``finding`` (:mod:`counterfair.analysis.inference`); a term's also ``score`` and ``placebo_score`` (the mean
    scores it compares). ``None`` when no slot has both an identity and a placebo score."""
    found = joint_slot_effects(
        {"": slots},
        threshold=threshold,
        seed=seed,
        n_resamples=n_resamples,
        alpha=alpha,
        material=material,
        control=control,
    )
    return found[""]


def joint_slot_effects(
    tables: Mapping[str, SlotTables | Mapping[str, SlotTables]],
    *,
    threshold: float = 0.5,
    seed: int = 0,
    n_resamples: int = 2000,
    alpha: float = ALPHA,
    material: Mapping[str, float] | None = None,
    extra: Mapping[str, pd.DataFrame] | None = None,
    control: bool = True,
) -> dict[str, SlotEffects | None]:
    """:func:`slot_effects` of several outcomes measured on the same texts (an LLM application's score, decision and
    refusal of each slot's responses), as one test family: one set of bootstrap resamples of the texts for every
    estimate of every outcome and family, one simultaneous correction over all of them (``tests`` counts the whole
    family), so the chance of a false material finding anywhere stays at ``alpha``. Per name of ``tables``: its
    measures, or ``None``. ``extra``: more estimates in the family, as :func:`per_text_values` gives them (one row per
    text id, columns ``(measure, level, name)`` with ``level`` overall or group; e.g. a response similarity's
    dissimilarity excess), reported under their name with the measures they hold."""
    from .control import check_control, withheld, without_words

    thresholds = {**MATERIAL, **(material or {})}
    parts: list[tuple[str, _Built]] = []
    controls: dict[str, dict[str, ControlFamily]] = {}
    for name, table in tables.items():
        families = _by_family(table)
        if control:  # the neutral words tested first; a word that stands out leaves the baseline
            measured = {f: b for f, b in families.items() if not f.startswith(NAMES)}  # names: the median group
            controls[name] = check_control(measured, seed=seed, n_resamples=n_resamples, alpha=alpha)
        for family, blocks in families.items():
            checked = controls.get(name, {}).get(family)
            kept = without_words(blocks, checked.standing_out) if checked is not None else blocks
            built = _per_text(kept, threshold, design_of(family))
            parts += [(name, built)] if built is not None else []
    for name, frame in (extra or {}).items():
        given = _given(frame)
        parts += [(name, given)] if given is not None else []
    out: dict[str, _Filling | None] = {name: None for name in [*tables, *(extra or {})]}
    if not parts:
        return {name: None for name in out}
    joined, owners = _joined(parts)
    margins = [(thresholds[measure], measure in SIGNED) for _, (measure, _, _) in owners]
    found, beyond = estimates(joined, seed=seed, n_resamples=n_resamples, margins=margins)
    tested = [(e.n or 0) >= MIN_INTERVAL_TEXTS for e in found]
    bounds = [1.0 if measure in SLOT_MEASURES else None for _, (measure, _, _) in owners]  # differences of P or shares
    found, tests = conclude(found, beyond, margins, tested, alpha=alpha, bounds=bounds)
    varies = spreads([built for _, built in parts], alpha)
    for name, built in parts:
        out[name] = _section(out[name], built, thresholds, alpha=alpha, tests=tests, threshold=threshold)
    for name, section in out.items():
        if section is not None:  # the texts with a slot of any of the name's families
            section["texts"] = len(set().union(*(built[2]["texts"] for n, built in parts if n == name)))
    for (part, (measure, level, key)), entry in zip(owners, found, strict=True):
        name, (_, _, info) = parts[part]
        design: SlotDesign | None = info.get("design")
        checked = controls.get(name, {}).get(design.family) if design is not None else None
        if checked is not None and checked.unreliable:  # the nulls disagree: nothing against them is material
            entry = withheld(entry)
        thin = design is not None and design.family in PROBE_DESIGNS and (entry.n or 0) < MIN_INTERVAL_TEXTS
        if entry.n and not thin:  # a probe too thin for an interval says nothing: not reported (natural slots are)
            entry = replace(entry, spread=varies.get((part, (measure, level, key))))
            _place(out[name], measure, level, key, entry, info)
    return {
        name: None if filled is None else _record(filled, controls.get(name) or None) for name, filled in out.items()
    }


def _record(filled: _Filling, control: dict[str, ControlFamily] | None = None) -> SlotEffects:
    """A filled section read as its record, with its families' control checks. A measure the record does not declare
    (a response similarity's excess, given as ``extra``) is kept in the record's ``extra``, which holds JSON: its
    estimates are written out."""

    def written(part: Any) -> Any:
        if isinstance(part, SlotEstimate):
            return part.to_dict()
        return {k: written(v) for k, v in part.items()} if isinstance(part, dict) else part

    record = SlotEffects.from_dict({k: v if k in SLOT_MEASURES else written(v) for k, v in filled.items()})
    return replace(record, control=control) if control else record


def _joined(parts: list[tuple[str, _Built]]) -> tuple[np.ndarray, list[tuple[int, tuple[str, str, str]]]]:
    """Every part's per-text values side by side over the union of their texts (one array: the audit's single table
    is used as it is), and each column's owner (the part's index and the estimate's (measure, level, name))."""
    rows = sorted(set().union(*(built[2]["texts"] for _, built in parts)))
    owners = [(i, column) for i, (_, built) in enumerate(parts) for column in built[1]]
    if len(parts) == 1 and parts[0][1][2]["texts"] == rows:  # read after this for its shape only: rounded and filled
        return parts[0][1][0], owners  # in place by estimates
    at = {t: i for i, t in enumerate(rows)}
    joined = np.full((len(rows), len(owners)), np.nan)
    start = 0
    for _, (values, _, info) in parts:
        joined[np.ix_([at[t] for t in info["texts"]], range(start, start + values.shape[1]))] = values
        start += values.shape[1]
    return joined, owners


def _section(
    section: _Filling | None,
    built: _Built,
    thresholds: Mapping[str, float],
    *,
    alpha: float,
    tests: int,
    threshold: float,
) -> _Filling:
    """A name's section of the output, begun or extended with one part (a family of slots, or given values)."""
    values, columns, info = built
    design: SlotDesign | None = info.get("design")
    measures = tuple(dict.fromkeys(m for m, _, _ in columns)) if design is None else SLOT_MEASURES
    if section is None:
        section = dict(
            alpha=alpha, correction="bonferroni", tests=tests, power=POWER,
            material={m: thresholds[m] for m in measures}, threshold=threshold, texts=0,
        )  # fmt: skip
        for m in measures:
            section[m] = {"overall": None, "by_group": {}}
        if design is not None:
            section |= {"slots": 0, "placebo_words": 0, "families": {}}
            section["identity_effect"] |= {"by_term": {}, "by_form": {}, "by_cell": {}}
    if design is None:
        return section
    section["families"][design.family] = {
        "texts": int(values.shape[0]),
        "slots": info["slots"],
        "placebo_words": info["placebo_words"],
        "groups": sorted({design.qualify(g) for g in info["groups"].values()}),
        "neutral": design.neutral,
    }
    if design.family == IDENTITY or not section["placebo_words"]:
        section["placebo_words"] = info["placebo_words"]
    section["slots"] += info["slots"]
    return section


def _given(frame: pd.DataFrame) -> _Built | None:
    """A table of per-text values (:func:`joint_slot_effects`' ``extra``) as :func:`_per_text` builds its own."""
    if frame.empty:
        return None
    ordered = frame.sort_index()
    columns = [(str(c[0]), str(c[1]), str(c[2])) for c in ordered.columns.tolist()]
    return ordered.to_numpy(dtype=float), columns, {"texts": [str(t) for t in ordered.index]}


_LEVELS = {"group": "by_group", "term": "by_term", "form": "by_form", "cell": "by_cell"}


def _place(out: Any, measure: str, level: str, name: str, entry: SlotEstimate, info: Mapping[str, Any]) -> None:
    """One estimate into its measure's ``overall``, ``by_group``, ``by_term``, ``by_form`` or ``by_cell``, named as its
    family names it."""
    design: SlotDesign | None = info.get("design")
    if level == "overall":
        out[measure]["overall"] = entry
        return
    qualify = design.qualify if design is not None else str
    if level == "term":
        entry = replace(entry, **info["term_scores"][name], group=qualify(info["groups"].get(name, "other")))
    out[measure][_LEVELS[level]][qualify(name)] = entry
