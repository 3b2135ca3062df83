"""Identity-term swap Φ_A (paper 001 §3.2), with the guard that keeps non-identity uses untouched
(:mod:`counterfair.editors.guard`).

Φ_{a,a'} swaps every ``a`` with ``a'`` and vice versa; Φ_A(x) is the union over pairs of distinct terms. For a
text mentioning ``a``, that is one variant per other term ``a'`` of the set, each recording its direction
(``a`` -> ``a'``). A text mentioning two terms ``a`` and ``b`` also yields Φ_{a,b}(x), which swaps both.

**Guard.** Some identity words have common other senses ("a black car", "the White House"): for the terms of the
set's ``ambiguous`` list the guard (:class:`~counterfair.editors.guard.IdentityGuard`, its rule written there) keeps an
occurrence unless a parse shows it is not about people. The editor's ``params()`` record the rule's version and its
table (``guard_rule``: ``guard/3 wordnet-3.0-nouns/1``).

Unambiguous terms (religions, orientations, nationalities) are always swapped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import asdict
from functools import lru_cache, partial
from typing import Any, ClassVar

from ..errors import ConfigError, ModelNotAvailable
from ..jsontypes import JSONObject
from ..language_registry import get_language
from ..lexicons.attributes import IdentitySet, load_identity_set
from ..progress import NullProgress, ProgressHook
from ..records import Candidate, Edit, paused_gc
from ..text import TEXT_FOLDING, TermMatch, TermMatcher, indefinite_article, match_case
from .base import EditorBase
from .guard import IdentityGuard, parse_all, parsed

# before an identity adjective, these make it a noun when nothing noun-like follows ("a Chinese.", "every Muslim who")
_SINGULAR_DETERMINERS = frozenset("a an one every each another this that any no".split())
_PLURAL_VERBS = frozenset("are were have aren't weren't haven't do don't".split())  # "the Chinese are" -> plural
_AFTER_A_NOUN = frozenset(
    "is was who whom that which has had will would can could should must does did isn't wasn't doesn't didn't "
    "from in at with on by for of to".split()
)
_NEXT_WORD = re.compile(r"\s*([A-Za-z][A-Za-z']*)")
_OPENERS = " \t\"'\u201c\u2018([*"


def _modifies_a_noun(text: str, start: int, end: int) -> bool:
    """Whether the word at ``start:end`` modifies a noun after it ("a Muslim woman", "a Muslim community leader")
    rather than being one ("met a Muslim yesterday"), by spaCy's parse; without the model, assume it modifies."""
    try:
        doc = parsed(text)
    except ModelNotAvailable:
        return True
    span = doc.char_span(start, end, alignment_mode="expand")
    if span is None or not len(span):
        return True
    token = span[-1]
    return token.dep_ in ("amod", "compound", "nmod") and token.head.i > token.i


# how far back the written form of a swap looks (the word before, a sentence's end): a bounded window, so a text's
# occurrences cost their own length, not the text's (a 100 kB text took 74 s to swap, quadratic in its length)
LOOK_BACK = 200


def at_sentence_start(text: str, start: int) -> bool:
    """Nothing but openers (quotes, brackets) since the text's start, a line break, a sentence's end, or a colon
    and a quotation mark."""
    window = max(0, start - LOOK_BACK)  # a bounded look back: every occurrence of a long text, not the whole prefix
    head = text[window:start]
    stripped = head.rstrip(_OPENERS)
    openers = head[len(stripped) :]
    if not stripped.strip() or "\n" in openers:
        return True
    last = stripped.rstrip()[-1]
    return last in ".!?" or (last == ":" and any(q in openers for q in "\"'\u201c\u2018"))  # said: "Gay ...


def _in_title(text: str, start: int, end: int) -> bool:
    """The words on both sides are capitalised too ("Muslim Leaders Meet"): a title, where every word has a capital."""
    window = max(0, start - LOOK_BACK)
    before = list(re.finditer(r"[A-Za-z]+", text[window:start]))
    after = [w for w in re.findall(r"[A-Za-z][A-Za-z']*", text[end : end + 60])[:2] if w[:1].isupper()]
    if not before or not after or after[0] in ("I", "I'm", "I've", "I'd", "I'll"):
        return False
    word = before[-1]  # a sentence's first word has its capital anyway: evidence of a title only with two after it
    return word.group()[:1].isupper() and (not at_sentence_start(text, window + word.start()) or len(after) == 2)


