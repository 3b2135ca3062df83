"""Gender swaps with English grammar: the binary swap (he <-> she, her -> his or him, man <-> woman, Mr -> Ms) and
the non-binary direction (she -> they with the verb made to agree, woman -> person).

The word pairs come from a gender pack (``resources/identities/gender.yaml``, a
:class:`~counterfair.lexicons.attributes.GenderSet`); the pronouns follow the pack's grammar rules ``en-pronouns``,
decided per occurrence on spaCy's parse:

* ``her`` is a possessive determiner ("her book" -> "his book") or an object ("saw her" -> "saw him"); ``his``
  before a noun becomes "her", standing alone ("the book is his") "hers".
* Towards "they": he/she -> they, him/her -> them, his/her (determiner) -> their, his/hers (alone) -> theirs,
  himself/herself -> themselves; the finite verb of a clause whose subject became "they" agrees ("she is" -> "they
  are", "he was" -> "they were", "she runs" -> "they run", "she's" -> "they're"), and so do verbs that share that
  subject ("she sings and dances" -> "they sing and dance") and relative clauses on it.

In the binary swap a person's first name changes too, to the name at the same rank of the other gender in the names
pack's group of the same association ("Jennifer and her husband" -> "Kenneth and his wife"); a first name the pack
lacks ("Emily") leaves the binary variant out (``swap:unknown_name:Emily``), never "Emily and his wife".

A text gets a status instead of a sentence where the swap cannot be written: a word whose meaning holds a gender
("lesbian") leaves the binary swap out (``swap:gender_specific:lesbian``, not "my lesbian uncle"); a word without a
neutral form (uncle, nun) leaves the non-binary variant out (``neutral:no_form:uncle``), and so do pronouns of both
genders ("he told her" -> "they told them" would lose who is who: ``neutral:ambiguous_reference``); without the
parser, pronouns that need one ("her", "his", a subject pronoun towards "they") are not swapped at all
(``needs_parser``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from ..errors import ConfigError, ModelNotAvailable
from ..jsontypes import JSONObject
from ..lexicons.attributes import GenderSet, IdentitySet, load_swap_set
from ..progress import NullProgress, ProgressHook
from ..records import Candidate, Edit
from ..text import TEXT_FOLDING, TermMatcher, match_case
from .base import EditorBase
from .swap import splice

MALE_PRONOUNS = ("he", "him", "his", "himself")
FEMALE_PRONOUNS = ("she", "her", "hers", "herself")


def gender_matcher(gender: GenderSet) -> TermMatcher:
    """Every word that makes a text reference the pack's genders: its word pairs and the English pronouns."""
    return TermMatcher([*gender.terms, *MALE_PRONOUNS, *FEMALE_PRONOUNS])


# (masculine, feminine, neutral) where the form does not depend on the parse
_FIXED = {"he": ("she", "they"), "she": ("he", "they"), "him": ("her", "them"), "hers": ("his", "theirs")}
_FIXED |= {"himself": ("herself", "themselves"), "herself": ("himself", "themselves")}
# the finite verb after a singular subject -> after "they"
_PLURAL_VERB = {"is": "are", "was": "were", "has": "have", "does": "do", "'s": "'re", "\u2019s": "\u2019re"}
_HAVE_CONTRACTION = {"'s": "'ve", "\u2019s": "\u2019ve"}
DIRECTIONS = ("swap", "neutral")
_TITLES = frozenset("dr dr. prof prof. professor rev rev. sgt sgt. capt capt. coach".split())
#: gendered titles: in a placebo variant they take the pack's neutral form (Mx), never a person noun
GENDER_TITLES = frozenset("mr mr. mrs mrs. ms ms. miss sir madam".split())
#: the neutral person nouns (singular, plural) that the placebo variants of a text put in place of its gendered nouns
#: ("my wife" -> "my cousin"), beside the pack's own neutral forms ("my spouse"): words that name no gender or group
#: and carry no sentiment of their own ("friend" did: VADER scores it +2.2, which made both genders "material"), nor
#: a context of their own ("neighbour" is one: a model reacting to a text that names a neighbour reacted to the control)
PLACEBO_NOUNS = (("cousin", "cousins"), ("roommate", "roommates"), ("colleague", "colleagues"))


#: texts parsed ahead at once by the gender swap (fewer than the parses the guard keeps, so none is dropped before
#: it is used)
PARSE_AHEAD = 1024
_NEEDS_PARSE = re.compile(r"\b(?:her|his|he|she)\b", re.IGNORECASE)


def _parse(text: str) -> Any:
    from .guard import parsed

    return parsed(text)


def _token_at(doc: Any, start: int, end: int) -> Any:
    span = doc.char_span(start, end, alignment_mode="expand")
    return span[0] if span is not None and len(span) else None


