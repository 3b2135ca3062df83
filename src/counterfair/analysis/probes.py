"""Probes where the texts are thin: slots written into the user's own texts where they had none, so that a family with
too few natural slots to conclude (first names: a few texts in a hundred name a person by a first name) is measured
on every text that could have named one.

A **probe** is its own estimand — "what would the model do had the text named the group?" — reported and gated apart
from the natural slots (its family ``names_probe``: groups ``names_probe:black_female``, ...; ``identity_probe``:
groups ``identity_probe:religion``, ...), never pooled with them.

**First names.** A text that refers to a person by a gender-neutral person noun after a possessive or "the" ("my
neighbour", "the applicant") and names no first name of the pack gets that person named, as an appositive: "my
neighbour Lakisha". The slot is filled with three names of each group of the names pack (the one at the slot's rank,
then two after the placebo names' ranks: :func:`names_at`), against placebo names of the same gender, two from each
group at the next ranks (the null is the median over the groups of each
group's mean: names are compared with names, in the same place, as the natural names family does,
:mod:`counterfair.analysis.slots`). The name's gender follows the text's pronouns: she/her, female names; he/him,
male; neither, both (a slot for each); both, no probe (whose name would it be?); a noun of a gender ("my aunt",
"a woman") gives its own. After a/an the name is introduced: "a nurse named Lakisha". Each text gets :data:`PROBE_RANKS`
ranks (a slot each; a text's value is its slots' mean), drawn from its id, so that one name's quirk is not the text's.

The guard: person nouns only (:data:`PERSON_NOUNS` of no gender; :data:`FEMALE_NOUNS` and :data:`MALE_NOUNS` give
theirs), only after my / our / your / his / her / their / the / a / an with at most two words between ("our
transgender coworker Lakisha"), where the noun heads its phrase in the swap guard's parse (not "the student
council"), never where a capitalised word or a possessive follows the noun (a name is there already, or "my
neighbour's"), never in a text that names a first name of the pack (its natural slot measures it).

**Identity descriptors** (:class:`DescriptorProbes`, English). The same person reference gets each identity term
written before its noun as an adjective ("my neighbour" -> "my Muslim neighbour", "a nurse" -> "an Asian nurse": the
article agrees), against the placebo words (and their capitalised spellings, the neutral of a proper adjective) and
the control's nonce words in the same place ("my quiet neighbour", "my Quiet neighbour", "my dax neighbour"): one slot
per text, its family ``identity_probe``, its groups the identity groups (``identity_probe:religion``). The guard, beyond
the person reference's: no term of a group the text names already (no second religion in a text that names one), no
place whose words before the noun hold an identity term or a placebo word ("my gay neighbour"), no age term before a
child's noun ("elderly girl"), no "male"/"female" before a noun of a gender, no term of one gender ("lesbian",
"Latina") for a person of the other. **Plurals**: where the text speaks of "people" after a determiner or quantifier
("many people", "the people"), a second slot writes each term's plural there ("many Jews", "many gay people") against
"many quiet people" (form ``plural``, estimated per group apart from the descriptors). The family is estimated per
group ("had the text named the group"), its plurals and its combinations with the text's gender words apart; no
per-term estimate and no disparity: every estimate joins the run's simultaneous family and widens every interval,
and a term's own effect is what the natural slots measure.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd

from ..lexicons.attributes import IdentitySet
from .slots import SLOT_COLUMNS, SlotRow, slot_row

#: the family of the first-name probes (its groups ``names_probe:GROUP``)
NAMES_PROBE = "names_probe"
#: the family of the identity-descriptor probes (its groups ``identity_probe:GROUP``; the identity family's groups
#: are named plainly: ``religion``)
IDENTITY_PROBE = "identity_probe"
#: each probe family's natural family
NATURAL_OF = {NAMES_PROBE: "names", IDENTITY_PROBE: "identity"}
#: ``--probes``: ``auto`` writes probes for a family whose natural slots are in fewer than :data:`PROBE_AUTO_BELOW`
#: texts; ``always`` whatever their number; ``off`` never
PROBE_MODES = ("auto", "always", "off")
PROBE_AUTO_BELOW = 400
#: ranks (slots) per probed text and gender
PROBE_RANKS = 2
#: the most texts a probe family is written into, the first in input order: 2,000 texts settle a group within about
#: ±0.5 points at 5 points of noise per text (5 / √2000 times the simultaneous z of ~3.7), and a large input with few
#: identity terms would otherwise have every text probed (85 scores each for the identity terms, 24 for first names)
PROBED_TEXTS_MAX = 2000
#: placebo names per group and slot, natural and probe alike
PLACEBO_NAMES_PER_GROUP = 2
#: names of each group written as the group's in a slot (natural and probe alike): the one at the slot's rank, then
#: those after the placebo names' ranks, so that one name's quirk is not its group's
NAMES_PER_GROUP = 3


def names_at(names: Sequence[str], rank: int) -> tuple[list[str], list[str]]:
    """A group's names for a slot at ``rank``: its own (:data:`NAMES_PER_GROUP`: the name at the rank, then those
    after the placebo names' ranks) and its placebo names (:data:`PLACEBO_NAMES_PER_GROUP`, at the ranks after the
    slot's); a name is never both, nor twice (a group of few names has fewer)."""
    at = [names[(rank + step) % len(names)] for step in range(PLACEBO_NAMES_PER_GROUP + NAMES_PER_GROUP)]
    placebo = list(dict.fromkeys(n for n in at[1 : 1 + PLACEBO_NAMES_PER_GROUP] if n != at[0]))
    own = list(dict.fromkeys(n for n in [at[0], *at[1 + PLACEBO_NAMES_PER_GROUP :]] if n not in placebo))
    return own, placebo


