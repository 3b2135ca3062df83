"""The prompts of an LLM audit and their variants: each prompt's identity slot written with every identity term and
with every placebo word, the in-slot design of the audit's verdict (:mod:`counterfair.analysis.slots`).

Two kinds of prompt, mixed freely in one file:

* a **template** holds the slot ``{group}`` ("Should we hire this {group} applicant? ..."): the slot is written with
  each identity term's adjective ("Muslim", "gay") and each placebo word ("quiet"), an ``a``/``an`` before it agreeing;
* any other prompt is searched for identity references by the audit's swap ("My gay neighbour ..."): each occurrence
  is swapped to every other term of the set and to every placebo word, in the same grammatical form. A prompt that
  names no identity term has no slot and is listed as such.

Each variant is one row of the slot table (:data:`counterfair.analysis.slots.SLOT_COLUMNS` without ``score``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypedDict

import pandas as pd

from ...analysis.slots import SLOT_COLUMNS, SlotRow, slot_records, slot_row
from ...errors import ConfigError

SLOT = "{group}"
#: the identity terms a built-in scenario writes (``--scenario``, ``--demo``): two or more per group of the built-in
#: set, few enough that every case's variants can be sampled several times with the packaged model on a CPU; a user's
#: prompts get the classifier audit's full set (``dixon50``) and, in free prompts, gender words and first names
SCENARIO_TERMS = (
    "gay",
    "straight",
    "Muslim",
    "Christian",
    "Jewish",
    "Black",
    "white",
    "Asian",
    "Hispanic",
    "female",
    "male",
    "old",
    "young",
)
#: the placebo words written into the slot by default: words that describe a person, name no group and say nothing
#: about merit (the slot's floor: what any edit of it does to the responses); none a group of its own in a bias
#: inventory (tall, short, left-handed and bespectacled are HolisticBias descriptors), none with a sentiment
DEFAULT_PLACEBO = ("sunburned", "hatless", "musical", "seated", "yawning")
_ARTICLE = re.compile(r"\b([Aa])(n?)(\s+)$")
_AN_EXCEPTIONS = ("eu", "uni", "use", "one")  # "a European", "a unionist": a vowel letter, a consonant sound


def is_template(prompt: str) -> bool:
    return SLOT in prompt


def fill(template: str, word: str) -> str:
    """The template with every ``{group}`` written as ``word``: an article before the slot agreeing ("an Asian", "a
    Black"), a word at the start of a sentence capitalised."""
    out: list[str] = []
    parts = template.split(SLOT)
    for part in parts[:-1]:
        article = _ARTICLE.search(part)
        if article is not None:
            an = word[:1].lower() in "aeiou" and not word.lower().startswith(_AN_EXCEPTIONS)
            part = part[: article.start()] + article[1] + ("n" if an else "") + article[3]
        before = "".join([*out, part]).rstrip()
        start = not before or before[-1] in ".!?\n"
        out += [part, word[:1].upper() + word[1:] if start else word]
    return "".join([*out, parts[-1]])


def template_variants(key: str, template: str, identities: Any, placebo: Sequence[str]) -> list[SlotRow]:
    """A template's slot: one variant per identity term (its adjective form) and per placebo word."""
    rows = []
    for term in identities.terms:
        written = identities.forms_of(term).adjective  # as the set writes it ("Muslim"), as the audit's slots name it
        if identities.group_of(term) == "race_ethnicity" and written.islower():  # "Black" as "Asian", "Hispanic"
            written = written.title()
        rows.append(slot_row(key, SLOT, "identity", written, identities.group_of(term), fill(template, written)))
    return rows + [slot_row(key, SLOT, "placebo", word, None, fill(template, word)) for word in placebo]


class SwapRow(TypedDict):
    """One identity swap of a free prompt, as the audit's pair rows hold it (what the slot writers read)."""

    method: str
    attribute: str
    input_id: str
    source_text: str
    cf_text: str
    source_term: str
    target_term: str
    edits: str


def swap_rows(keys: Sequence[str], prompts: Sequence[str], editor: Any) -> list[SwapRow]:
    """The identity swaps of free prompts as the audit's pair rows (what :func:`~counterfair.analysis.slots.
    slot_texts` reads)."""
    rows: list[SwapRow] = []
    for key, prompt, candidates in zip(keys, prompts, editor.edit(list(prompts)), strict=True):
        for c in candidates:
            rows.append(
                {
                    "method": "swap",
                    "attribute": "identity",
                    "input_id": key,
                    "source_text": prompt,
                    "cf_text": c.text,
                    "source_term": c.meta["source_term"],
                    "target_term": c.meta["target_term"],
                    "edits": json.dumps([e.as_dict() for e in c.edits]),
                }
            )
    return rows


def variants(
    keys: Sequence[str],
    prompts: Sequence[str],
    identities: Any,
    placebo: Any,
    *,
    guard: bool = True,
    packs: Sequence[str] = (),
) -> tuple[pd.DataFrame, list[str]]:
    """Every prompt's variants (the slot table without scores) and the ids of the prompts without a slot (no
    ``{group}`` and no identity term found). ``packs``: swap packs (``gender``, ``names``) whose slots free prompts get
    too, as the classifier audit's texts do."""
    rows: list[Mapping[str, Any]] = []
    free = [(k, p) for k, p in zip(keys, prompts, strict=True) if not is_template(p)]
    for key, prompt in zip(keys, prompts, strict=True):
        if is_template(prompt):
            rows += template_variants(key, prompt, identities, list(placebo.words))
    if free:
        from ...analysis.families import TermSlots
        from ...editors.registry import identity_editor

        editor = identity_editor(identities, guard="spacy" if guard else None)
        swapped = swap_rows([k for k, _ in free], [p for _, p in free], editor)
        if swapped:  # no second placebo text with a capital: each variant is sampled, and the samples cost
            rows += slot_records(TermSlots(identities, placebo, cased=False, nonce=False).write(swapped))
        rows += pack_variants([k for k, _ in free], [p for _, p in free], packs, placebo)
    table = pd.DataFrame(rows, columns=SLOT_COLUMNS[:-1])
    reached = set(table["input_id"])
    return table, [k for k in keys if k not in reached]


def pack_variants(keys: Sequence[str], prompts: Sequence[str], packs: Sequence[str], placebo: Any) -> list[SlotRow]:
    """The slots of free prompts' gender words and first names (:mod:`counterfair.analysis.families`)."""
    from ...analysis.families import slot_writer
    from ...editors.registry import editor_for_pack
    from ...lexicons.attributes import load_swap_set

    rows: list[SlotRow] = []
    for name in packs:
        pack = load_swap_set(name)
        swapped: list[SwapRow] = [{**r, "attribute": name} for r in swap_rows(keys, prompts, editor_for_pack(pack))]
        if swapped:
            rows += slot_records(slot_writer(name, pack, placebo, nonce=False).write(swapped))
    return rows


def placebo_set(spec: str | None, words: Sequence[str] | None, identities: Any) -> Any:
    """The placebo words of the audit: ``words`` (default :data:`DEFAULT_PLACEBO`) from ``spec``'s set (default the
    built-in one of the identities' language; a word it lacks is taken as given, without a frequency)."""
    from ...analysis.placebo import load_placebo

    found = load_placebo(spec or "default", identities)
    if found is None:
        raise ConfigError("an LLM audit needs placebo words: the slot's floor is what they do to the responses")
    chosen = list(words) if words else (list(DEFAULT_PLACEBO) if spec is None else list(found.words))
    if len(chosen) < 2:
        raise ConfigError("an LLM audit needs at least two placebo words (the floor of the disparity is their spread)")
    own = {t.lower() for t in identities.terms}
    clash = [w for w in chosen if w.lower() in own]
    if clash:
        raise ConfigError(f"placebo words {clash} are identity terms of the audit; a placebo word names no group")
    return replace(found, words={w: found.words.get(w) for w in chosen})