def _possessive(token: Any) -> bool:
    """A determiner "her"/"his" before its noun ("her book"), not an object ("saw her") or a standalone "his"."""
    return token.dep_ == "poss" or (token.tag_ == "PRP$" and token.head.i > token.i)


def _finite_verbs(subject: Any) -> list[Any]:
    """The verbs that must agree with ``subject``: its clause's finite verb (the first auxiliary, or the verb when
    it is finite) and those of verbs coordinated with it that have no subject of their own."""
    out: list[Any] = []
    verb = subject.head
    todo = [verb]
    while todo:
        head = todo.pop()
        chain = sorted([c for c in head.children if c.dep_ in ("aux", "auxpass")] + [head], key=lambda t: t.i)
        finite = next((t for t in chain if t.tag_ in ("VBZ", "VBD", "VBP", "MD") or _misread_verb(t)), None)
        if finite is not None:
            out.append(finite)
        for child in head.children:
            verb_like = child.pos_ in ("VERB", "AUX") or _misread_verb(child)
            own_subject = any(c.dep_ in ("nsubj", "nsubjpass") for c in child.children)
            if child.dep_ == "conj" and verb_like and not own_subject:
                todo.append(child)
    return out


def _first_names(doc: Any, titles: Sequence[str]) -> list[Any]:
    """Proper nouns that name a person by first name: the first word of a PERSON entity, or a proper noun that is
    a subject, object or possessor ("Emily said", "met Emily", "Emily's"), unless a title stands before it ("Mr.
    Hayes": a surname, which keeps)."""
    title_words = {t.lower() for t in titles} | _TITLES
    out = []
    for token in doc:
        if token.pos_ != "PROPN" or not token.text[:1].isupper() or not token.is_alpha:
            continue
        previous = doc[token.i - 1] if token.i else None
        following = doc[token.i + 1] if token.i + 1 < len(doc) else None
        full_name = following is not None and following.pos_ == "PROPN"
        if previous is not None and previous.text.lower() in title_words and not full_name:
            continue  # "Mr. Hayes" (but "Dr. Emily Stone" has a first name)
        if previous is not None and previous.pos_ == "PROPN" and previous.text.lower() not in title_words:
            continue  # the second word of "Emily Stone"
        entity_start = token.ent_type_ == "PERSON" and token.ent_iob_ == "B"
        role = token.ent_type_ in ("", "PERSON") and token.dep_ in (
            "nsubj",
            "nsubjpass",
            "dobj",
            "pobj",
            "poss",
            "conj",
        )
        if entity_start or role:
            out.append(token)
    return out


def _misread_verb(token: Any) -> bool:
    """A verb coordinated with another verb that the tagger read as a plural noun ("she runs and swims")."""
    return token.dep_ == "conj" and token.tag_ == "NNS" and token.head.pos_ in ("VERB", "AUX")


def _plural_form(verb: Any) -> str | None:
    """``verb`` as it reads after "they", or None when it already does ("can", "said", "are")."""
    low = verb.text.lower()
    if low in _HAVE_CONTRACTION:  # "she's been" (has) -> "they've been"; "she's tired" (is) -> "they're tired"
        after = verb.doc[verb.i + 1].text.lower() if verb.i + 1 < len(verb.doc) else ""
        return _HAVE_CONTRACTION[low] if after in ("been", "got", "gotten", "had") else _PLURAL_VERB[low]
    if low in _PLURAL_VERB:
        return _PLURAL_VERB[low]
    if verb.tag_ == "VBZ" or _misread_verb(verb):
        return _base_form(verb.text)
    return None


def _base_form(word: str) -> str:
    """The base form of a third-person singular verb: runs -> run, tries -> try, watches -> watch, goes -> go."""
    low = word.lower()
    if low.endswith("ies") and len(low) > 4:
        base = word[:-3] + "y"
    elif low.endswith(("ches", "shes", "sses", "xes", "zzes", "oes")):
        base = word[:-2]
    elif low.endswith("s") and not low.endswith("ss"):
        base = word[:-1]
    else:
        base = word
    return base


def word_form(word: str) -> str:
    """The form of one gendered word: ``pronoun``, ``title`` (Mr, Ms), ``plural`` (men, wives) or ``noun``."""
    low = word.lower()
    if low in MALE_PRONOUNS or low in FEMALE_PRONOUNS:
        return "pronoun"
    if low in GENDER_TITLES:
        return "title"
    plural = low.endswith(("men", "people", "children")) or (low.endswith("s") and not low.endswith("ss"))
    return "plural" if plural else "noun"