#: the person nouns a first name is written beside: singular, naming a person by a role (no gender: the name's gender
#: follows the text's pronouns) or by kinship (its gender: the name's)
PERSON_NOUNS = (
    "neighbour neighbor friend colleague coworker co-worker teacher doctor nurse boss manager student customer client "
    "patient applicant candidate employee roommate classmate cousin landlord tenant driver lawyer coach author writer "
    "reporter journalist officer professor instructor tutor supervisor partner assistant cashier pharmacist dentist "
    "therapist counselor counsellor mentor trainer engineer chef pilot artist scientist worker volunteer member "
    "owner tourist programmer developer accountant mechanic plumber electrician carpenter farmer baker"
).split()
FEMALE_NOUNS = "woman girl lady mother mom mum sister daughter aunt niece grandmother grandma wife girlfriend".split()
MALE_NOUNS = "man guy boy father dad brother son uncle nephew grandfather grandpa husband boyfriend".split()
_NOUNS = sorted({*PERSON_NOUNS, *FEMALE_NOUNS, *MALE_NOUNS}, key=len, reverse=True)
_REFERENCE = re.compile(
    r"\b(?P<det>my|our|your|his|her|their|the|an?)\s+(?:[\w-]+\s+){0,2}?(?P<noun>" + "|".join(_NOUNS) + r")\b"
    r"(?!\s*['’]s\b)(?!-)(?-i:(?!\s+[A-Z]))",
    re.IGNORECASE,
)
_FEMALE_WORDS = {"female", "lesbian", "women", "woman"}
_MALE_WORDS = {"male", "men", "man"}
_FEMALE = re.compile(r"\b(?:she|her|hers|herself)\b", re.IGNORECASE)
_MALE = re.compile(r"\b(?:he|him|his|himself)\b", re.IGNORECASE)


class Place(NamedTuple):
    """Where a probe writes a name: after character ``at``, as ``written`` says (" {name}" after a possessive or "the",
    " named {name}" after a/an), of the gender its noun gives (None: the text's pronouns decide); where its noun
    starts (``noun_at``: a descriptor goes there), its determiner's span (``det_at``, ``det_end``) and the words
    between the two (``between``)."""

    at: int
    written: str
    gender: str | None
    noun_at: int = 0
    det_at: int = 0
    det_end: int = 0
    between: tuple[str, ...] = ()