def _shouting(text: str, start: int, end: int) -> bool:
    """An all-capitals occurrence is shouted, not an initialism ("an LGBT activist"), when a word next to it is in
    capitals too ("I HATE LGBT PEOPLE"), or when it stands alone."""
    near = re.findall(r"[A-Za-z]{2,}", text[max(0, start - 40) : start])[-1:]
    near += re.findall(r"[A-Za-z]{2,}", text[end : end + 40])[:1]
    return not near or any(w.isupper() for w in near)


def casing(occurrence: str, text: str, start: int) -> str:
    """How a swap cases the word it writes where ``occurrence`` stands (``upper``, ``title``, ``first`` or
    ``listed``): all capitals for a shouted all-capitals occurrence, capitals on every word in a title, a capital
    first letter at a sentence's start, otherwise the form as listed ("Christian" keeps its capital, "gay" stays
    lower-case where it replaces a "Muslim"). It depends on the occurrence only, so a swap decides it once per
    occurrence, not once per target."""
    letters = [c for c in occurrence if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters) and _shouting(text, start, start + len(occurrence)):
        return "upper"
    if occurrence[:1].isupper() and _in_title(text, start, start + len(occurrence)):
        return "title"
    if at_sentence_start(text, start):
        return "first"
    return "listed"


def recase(word: str, how: str) -> str:
    """``word`` cased as :func:`casing` decided."""
    if how == "upper":
        return word.upper()
    if how == "title":
        return " ".join(w[:1].upper() + w[1:] for w in word.split(" "))
    if how == "first":
        return word[:1].upper() + word[1:]
    return word


def article_before(text: str, cursor: int, start: int) -> tuple[int, str, str] | None:
    """The "a"/"an" that ends ``text[cursor:start]`` and is followed by space: (where it starts, as written, the
    space after it), or None."""
    head = text[cursor:start]
    stripped = head.rstrip()
    last = stripped.rsplit(None, 1)[-1] if stripped.split() else ""
    if last.lower() in ("a", "an") and len(head) - len(stripped) >= 1:
        return cursor + len(stripped) - len(last), last, head[len(stripped) :]
    return None


@lru_cache(maxsize=4096)
def article_for(written: str, new: str) -> str:
    """The article ``written`` ("a", "An") made to agree with ``new`` ("a Muslim" -> "an atheist"), its case kept."""
    return match_case(written, indefinite_article(new))


def splice(
    text: str, changes: Sequence[tuple[int, int, str]], *, articles: bool = True
) -> tuple[str, tuple[Edit, ...]]:
    """``text`` with each ``(start, end, new)`` span replaced (left to right, overlaps skipped); with ``articles``, an
    "a"/"an" right before a replaced word agrees with the new word ("a Muslim" -> "an atheist")."""
    pieces: list[str] = []
    edits: list[Edit] = []
    cursor = 0
    for start, end, new in sorted(changes):
        if start < cursor:
            continue
        found = article_before(text, cursor, start) if articles else None
        if found is not None:
            article = article_for(found[1], new)
            if article != found[1]:
                new = article + found[2] + new
                start = found[0]
        pieces.append(text[cursor:start])
        pieces.append(new)
        edits.append(Edit(start, end, text[start:end], new))
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), tuple(edits)


# one occurrence as a swap writes it, decided once per text: start, end, the original characters, its term (lower
# case), its style (what decides the written word besides the target), the words written in that style so far (target
# -> word) and the "a"/"an" before it (or None)
Occurrence = tuple[int, int, str, str, Any, dict[str, str], "tuple[int, str, str] | None"]


def written_forms(identities: IdentitySet, *, grammar: bool = True) -> dict[str, tuple[str, str]]:
    """Every written form of the set's terms that is matched in text -> (its term, "adjective"/"noun"/"plural"/
    "place"): the terms, and with ``grammar`` their one-word nouns and plurals ("Jew", "Muslims"; "gay people" is
    found as "gay" and kept an adjective) and their countries ("Mexico"). Keys are lower-case, or for a case-sensitive
    set (names, countries) as listed and in capitals ("Emily", "EMILY")."""
    key = _surface_key(identities.case_sensitive)
    surfaces = {key(t): (t, "adjective") for t in identities.terms}
    if grammar:
        for term in identities.terms:
            forms = identities.forms_of(term)
            kinds = [("noun", forms.noun), ("plural", forms.plural), *(("plural", x) for x in forms.also)]
            for kind, surface in kinds:
                if " " not in surface:
                    surfaces.setdefault(key(surface), (term, kind))
            if forms.place:
                surfaces.setdefault(key(forms.place), (term, "place"))
    endings = get_language(identities.language).grammar_class().adjective_endings if identities.inflections else ()
    for term, inflection in identities.inflections.items():  # an inflected language: every form the pack lists
        for form in inflection.forms.values():
            surfaces.setdefault(key(form), (term, "noun"))
        if inflection.adjective:
            for ending in ("",) if inflection.invariable else endings:
                surfaces.setdefault(key(inflection.adjective + ending), (term, "adjective"))
    if identities.case_sensitive:
        surfaces |= {k.upper(): v for k, v in surfaces.items() if k.upper() not in surfaces}
    return surfaces


