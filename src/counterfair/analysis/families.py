"""The slot texts of every family the audit measures (:mod:`counterfair.analysis.slots`): from the pair rows of a swap
pack's generation, each slot written with every term of its set and with placebo words of its kind.

* :class:`TermSlots` — an identity set (the audit's identity terms, or a pack such as ``nationality``): the placebo
  words written into the occurrences the swaps replaced, in the same grammatical form; for a set whose terms include
  proper adjectives (Muslim, LGBT), each placebo word also with a capital in the slots where case shows
  ("My Tall neighbour"); each slot's forms (adjective, noun, plural) and the gender words its text names;
* :class:`NameSlots` — a names pack: three names of each group of the source's gender (the swap's, at the source's
  rank, and two after the placebo names' ranks: one name's quirk is not its group's) against placebo names of the same
  gender, two from each group at the ranks after the source's (the null: the median over groups of each group's
  placebo names);
* :class:`GenderSlots` — a gender pack: the text in its own gender and the other (the binary swap), against the text
  in neutral words (:meth:`~counterfair.editors.gender.GenderSwapEditor.placebo_variants`); texts naming both genders
  are no slot (whose gender would the swap compare?).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pandas as pd

from ..editors.registry import swaps_identities
from ..language_registry import get_language
from ..lexicons.attributes import GenderSet, IdentitySet
from .probes import names_at, neutral_words
from .slots import GENDER_WORDS, IDENTITY, NAMES, SLOT_COLUMNS, SlotRow, slot_row


def family_of(attribute: str, swap_set: IdentitySet | GenderSet) -> str:
    """The family a swap pack's slots are measured as: ``identity`` for the audit's identity set, ``gender_words``
    for the gender pack, ``names`` for the names pack (``gender_words:NAME``, ``names:NAME`` for a user's), the pack's
    name for any other identity pack."""
    if attribute == "identity":
        return IDENTITY
    if isinstance(swap_set, GenderSet) or swap_set.info.get("subject") == "gender":  # Spanish's gender words: terms
        own = swap_set.name == get_language(swap_set.info.get("language")).gender_pack
        return GENDER_WORDS if own else f"{GENDER_WORDS}:{swap_set.name}"
    if swap_set.within:  # first names: a partition by gender within which names swap
        return NAMES if swap_set.name == "names" else f"{NAMES}:{swap_set.name}"
    return swap_set.name


Row = TypeVar("Row", bound=Mapping[str, Any])


def _rows_of(rows: Sequence[Row], attribute: str) -> list[Row]:
    return [
        r
        for r in rows
        if swaps_identities(r["method"]) and r.get("source_term") and (r.get("attribute") or "identity") == attribute
    ]


def gender_context(language: str | None = None) -> Callable[[str], str]:
    """The gender words a text names: ``female``, ``male``, ``female+male`` or "", by the language's gender pack
    (its entry's ``gender_pack``: English's gender words and pronouns; a pack of identity kind whose groups are
    ``female`` and ``male``, as Spanish's); a language without one: always ""."""
    from ..lexicons.attributes import load_swap_set

    name = get_language(language).gender_pack
    if name is None:
        return lambda text: ""
    pack = load_swap_set(name)
    if isinstance(pack, IdentitySet):
        from ..editors.registry import identity_editor

        editor: Any = identity_editor(pack, guard=None)
        return lambda text: "+".join(sorted({pack.group_of(m.term) for m in editor.find(text)}))
    from ..editors.gender import FEMALE_PRONOUNS, MALE_PRONOUNS, gender_matcher

    matcher = gender_matcher(pack)

    def side(word: str) -> str:
        low = word.lower()
        if low in MALE_PRONOUNS:
            return "male"
        if low in FEMALE_PRONOUNS:
            return "female"
        return pack.group_of_word(word)

    def context(text: str) -> str:
        return "+".join(sorted({side(m.text) for m in matcher.find(text)}))

    return context


class TermSlots:
    """The slots of an identity set's swaps (see the module's docstring). ``editor`` and ``matches``: the placebo
    swap (:func:`~counterfair.analysis.placebo.placebo_editor`) and the occurrences the swaps replaced
    (:func:`~counterfair.analysis.placebo.swapped_matches`), where the caller has them already."""

    def __init__(
        self,
        identities: IdentitySet,
        placebo: Any,
        *,
        attribute: str = "identity",
        family: str = IDENTITY,
        cased: bool = True,
        context: Callable[[str], str] | None = None,
        editor: Any = None,
        nonce: bool = True,
    ) -> None:
        from .placebo import placebo_editor

        self.identities, self.placebo, self.attribute, self.family = identities, placebo, attribute, family
        self.editor = editor if editor is not None else placebo_editor(identities, placebo)
        proper = any(identities.forms_of(t).proper for t in identities.terms)
        self.cased = cased and proper and get_language(identities.language).proper_adjectives
        # the control's second null (analysis.control): a language whose words need their forms written has none yet
        self.nonce = nonce and not get_language(identities.language).inflected
        self.context = context or (lambda text: "")

    def written(self, term: str) -> str:
        """How a term is named in the slot table: its adjective ("Muslim": a capital marks a proper adjective)."""
        return self.identities.forms_of(term).adjective

    def write(self, rows: Sequence[Mapping[str, Any]], matches: Mapping[Any, list[Any]] | None = None) -> pd.DataFrame:
        """The texts of every slot (columns :data:`SLOT_COLUMNS` but ``score``): for each swap's (input, source term),
        the original, each swap's text (its target term; not a term the text names elsewhere, whose swap exchanges the
        two occurrences and so keeps the source term in the text), and each placebo word written into the occurrences
        the swaps replaced."""
        from ..editors.swap import SwapRefused
        from .placebo import swapped_matches

        mine = _rows_of(rows, self.attribute)
        if matches is None:
            matches = swapped_matches(mine, self.editor, self.identities, self.attribute)
        out: list[SlotRow] = []
        meta: dict[tuple[Any, str], dict[str, str]] = {}
        group = self.identities.group_of
        for row in mine:
            key, source = row["input_id"], str(row["source_term"])
            slot = (key, source.lower())
            found = matches.get(key, [])
            if slot not in meta:
                text = row["source_text"]
                form, listed = self._style(text, found, source)
                meta[slot] = {"family": self.family, "form": form, "context": self.context(text)}
                out.append(slot_row(key, source, "identity", self.written(source), group(source), text, **meta[slot]))
                for kind, word in self._placebo_words(source, listed):
                    try:
                        new, _ = self.editor.swap(text, found, source, word)
                    except SwapRefused:  # French/German: an occurrence the word cannot be written into
                        continue
                    if new != text:
                        out.append(slot_row(key, source, kind, word, self._placebo_group(word), new, **meta[slot]))
            target = str(row["target_term"])
            if target.lower() in {m.term.lower() for m in found}:
                continue  # a term the text names elsewhere: the swap exchanges the two, the slot would keep the source
            out.append(
                slot_row(key, source, "identity", self.written(target), group(target), row["cf_text"], **meta[slot])
            )
        return _deduped(out)

    def _placebo_group(self, word: str) -> str | None:
        """A placebo word's group: none (it names no group)."""
        return None

    def _placebo_words(self, source: str, listed: bool) -> list[tuple[str, str]]:
        """The (kind, word) of each placebo text of a slot of ``source``."""
        return neutral_words(list(self.placebo.words), cased=self.cased and listed, nonce=self.nonce)

    def _style(self, text: str, found: Sequence[Any], source: str) -> tuple[str, bool]:
        """The forms the source term's occurrences are written in ("adjective", "plural", "+"-joined) and whether one
        is written as listed (mid-sentence: where a capital shows)."""
        plan = getattr(self.editor, "occurrences", None)
        if plan is None or not found:
            return "", False
        styles = [o[4] for o in plan(text, found) if o[3] == source.lower() and isinstance(o[4], tuple)]
        forms = "+".join(sorted({str(s[1]) for s in styles}))
        return forms, any(s[0] == "listed" for s in styles)


def _deduped(rows: list[SlotRow]) -> pd.DataFrame:
    """The slot rows as a table, a placebo text that repeats one already in its slot (a capital that cannot show, a
    placebo variant equal to another) left out."""
    table = pd.DataFrame(rows, columns=SLOT_COLUMNS[:-1])
    if table.empty:
        return table
    placebo = table["kind"] != "identity"
    repeated = table.duplicated(["input_id", "family", "source_term", "text"]) & placebo
    return table[~repeated].reset_index(drop=True)


class NameSlots(TermSlots):
    """The slots of a names pack's swaps: placebo names instead of placebo words (see the module's docstring)."""

    def __init__(self, names: IdentitySet, *, attribute: str, family: str = NAMES) -> None:
        from ..editors.registry import identity_editor

        super().__init__(
            names, None, attribute=attribute, family=family, cased=False, editor=identity_editor(names, guard=None)
        )
        self.members: dict[str, list[str]] = {}
        for term in names.terms:
            self.members.setdefault(names.group_of(term), []).append(term)

    def written(self, term: str) -> str:
        return term

    def slot_names(self, source: str) -> tuple[list[str], list[str]]:
        """The names of a slot of ``source`` beyond the swaps' (which write the name at its rank in each group of its
        gender): each group's further own names and its placebo names
        (:func:`~counterfair.analysis.probes.names_at`)."""
        group = self.identities.group_of(source)
        own = [t.lower() for t in self.members.get(group, [])]
        rank = own.index(source.lower()) if source.lower() in own else 0
        allowed = next((part for part in self.identities.within if group in part), tuple(self.members))
        more: list[str] = []
        placebo: list[str] = []
        for g in allowed:
            mine, others = names_at(self.members.get(g, []), rank) if self.members.get(g) else ([], [])
            more += mine[1:]  # the first is the swap's
            placebo += others
        return more, placebo

    def placebo_names(self, source: str) -> list[str]:
        """Names of the source's gender, two from each group, at the ranks after the source's (the swaps take the names
        at its rank)."""
        return self.slot_names(source)[1]

    def _placebo_words(self, source: str, listed: bool) -> list[tuple[str, str]]:
        more, placebo = self.slot_names(source)
        return [("placebo", name) for name in placebo] + [("identity", name) for name in more]

    def _placebo_group(self, word: str) -> str | None:
        """A placebo name's group (the neutral is the median over groups of each group's placebo names)."""
        return self.identities.group_of(word)


class GenderSlots:
    """The slots of a gender pack's swaps (see the module's docstring): one slot per text that names one gender."""

    def __init__(self, pack: GenderSet, *, attribute: str, family: str = GENDER_WORDS) -> None:
        from ..editors.gender import GenderSwapEditor

        self.attribute, self.family = attribute, family
        self.editor = GenderSwapEditor(pack)

    def write(self, rows: Sequence[Mapping[str, Any]], matches: Mapping[Any, list[Any]] | None = None) -> pd.DataFrame:
        """The texts of every slot: the original under its gender (``female`` or ``male``), its binary swap under the
        other, its neutral variants as placebo words (``neutral``, ``cousin``, ...)."""
        out: list[SlotRow] = []
        forms: dict[Any, str] = {}
        for row in _rows_of(rows, self.attribute):
            source, key = str(row["source_term"]), row["input_id"]
            if source not in ("female", "male"):
                continue  # both genders named: no one slot to compare
            if key not in forms:
                text = row["source_text"]
                forms[key] = self.editor.forms(text)
                meta = {"family": self.family, "form": forms[key], "context": ""}
                out.append(slot_row(key, source, "identity", source, source, text, **meta))
                for word, new in self.editor.placebo_variants(text):
                    out.append(slot_row(key, source, "placebo", word, None, new, **meta))
            if row["target_term"] in ("female", "male"):
                target = str(row["target_term"])
                meta = {"family": self.family, "form": forms[key], "context": ""}
                out.append(slot_row(key, source, "identity", target, target, row["cf_text"], **meta))
        return _deduped(out)


def slot_writer(
    attribute: str,
    swap_set: IdentitySet | GenderSet,
    placebo: Any,
    *,
    context: Callable[[str], str] | None = None,
    nonce: bool = True,
) -> TermSlots | GenderSlots:
    """The writer of a swap pack's slots (``identity``: the audit's identity set): gender words, first names, or
    identity terms with ``placebo``'s words (and, with ``nonce``, the control's nonce words: an LLM audit, whose every
    variant is a request, leaves them out)."""
    family = family_of(attribute, swap_set)
    if isinstance(swap_set, GenderSet):
        return GenderSlots(swap_set, attribute=attribute, family=family)
    if swap_set.within:
        return NameSlots(swap_set, attribute=attribute, family=family)
    return TermSlots(swap_set, placebo, attribute=attribute, family=family, context=context, nonce=nonce)