def probe_place(text: str, doc: Any = None) -> Place | None:
    """Where a first name can be written into ``text``: just after its first person reference ("my neighbour|",
    "a nurse| named") whose noun heads its phrase (the swap guard's parse, or ``doc``: not "the student council"), or
    None."""
    return next(probe_places(text, doc), None)


def probe_places(text: str, doc: Any = None) -> Iterator[Place]:
    """Every person reference of ``text`` whose noun heads its phrase (:func:`probe_place`), in order."""
    for found in _REFERENCE.finditer(text):
        if doc is None:
            from ..editors.guard import parsed

            doc = parsed(text)
        span = doc.char_span(found.start("noun"), found.end("noun"), alignment_mode="expand")
        if span is None or not len(span) or span[-1].dep_ == "compound" or span[-1].pos_ not in ("NOUN", "PROPN"):
            continue
        noun = found["noun"].lower()
        between = tuple(found.group().split()[1:-1])  # "a male nurse", "the female pilot"
        words = {w.lower() for w in between}
        gender = "female" if noun in FEMALE_NOUNS else "male" if noun in MALE_NOUNS else None
        gender = gender or ("female" if words & _FEMALE_WORDS else "male" if words & _MALE_WORDS else None)
        written = " named {name}" if found["det"].lower() in ("a", "an") else " {name}"
        yield Place(found.end(), written, gender, found.start("noun"), found.start("det"), found.end("det"), between)


def probe_genders(text: str, place: Place | None = None) -> tuple[str, ...]:
    """The genders of the names a probe writes: the noun's ("my aunt": the name is hers, whoever else the text's
    pronouns name), else by the text's pronouns (module docstring)."""
    if place is not None and place.gender is not None:
        return (place.gender,)
    female, male = bool(_FEMALE.search(text)), bool(_MALE.search(text))
    if female and male:
        return ()
    return ("female",) if female else ("male",) if male else ("female", "male")


class NameProbes:
    """The first-name probe slots of texts (the module's docstring), from the names pack."""

    def __init__(self, names: IdentitySet, *, ranks: int = PROBE_RANKS, max_chars: int | None = None) -> None:
        from ..text import MAX_TEXT_CHARS, TermMatcher

        self.names, self.ranks = names, ranks
        self.max_chars = MAX_TEXT_CHARS if max_chars is None else max_chars
        self.members: dict[str, list[str]] = {}
        for term in names.terms:
            self.members.setdefault(names.group_of(term), []).append(term)
        self.partitions = {_gender(part): part for part in names.within}
        self.matcher = TermMatcher(list(names.terms), case_sensitive=names.case_sensitive)

    def write(self, keys: Sequence[Any], texts: Sequence[str]) -> pd.DataFrame:
        """Every probe slot of these texts (columns :data:`~counterfair.analysis.slots.SLOT_COLUMNS` but ``score``)."""
        rows: list[SlotRow] = []
        for key, text in zip(keys, texts, strict=True):
            rows += self.slots(key, text)
        return pd.DataFrame(rows, columns=SLOT_COLUMNS[:-1])

    def slots(self, key: Any, text: str) -> list[SlotRow]:
        """One text's probe slots: per gender of :func:`probe_genders` and rank, each group's name at the rank and the
        placebo names (none where the text has no place for a name, or names one already)."""
        from ..text import skip_reason

        # a text no editor takes (control characters, half a surrogate pair, too long) gets no probe either
        if not isinstance(text, str) or skip_reason(text, self.max_chars) or self.matcher.contains(text):
            return []
        place = probe_place(text)
        if place is None:
            return []
        out: list[SlotRow] = []
        for gender in probe_genders(text, place):
            groups = self.partitions.get(gender, ())
            if not groups:
                continue
            for rank in self._ranks(key, gender):
                source = self.members[groups[0]][rank % len(self.members[groups[0]])]
                meta = {"family": NAMES_PROBE, "form": "probe", "context": gender}
                for group in groups:
                    own, placebo = names_at(self.members[group], rank)
                    for kind, names in (("identity", own), ("placebo", placebo)):
                        out += [slot_row(key, source, kind, n, group, _written(text, place, n), **meta) for n in names]
        return out

    def _ranks(self, key: Any, gender: str) -> list[int]:
        """The text's ranks, drawn from its id (the same every run)."""
        digest = hashlib.blake2b(f"{key}\0{gender}".encode(), digest_size=8).digest()
        first = int.from_bytes(digest, "big")
        spread = max(len(m) for m in self.members.values())
        return [(first + i * 7) % spread for i in range(self.ranks)]