def _surface_key(case_sensitive: bool) -> Any:
    return (lambda s: " ".join(s.split())) if case_sensitive else (lambda s: " ".join(s.lower().split()))


class IdentitySwapEditor(EditorBase):
    """Φ_A: for each identity term in a text, one variant per other term of the set.

    ``guard`` ("spacy" or ``None``) skips non-identity uses of ambiguous terms. ``grammar`` (the default) writes
    the swap as English: the set's nouns and plurals are matched too and replaced by the target's form of the same
    number ("Muslims" -> "Christians", "a Jew" -> "a Buddhist"), an adjective used as a noun gets the target's noun
    ("a Chinese." -> "a gay person."), proper adjectives keep their capital and a sentence's first word gets one
    (:func:`casing`), and "a"/"an" agree with the new word. ``grammar=False`` is paper 001's Φ_A exactly: the listed
    terms only, token for token, case copied from the replaced word (what blindness and CLP training assume).
    """

    name: ClassVar[str] = "swap"

    def __init__(
        self,
        identities: IdentitySet | str | None = None,
        *,
        targets: Sequence[str] | None = None,
        guard: str | None = "spacy",
        grammar: bool = True,
    ) -> None:
        if guard not in ("spacy", None):
            raise ValueError(f"guard must be 'spacy' or None, got {guard!r}")
        self.identities = identities if isinstance(identities, IdentitySet) else load_identity_set(identities)
        self.targets = tuple(targets) if targets is not None else self.identities.terms
        self._target_keys = {t.lower() for t in self.targets}
        self.guard = guard
        self.grammar = grammar
        self._surfaces = written_forms(self.identities, grammar=grammar)
        self._key = _surface_key(self.identities.case_sensitive)
        self._matcher = TermMatcher(self._surfaces, case_sensitive=self.identities.case_sensitive)
        self._guard = IdentityGuard(self.identities.ambiguous, self.identities.terms) if guard else None
        self.blocked = 0  # occurrences the guard kept from being swapped (over every call)
        self.found = 0
        self.last_counts: list[tuple[int, int]] = []  # (found, blocked) per text of the last call
        self._words: dict[Any, dict[str, str]] = {}  # style -> target -> the word written
        self._plan_of: str | None = None  # the text (and its matches) whose occurrences are kept in _plan
        self._plan_matches: Sequence[TermMatch] | None = None
        self._plan: list[Occurrence] = []

    def params(self) -> JSONObject:
        return {
            "text_folding": TEXT_FOLDING,
            "identities": self.identities.name,
            "terms": list(self.identities.terms),
            "targets": list(self.targets),
            "guard": self.guard,
            "guard_rule": self._guard.rule if self._guard is not None else None,
            "ambiguous": sorted(self.identities.ambiguous),
            "grammar": self.grammar,
            "forms": {t: list(asdict(f).values()) for t, f in sorted(self.identities.forms.items())}
            if self.grammar
            else None,
        }

    def find(self, text: str) -> list[TermMatch]:
        """Every occurrence of a term's written form in ``text``, under its term (no guard)."""
        return [self._canonical(m) for m in self._matcher.find(text)]

    def identity_matches(self, texts: Sequence[str]) -> list[list[TermMatch]]:
        """Occurrences of identity terms used as identities (after the guard)."""
        found = [self.find(text) for text in texts]
        kept = found
        if self._guard is not None:
            verdicts = self._guard.keep(texts, found)
            kept = [[m for m, ok in zip(f, v, strict=True) if ok] for f, v in zip(found, verdicts, strict=True)]
        self.last_counts = [(len(f), len(f) - len(k)) for f, k in zip(found, kept, strict=True)]
        self.found += sum(f for f, _ in self.last_counts)
        self.blocked += sum(b for _, b in self.last_counts)
        if self.grammar:  # the grammar's parses, made in one batch for the texts that need one
            wanted = [t for t, ms in zip(texts, kept, strict=True) if any(self._needs_parse(t, m) for m in ms)]
            if wanted:
                with suppress(ModelNotAvailable):  # without the model, each occurrence falls back as documented
                    parse_all(wanted)
        return kept

    def _canonical(self, match: TermMatch) -> TermMatch:
        """The match under its identity term ("Jews" -> jewish), so the guard and the swap see terms."""
        return TermMatch(match.start, match.end, match.text, self._surfaces[self._key(match.term)][0])

    def _written_kind(self, match: TermMatch) -> str:
        """``adjective``, ``noun``, ``plural`` or ``place``: which of its term's forms the occurrence is written in."""
        return self._surfaces.get(self._key(match.text), (match.term, "adjective"))[1]

    @staticmethod
    def _neighbours(text: str, match: TermMatch) -> tuple[str, str, bool]:
        """The word before the occurrence, the word after it and whether one follows (lower case)."""
        words = text[max(0, match.start - LOOK_BACK) : match.start].split()
        after = _NEXT_WORD.match(text, match.end)
        return (words[-1].lower() if words else ""), (after.group(1).lower() if after else ""), after is not None

    def _needs_parse(self, text: str, match: TermMatch) -> bool:
        """Whether :meth:`form_used` asks spaCy about this occurrence ("a Muslim woman" or "met a Muslim yesterday")."""
        if self._written_kind(match) != "adjective":
            return False
        before, following, followed = self._neighbours(text, match)
        return before in _SINGULAR_DETERMINERS and followed and following not in _AFTER_A_NOUN

    def form_used(self, text: str, match: TermMatch) -> str:
        """``adjective``, ``noun``, ``plural`` or ``place``: as written, or an adjective used as a noun ("a Chinese.",
        "the Chinese are"). A swap asks once per occurrence (:meth:`occurrences`), not once per target."""
        kind = self._written_kind(match)
        if kind != "adjective":
            return kind
        before, following, followed = self._neighbours(text, match)
        if before in _SINGULAR_DETERMINERS and (
            not followed or following in _AFTER_A_NOUN or not _modifies_a_noun(text, match.start, match.end)
        ):
            return "noun"  # "a Muslim.", "a Muslim who", "met a Muslim yesterday" (not "a Muslim woman")
        if before == "the" and following in _PLURAL_VERBS:
            return "plural"
        return kind

    def _word(self, style: Any, target: str) -> str:
        """The word written for ``target`` in an occurrence's ``style`` (its surface without grammar; with it, its
        casing and form), kept per style: ~50 targets meet the same few styles."""
        known = self._words.get(style)
        if known is None:
            if len(self._words) >= 4096:
                self._words.clear()
            known = self._words[style] = {}
        word = known.get(target)
        if word is None:
            if not self.grammar:
                word = match_case(style, target)
            else:
                listed = getattr(self.identities.forms_of(target), style[1])  # adjective, noun, plural or place
                if listed is None:
                    raise ConfigError(
                        f"identity set {self.identities.name}: {target!r} has no country to replace a country's name"
                    )
                word = recase(listed, style[0])
            known[target] = word
        return word

    def occurrences(self, text: str, matches: Sequence[TermMatch]) -> list[Occurrence]:
        """What a swap needs of each occurrence, decided once per text (kept while the editor works on it; every
        variant asks): its span, its original characters, its term, its style (:meth:`_word`) and, with grammar, the
        "a"/"an" before it."""
        if self._plan_of is text and self._plan_matches is matches:
            return self._plan
        plan: list[Occurrence] = []
        cursor = 0
        for m in sorted(matches, key=lambda m: m.start):
            if self.grammar:
                style: Any = (casing(m.text, text, m.start), self.form_used(text, m))
                article = article_before(text, cursor, m.start)
            else:
                style, article = m.text, None
            known = self._words.setdefault(style, {})
            plan.append((m.start, m.end, text[m.start : m.end], m.term.lower(), style, known, article))
            cursor = m.end
        self._plan_of, self._plan_matches, self._plan = text, matches, plan
        return plan

    def swap(self, text: str, matches: Sequence[TermMatch], a: str, b: str) -> tuple[str, tuple[Edit, ...]]:
        """Φ_{a,b}: every kept occurrence of ``a`` becomes ``b`` and every one of ``b`` becomes ``a`` (what
        :func:`splice` writes, from the occurrences decided once per text)."""
        return self._write(text, self.occurrences(text, matches), a, a.lower(), b, b.lower())

    def swap_for(self, text: str, matches: Sequence[TermMatch]) -> Callable[[str, str, str, str], Any]:
        """:meth:`swap` for one text, its occurrences decided once: ``(a, a_low, b, b_low) -> (new text, edits)``."""
        return partial(self._write, text, self.occurrences(text, matches))

    def _write(
        self, text: str, plan: list[Occurrence], a: str, a_low: str, b: str, b_low: str
    ) -> tuple[str, tuple[Edit, ...]]:
        if len(plan) == 1:  # most texts: one occurrence, a slice on each side of it
            start, end, old, term, style, known, article = plan[0]
            if term != a_low and term != b_low:
                return text, ()
            target = b if term == a_low else a
            new = known.get(target) or self._word(style, target)
            if article is not None and (written := article_for(article[1], new)) != article[1]:
                new, start = written + article[2] + new, article[0]
                old = text[start:end]
            return text[:start] + new + text[end:], (Edit.of(start, end, old, new),)
        pieces: list[str] = []
        edits: list[Edit] = []
        cursor = 0
        for start, end, old, term, style, known, article in plan:
            if term == a_low:
                target = b
            elif term == b_low:
                target = a
            else:
                continue
            new = known.get(target) or self._word(style, target)
            if article is not None and (written := article_for(article[1], new)) != article[1]:
                new, start = written + article[2] + new, article[0]
                old = text[start:end]
            pieces.append(text[cursor:start])
            pieces.append(new)
            edits.append(Edit.of(start, end, old, new))
            cursor = end
        pieces.append(text[cursor:])
        return "".join(pieces), tuple(edits)

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start("swap", len(texts))
        out: list[list[Candidate]] = []
        split = {t.lower(): self.identities.split_of(t) for t in self.identities.terms}
        found = self.identity_matches(texts)
        metas: dict[str, dict[str, dict[str, str]]] = {}
        with paused_gc():  # ~50 candidates per text, none in a reference cycle: collecting would only rescan them
            for text, matches in zip(texts, found, strict=True):
                out.append(swap_variants(self, text, matches, split, [], metas))
                hook.advance(1)
        return out