class GenderSwapEditor(EditorBase):
    """Two variants per text that mentions gender: every masculine word made feminine and every feminine one
    masculine (``swap``), and every gendered word made neutral (``neutral``), each only where it can be written.

    Candidates carry ``source_term`` (``male``, ``female`` or ``mixed``: what the text mentions) and ``target_term``
    (``female``, ``male``, ``swapped`` or ``neutral``). ``last_notes`` holds, per text of the last call, why a variant
    was left out; ``last_reasons`` why a text got no variant at all."""

    name: ClassVar[str] = "swap"

    def __init__(self, gender: GenderSet | str = "gender", *, directions: Sequence[str] = DIRECTIONS) -> None:
        loaded = gender if isinstance(gender, GenderSet) else load_swap_set(gender)
        if not isinstance(loaded, GenderSet):
            raise ConfigError(f"{gender!r} is not a gender pack (kind: gender)")
        if loaded.grammar != "en-pronouns":
            raise ConfigError(f"gender pack {loaded.name}: unknown grammar {loaded.grammar!r}; known: en-pronouns")
        bad = [d for d in directions if d not in DIRECTIONS]
        if bad or not directions:
            raise ConfigError(f"unknown gender direction(s) {bad}; use {', '.join(DIRECTIONS)}")
        self.gender = loaded
        self.directions = tuple(directions)
        self.names = load_swap_set(loaded.names) if loaded.names else None
        self._specific = TermMatcher(loaded.gender_specific) if loaded.gender_specific else None
        self._names = {n: n for n in self.names.terms} if isinstance(self.names, IdentitySet) else {}
        self._matcher = gender_matcher(loaded)
        self.last_notes: list[list[str]] = []
        self.last_reasons: list[str | None] = []
        self.last_counts: list[tuple[int, int]] = []

    def params(self) -> JSONObject:
        return {
            "text_folding": TEXT_FOLDING,
            "pack": self.gender.name,
            "version": self.gender.info.get("version"),
            "grammar": self.gender.grammar,
            "directions": list(self.directions),
            "words": [list(r) for r in self.gender.rows],
        }

    def group_of(self, word: str) -> str:
        low = word.lower()
        if low in MALE_PRONOUNS:
            return "male"
        if low in FEMALE_PRONOUNS:
            return "female"
        return self.gender.group_of_word(word)

    # ------------------------------------------------------------------ one text

    def rewrite(
        self, text: str, direction: str, *, noun: tuple[str, str] | None = None
    ) -> tuple[str | None, tuple[Edit, ...], str | None]:
        """``text`` with every gendered word moved in ``direction``; (None, (), note) where it cannot be written.
        ``noun`` (neutral only): the (singular, plural) person noun every gendered noun becomes instead of the pack's
        neutral form (a placebo variant: :meth:`placebo_variants`)."""
        matches = self._matcher.find(text)
        pronouns = {self.group_of(m.text) for m in matches if m.text.lower() in MALE_PRONOUNS + FEMALE_PRONOUNS}
        specific = self._specific.find(text) if self._specific is not None and direction == "swap" else []
        if specific:
            return None, (), f"swap:gender_specific:{specific[0].text.lower()}"  # not "my lesbian uncle"
        if direction == "neutral" and len(pronouns) == 2:
            return None, (), "neutral:ambiguous_reference"  # "he told her" -> "they told them": who is who?
        doc = None
        needs_parse = any(m.text.lower() in ("her", "his") for m in matches) or (
            direction == "neutral" and any(m.text.lower() in ("he", "she") for m in matches)
        )
        if needs_parse or (direction == "swap" and self._names):
            try:
                doc = _parse(text)
            except ModelNotAvailable:
                if needs_parse:
                    return None, (), "needs_parser"
        changes: dict[tuple[int, int], str] = {}
        if direction == "swap" and doc is not None:  # a person's first name changes with the pronouns
            for token in _first_names(doc, self.gender.terms):
                other = self._other_name(token.text)
                if other is None:
                    return None, (), f"swap:unknown_name:{token.text}"
                changes[(token.idx, token.idx + len(token.text))] = match_case(token.text, other)
        for match in matches:
            new = self._word(match.text, direction, doc, match.start, match.end)
            if noun is not None and direction == "neutral" and word_form(match.text) in ("noun", "plural"):
                new = noun[word_form(match.text) == "plural"]
            if new is None:
                return None, (), f"{direction}:no_form:{match.text.lower()}"
            changes[(match.start, match.end)] = match_case(match.text, new)
            if direction == "neutral" and match.text.lower() in ("he", "she") and doc is not None:
                changes |= self._agreement(doc, match.start, match.end)
        new, edits = splice(text, [(a, b, w) for (a, b), w in changes.items()])
        return new, edits, None

    def _word(self, word: str, direction: str, doc: Any, start: int, end: int) -> str | None:
        low = word.lower()
        k = 1 if direction == "neutral" else 0
        if low in _FIXED:
            return _FIXED[low][k]
        if low in ("her", "his"):
            token = _token_at(doc, start, end)
            owner = token is not None and _possessive(token)
            if low == "her":
                return ("his", "their")[k] if owner else ("him", "them")[k]
            return ("her", "their")[k] if owner else ("hers", "theirs")[k]
        return self.gender.neutral_of(word) if k else self.gender.other_of(word)

    @staticmethod
    def _agreement(doc: Any, start: int, end: int) -> dict[tuple[int, int], str]:
        subject = _token_at(doc, start, end)
        out: dict[tuple[int, int], str] = {}
        subjects = [subject] if subject is not None and subject.dep_ in ("nsubj", "nsubjpass") else []
        # a relative clause on the pronoun ("she, who is ...") agrees with it too
        if subject is not None:
            for clause in subject.children:
                if clause.dep_ == "relcl":
                    subjects += [c for c in clause.children if c.dep_ in ("nsubj", "nsubjpass")]
        for subj in subjects:
            for verb in _finite_verbs(subj):
                form = _plural_form(verb)
                if form is not None:
                    out[(verb.idx, verb.idx + len(verb.text))] = match_case(verb.text, form)
        return out

    def placebo_variants(self, text: str) -> list[tuple[str, str]]:
        """The text in neutral words, as (placebo word, text) pairs: the pack's neutral forms ("they", "spouse") and
        each of :data:`PLACEBO_NOUNS` in place of the gendered nouns (pronouns always become they/them/their, titles
        the pack's neutral title); distinct texts only, none where the text cannot be made neutral."""
        out: list[tuple[str, str]] = []
        seen = {text}
        for word, noun in (("neutral", None), *((n[0], n) for n in PLACEBO_NOUNS)):
            new, _, _ = self.rewrite(text, "neutral", noun=noun)
            if new is not None and new not in seen:
                seen.add(new)
                out.append((word, new))
        return out

    def forms(self, text: str) -> str:
        """The forms the text's gendered words take: ``pronoun``, ``noun``, ``plural``, ``title``, "+"-joined."""
        return "+".join(sorted({word_form(m.text) for m in self._matcher.find(text)}))

    def _other_name(self, name: str) -> str | None:
        """The name at the same rank in the other gender's group of the same association (Patricia, the first
        white_female name, -> William, the first white_male one), or None for a name the names pack lacks."""
        names = self.names
        if not isinstance(names, IdentitySet) or name not in self._names:
            return None
        group = names.group_of(name)
        other = group.replace("female", "\0").replace("male", "female").replace("\0", "male")
        own = [t for t in names.terms if names.group_of(t) == group]
        theirs = [t for t in names.terms if names.group_of(t) == other]
        return theirs[own.index(name) % len(theirs)] if theirs else None

    # ------------------------------------------------------------------ the editor

    def _parse_ahead(self, texts: Sequence[str]) -> None:
        """Parse, in batches (``nlp.pipe``), the texts of the next stretch that :meth:`rewrite` will parse: those with
        a gendered word (a first name changes with them; her/his and he/she read their role off the parse). One at a
        time, ``nlp(text)`` was half of a large audit's time (#86); the parses are kept for the guard and the
        grammar, which ask for the same texts."""
        from .guard import parse_all

        wanted = [t for t in texts if (self._names or _NEEDS_PARSE.search(t)) and self._matcher.contains(t)]
        if wanted:
            with contextlib.suppress(ModelNotAvailable):  # each text's rewrite says "needs_parser" where it must
                parse_all(wanted)

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start("gender swap", len(texts))
        out: list[list[Candidate]] = []
        self.last_notes, self.last_reasons, self.last_counts = [], [], []
        for start, text in enumerate(texts):
            if start % PARSE_AHEAD == 0:
                self._parse_ahead(texts[start : start + PARSE_AHEAD])
            found = self._matcher.find(text)
            groups = {self.group_of(m.text) for m in found}
            source = groups.pop() if len(groups) == 1 else "mixed"
            variants: list[Candidate] = []
            notes: list[str] = []
            for direction in self.directions if found else ():
                new, edits, note = self.rewrite(text, direction)
                if note is not None:
                    notes.append(note)
                if new is None or new == text:
                    continue
                target = "neutral" if direction == "neutral" else {"male": "female", "female": "male"}.get(source)
                meta = {"source_term": source, "target_term": target or "swapped", "direction": direction}
                variants.append(self.candidate(new, edits=edits, meta=meta))
            out.append(variants)
            self.last_notes.append(notes)
            self.last_reasons.append(
                None if variants else ("no_gender_term" if not found else (notes or ["unchanged"])[0])
            )
            self.last_counts.append((len(found), 0))
            hook.advance(1)
        return out