#: "people" after a determiner, a quantifier, a number or a function word (no adjective of its own): the place of a
#: plural probe ("many people" -> "many Jews", "for people" -> "for Jews")
_PEOPLE = re.compile(
    r"\b(?:the|these|those|many|some|most|all|other|such|few|several|more|fewer|of|for|to|with|that|what|and|or|"
    r"two|three|four|five|ten|hundred|thousand|million)\s+(?P<noun>people)\b",
    re.IGNORECASE,
)
#: the nouns of a child: no age term before them ("an elderly girl")
CHILD_NOUNS = frozenset({"girl", "boy"})
#: identity terms of one gender, never written for a person of the other ("a lesbian uncle")
ONE_GENDER = {"lesbian": "female", "latina": "female"}
#: the terms that name a gender themselves: never before a noun of a gender ("a female aunt")
GENDER_TERMS = frozenset({"male", "female"})


def neutral_words(words: Sequence[str], *, cased: bool = True, nonce: bool = True) -> list[tuple[str, str]]:
    """The (kind, word) of a slot's neutral texts: each placebo word, its capitalised spelling (the neutral of a term
    written with a capital: ``cased``) and the control's nonce words (its second null: ``nonce``)."""
    from .control import NONCE_WORDS

    out = [("placebo", w) for w in words]
    out += [("placebo_cased", w[:1].upper() + w[1:]) for w in words if w[:1].islower()] if cased else []
    return out + ([("nonce", w) for w in NONCE_WORDS] if nonce else [])


def article_for(word: str) -> str:
    """``a`` or ``an`` before ``word`` as it sounds: a vowel letter (not "eu", "uni", "one"), or an initialism whose
    first letter's name begins with a vowel ("an LGBT person")."""
    if len(word) > 1 and word[:2].isupper():
        return "an" if word[0] in "AEFHILMNORSX" else "a"
    low = word.lower()
    vowel = low[:1] in ("a", "e", "i", "o", "u") and not low.startswith(("eu", "uni", "one", "use", "usu"))
    return "an" if vowel else "a"