class SwapRefused(Exception):
    """An occurrence a swap cannot write (French/German agreement the text does not decide); ``status`` says why."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


def swap_variants(
    editor: Any,
    text: str,
    matches: Sequence[TermMatch],
    split: dict[str, str],
    refused: list[str],
    metas: dict[str, dict[str, dict[str, str]]] | None = None,
) -> list[Candidate]:
    """Φ_A(text) for an identity-swap editor (its ``identities``, ``targets``, ``name`` and ``swap_for``): one variant
    per present term and allowed target, duplicates dropped; a swap that raises :class:`SwapRefused` is left out and
    its status appended to ``refused``. ``metas``: the candidates' meta per pair of terms, shared by the texts of one
    call (no one changes a candidate's meta; building one per variant was a tenth of the token swap's time)."""
    seen: set[str] = set()
    variants: list[Candidate] = []
    swap, name, params = editor.swap_for(text, matches), editor.name, editor.params_hash()
    metas = {} if metas is None else metas
    for a in dict.fromkeys(m.term for m in matches):
        a_low = a.lower()
        a_split = split.get(a_low, "custom")
        a_metas = metas.setdefault(a, {})
        policy = editor.targets if editor.identities.targets == "all" else editor.identities.targets_for(a)
        for b, b_low in _allowed(tuple(policy), tuple(editor.targets)):
            if b_low == a_low:
                continue
            try:
                new, edits = swap(a, a_low, b, b_low)
            except SwapRefused as refusal:
                refused.append(refusal.status)
                continue
            if new == text or new in seen:
                continue
            seen.add(new)
            meta = a_metas.get(b)
            if meta is None:
                meta = a_metas[b] = {
                    "source_term": a,
                    "target_term": b,
                    "source_split": a_split,
                    "target_split": split.get(b_low, "custom"),
                }
            variants.append(Candidate.of(new, name, params, edits, meta))
    return variants


@lru_cache(maxsize=256)
def _allowed(policy: tuple[str, ...], targets: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The terms of ``policy`` that are among the editor's ``targets`` (case-insensitive), each with its lower case."""
    keys = {t.lower() for t in targets}
    return tuple((b, b.lower()) for b in policy if b.lower() in keys)