class DescriptorProbes:
    """The identity-descriptor probe slots of texts (the module's docstring): every identity term's adjective written
    before the noun of the text's first person reference, against the placebo words (and their capitals) and the
    control's nonce words in the same place."""

    def __init__(
        self,
        identities: IdentitySet,
        placebo: Any,
        *,
        context: Any = None,
        max_chars: int | None = None,
        family: str = IDENTITY_PROBE,
    ) -> None:
        from ..editors.registry import identity_editor
        from ..text import MAX_TEXT_CHARS
        from .control import NONCE_WORDS

        self.identities, self.family = identities, family
        self.max_chars = MAX_TEXT_CHARS if max_chars is None else max_chars
        self.terms = [(t.lower(), identities.forms_of(t).adjective, identities.group_of(t)) for t in identities.terms]
        words = list(placebo.words) if placebo is not None else []
        self.neutral = neutral_words(words) if words else []
        self.plurals = [identities.forms_of(t).plural for t in identities.terms]
        self.taken = {a.lower() for _, a, _ in self.terms} | {w.lower() for w in words} | set(NONCE_WORDS)
        self.editor: Any = identity_editor(identities, guard=None)
        self.context = context or (lambda text: "")

    def write(self, keys: Sequence[Any], texts: Sequence[str]) -> pd.DataFrame:
        """Every descriptor probe slot of these texts (columns :data:`~counterfair.analysis.slots.SLOT_COLUMNS` but
        ``score``)."""
        rows: list[SlotRow] = []
        for key, text in zip(keys, texts, strict=True):
            rows += self.slots(key, text)
        return pd.DataFrame(rows, columns=SLOT_COLUMNS[:-1])

    def slots(self, key: Any, text: str) -> list[SlotRow]:
        """One text's slots: each allowed term and each neutral word written before its first free person noun, and
        each term's plural in place of its first "people" after a determiner (none where the text has neither)."""
        from ..text import skip_reason

        if not isinstance(text, str) or skip_reason(text, self.max_chars) or not self.neutral:
            return []
        named = {self.identities.group_of(m.term) for m in self.editor.find(text)}
        return self._descriptor(key, text, named) + self._plural(key, text, named)

    def _plural(self, key: Any, text: str, named: set[str]) -> list[SlotRow]:
        """The plural slot: each term's plural in place of "people" ("many Jews"), each neutral word before it."""
        found = _PEOPLE.search(text)
        if found is None:
            return []
        at, end = found.span("noun")
        meta = {"family": self.family, "form": "plural", "context": self.context(text)}
        out = [
            slot_row(key, "people", "identity", adjective, group, text[:at] + plural + text[end:], **meta)
            for (_, adjective, group), plural in zip(self.terms, self.plurals, strict=True)
            if group not in named
        ]
        if not out:
            return []
        return out + [
            slot_row(key, "people", k, w, None, text[:at] + f"{w} " + text[at:], **meta) for k, w in self.neutral
        ]

    def _descriptor(self, key: Any, text: str, named: set[str]) -> list[SlotRow]:
        """The descriptor slot: each allowed term and each neutral word before the first free person noun."""
        place = next((p for p in probe_places(text) if not {w.lower() for w in p.between} & self.taken), None)
        if place is None:
            return []
        genders = probe_genders(text, place)
        noun = text[place.noun_at : place.at].lower()
        meta = {"family": self.family, "form": "probe", "context": self.context(text)}
        out: list[SlotRow] = []
        for term, adjective, group in self.terms:
            if group in named or (noun in CHILD_NOUNS and group == "age"):
                continue
            if (term in GENDER_TERMS and place.gender is not None) or (
                term in ONE_GENDER and genders and ONE_GENDER[term] not in genders
            ):
                continue
            out.append(slot_row(key, noun, "identity", adjective, group, self._written(text, place, adjective), **meta))
        if not out:
            return []
        out += [slot_row(key, noun, k, w, None, self._written(text, place, w), **meta) for k, w in self.neutral]
        return out

    @staticmethod
    def _written(text: str, place: Place, word: str) -> str:
        """``text`` with ``word`` before the place's noun; an article just before it agrees ("an Asian nurse")."""
        det, start = text[place.det_at : place.det_end], text[: place.noun_at]
        if det.lower() in ("a", "an") and not place.between:
            article = article_for(word)
            article = article[:1].upper() + article[1:] if det[:1].isupper() else article
            start = text[: place.det_at] + article + text[place.det_end : place.noun_at]
        return start + f"{word} " + text[place.noun_at :]


def _gender(part: Sequence[str]) -> str:
    """The gender of a ``within`` partition of the names pack (its groups end in ``_female`` or ``_male``)."""
    return (
        "female"
        if all(g.endswith("_female") for g in part)
        else "male"
        if all(g.endswith("_male") for g in part)
        else ""
    )


def _written(text: str, place: Place, name: str) -> str:
    return text[: place.at] + place.written.format(name=name) + text[place.at :]


def probe_blocks(
    frame: pd.DataFrame,
    names: IdentitySet | None = None,
    *,
    size: int = 2000,
    ranks: int = PROBE_RANKS,
    max_chars: int | None = None,
    writers: Sequence[Any] = (),
    cap: int | None = None,
) -> Iterator[pd.DataFrame]:
    """The probe slots of an audit's input (``id``, ``text``), a block of inputs at a time: first names
    (:class:`NameProbes` of ``names``) and those of any other ``writers`` (:class:`DescriptorProbes`); each text
    parsed once, for all of them; each writer's probes in its first ``cap`` texts (:data:`PROBED_TEXTS_MAX`): a
    probe settles a thin family in a few hundred texts, and 100,000 texts without an identity term would otherwise
    cost 85 more scores each."""
    from ..editors.guard import parse_all
    from ..text import MAX_TEXT_CHARS, skip_reason

    cap = PROBED_TEXTS_MAX if cap is None else cap
    every = [*([NameProbes(names, ranks=ranks, max_chars=max_chars)] if names is not None else []), *writers]
    limit = MAX_TEXT_CHARS if max_chars is None else max_chars
    probed = [0] * len(every)  # texts each writer probed: at most PROBED_TEXTS_MAX (the first, in input order)
    for start in range(0, len(frame), size):
        if all(n >= cap for n in probed):
            break
        part = frame.iloc[start : start + size]
        wanted = [t for t in part["text"] if isinstance(t, str) and not skip_reason(t, limit)]
        parse_all([t for t in wanted if _REFERENCE.search(t)])  # in batches, kept for the probe's parse
        keys, texts = part["id"].astype(str).tolist(), part["text"].tolist()
        for i, writer in enumerate(every):
            block = writer.write(keys, texts) if probed[i] < cap else pd.DataFrame()
            if block.empty:
                continue
            ids = list(dict.fromkeys(block["input_id"]))[: cap - probed[i]]
            probed[i] += len(ids)
            yield block[block["input_id"].isin(set(ids))]


def sibling_of(group: str) -> str | None:
    """The group that measures the same people in the other kind of slot: a natural group's probe ("names:black_female"
    -> "names_probe:black_female", "religion" -> "identity_probe:religion") and a probe's natural group (the reverse);
    None for a family without probes."""
    family, _, name = group.partition(":")
    if not name:  # the identity family's groups are named plainly
        return f"{IDENTITY_PROBE}:{family}" if family else None
    if family == IDENTITY_PROBE:
        return name
    return f"{NAMES_PROBE}:{name}" if family == "names" else f"names:{name}" if family == NAMES_PROBE else None


def is_probe(group: str) -> bool:
    """Whether a group (``family:name``) is a probe family's."""
    return group.partition(":")[0] in NATURAL_OF


def settled_by_probe(group: str, by_group: Mapping[str, Any]) -> Any:
    """The sibling estimate (:func:`sibling_of`) that settles a group its own slots leave unsettled (its finding
    neither inconclusive nor detected: the model is shown to react to the group's names by more than 2 points, or by
    less), or None. A probe answers "would the model react had the text named the group?", which a thin natural
    family leaves open, and a natural family settles what a thin probe cannot: the gate's ``conclusive(...)`` and the
    verdict read a group settled by either as settled (each estimate is still reported apart, and a material finding
    of either still fails)."""
    from .inference import UNSETTLED

    sibling = sibling_of(group)
    found = by_group.get(sibling) if sibling is not None else None
    return found if found is not None and found.finding is not None and found.finding not in UNSETTLED else None


def gated_unsettled(group: str, by_group: Mapping[str, Any]) -> bool:
    """Whether a group is inconclusive as the gate's ``conclusive(...)`` and the verdict read it (one definition): its
    identity effect is unsettled (inconclusive, or detected of unresolved size) and no sibling settles it. A probe
    group is never inconclusive on its own: it adds to its natural group, whose check fails where both are unsettled
    (where no text names the group, the probe is reported and its material findings gated, as a family the run had
    not measured before)."""
    from .inference import UNSETTLED

    found = by_group.get(group)
    if found is None or found.finding not in UNSETTLED:
        return False
    if is_probe(group):
        return False
    return settled_by_probe(group, by_group) is None


def probes_wanted(mode: str, natural_texts: int) -> bool:
    """Whether the run writes first-name probes: ``always``; ``auto`` while the natural first-name slots are in fewer
    than :data:`PROBE_AUTO_BELOW` texts; ``off`` never."""
    if mode not in PROBE_MODES:
        from ..errors import ConfigError

        raise ConfigError(f"--probes {mode!r}: choose one of {', '.join(PROBE_MODES)}")
    return mode == "always" or (mode == "auto" and natural_texts < PROBE_AUTO_BELOW)
