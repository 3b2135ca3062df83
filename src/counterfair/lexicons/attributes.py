"""Sensitive attributes (wordlists for ablation and substitution) and identity-term sets (for swaps).

Built in: the four attributes of paper 000 (``islam``, ``judaism``, ``lgbq``, ``transgender``) with exactly the
word lists of its Tables 6 and 7, and the 50 identity terms of Dixon et al. (2018) with the 35 training / 15
held-out split of the paper-001 replication (``dixon50``). Users add their own attributes as YAML or JSON
files with the same keys::

    name: caste
    subject: Dalits                 # used in the LLM instruction "not about <subject>"
    ablation: [dalit, dalits, ...]  # terms removed by ablation (single or multi-word)
    substitution: {dalit: brahmin}  # term -> replacement; terms without one stay unchanged

and identity sets as YAML/JSON (``terms`` or ``train``/``heldout``, optional ``ambiguous``), a text file with
one term per line, or a comma-separated list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..language_registry import DEFAULT_LANGUAGE, get_language, languages
from ..text import TermMatcher


def _resource_dir(kind: str) -> Path:
    return Path(str(resources.files("counterfair") / "resources" / kind))


def _pack_paths() -> dict[str, Path]:
    """Every built-in swap pack by name: ``resources/identities`` and the packs each language keeps in its folder."""
    from ..language_registry import pack_folders

    return _packs_in((_resource_dir("identities"), *pack_folders()))


@cache
def _packs_in(folders: tuple[Path, ...]) -> dict[str, Path]:  # listed once per set of folders, not per pack loaded
    found: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.yaml")):
            if path.stem not in ("language", "placebo"):
                found.setdefault(path.stem, path)
    return found


def _read_mapping(path: Path) -> dict[str, Any]:
    """A pack file's mapping (size, binary content, YAML aliases and item count checked by
    :func:`counterfair.yamlfiles.read_mapping`), its ``language`` one counterfair edits."""
    from ..language_registry import get_language
    from ..yamlfiles import read_mapping

    data = read_mapping(path, "pack")
    if not data:
        raise ConfigError(f"pack {path}: empty; expected keys such as 'name', 'ablation', 'substitution'")
    if data.get("language") is not None:
        try:
            get_language(str(data["language"]))
        except ConfigError as err:
            raise ConfigError(f"pack {path}: 'language': {err}") from None
    return data


def resource_mapping(kind: str, name: str) -> dict[str, Any]:
    """A YAML resource shipped with counterfair (``resources/KIND/NAME.yaml``) as a mapping."""
    return _read_mapping(_resource_dir(kind) / f"{name}.yaml")


def _terms(value: Any, *, where: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigError(f"{where}: '{key}' must be a list of terms")
    out: list[str] = []
    seen: dict[str, str] = {}
    for item in value:
        term = " ".join(str(item).split())
        if not term:
            raise ConfigError(f"{where}: '{key}' holds an empty term")
        low = term.lower()
        if low in seen:
            raise ConfigError(f"{where}: '{key}' lists {term!r} twice (as {seen[low]!r} and {term!r})")
        seen[low] = term
        out.append(term)
    return tuple(out)


@dataclass(frozen=True)
class Attribute:
    """A sensitive attribute: terms that reference it and, where one exists, a substitute for each."""

    name: str
    subject: str
    ablation: tuple[str, ...]
    substitution: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    replacement_category: str | None = None
    source: str = "builtin"
    info: Mapping[str, Any] = field(default_factory=dict)  # version, language, source, license of the pack
    genders: Mapping[str, str] = field(default_factory=dict)  # French substitutes' genders, for elision

    @property
    def language(self) -> str:
        return str(self.info.get("language") or DEFAULT_LANGUAGE)

    @property
    def terms(self) -> tuple[str, ...]:
        """Every term that references the attribute (ablation terms, then substitution-only terms)."""
        extra = tuple(t for t in self.substitution if t.lower() not in {a.lower() for a in self.ablation})
        return self.ablation + extra

    def matcher(self) -> TermMatcher:
        return TermMatcher(self.terms)

    def to_dict(self) -> JSONObject:
        return {
            "name": self.name,
            "subject": self.subject,
            "ablation": list(self.ablation),
            "substitution": dict(self.substitution),
            "source": self.source,
        }


def _attribute_from(data: Mapping[str, Any], *, where: str, source: str) -> Attribute:
    name = str(data.get("name") or "").strip()
    if not name:
        raise ConfigError(f"{where}: the attribute needs a 'name'")
    ablation = _terms(data.get("ablation"), where=where, key="ablation")
    raw_sub = data.get("substitution") or {}
    if not isinstance(raw_sub, Mapping):
        raise ConfigError(f"{where}: 'substitution' must map terms to replacements")
    substitution: dict[str, str] = {}
    for key, value in raw_sub.items():
        term = " ".join(str(key).split())
        if not term or value is None or not str(value).strip():
            raise ConfigError(f"{where}: substitution {key!r} -> {value!r} needs a term and a replacement")
        substitution[term.lower()] = " ".join(str(value).split())
    if not ablation and not substitution:
        raise ConfigError(f"{where}: attribute {name!r} lists no terms ('ablation' or 'substitution')")
    return Attribute(
        name=name,
        subject=str(data.get("subject") or name),
        ablation=ablation,
        substitution=substitution,
        aliases=tuple(str(a).lower() for a in data.get("aliases") or ()),
        replacement_category=data.get("replacement_category"),
        source=source,
        info=_pack_info(data, default_source=source),
        genders=_genders(data.get("genders"), where=where),
    )


def _genders(raw: Any, *, where: str) -> dict[str, str]:
    if not raw:
        return {}
    if not isinstance(raw, Mapping) or any(str(g) not in ("m", "f") for g in raw.values()):
        raise ConfigError(f"{where}: 'genders' must map a substitute to m or f")
    return {" ".join(str(k).lower().split()): str(g) for k, g in raw.items()}


@cache
def _builtin_attributes(language: str = "en") -> dict[str, Attribute]:
    entry = get_language(language)
    folder = entry.path(entry.attributes)
    out: dict[str, Attribute] = {}
    for path in sorted(folder.glob("*.yaml")):
        data = _read_mapping(path)
        attribute = _attribute_from(data, where=str(path), source=str(data.get("source") or "paper 000, Tables 6-7"))
        out[attribute.name] = attribute
    return out


def known_attributes(language: str = "en") -> list[str]:
    """Names of the built-in attributes (in ``language``: ``en``, ``fr``, ``de``)."""
    return sorted(_builtin_attributes(language))


def load_attribute(name_or_path: str, language: str | None = None) -> Attribute:
    """A built-in attribute by name or alias (in ``language``, English by default), or a user attribute from a
    YAML/JSON file."""
    candidate = Path(name_or_path).expanduser()
    if candidate.suffix.lower() in (".yaml", ".yml", ".json"):
        if not candidate.exists():
            raise ConfigError(f"attribute file {candidate} does not exist")
        return _attribute_from(_read_mapping(candidate), where=str(candidate), source=str(candidate))
    key = name_or_path.strip().lower()
    builtins = _builtin_attributes(get_language(language).code)
    for attribute in builtins.values():
        if key == attribute.name or key in attribute.aliases:
            return attribute
    raise ConfigError(
        f"unknown attribute {name_or_path!r}; known attributes: {', '.join(sorted(builtins))}; "
        "or give a YAML/JSON file with 'name', 'subject', 'ablation' and 'substitution'"
    )


# --------------------------------------------------------------------------------------------- identities

# Identity words that no built-in identity set, gender pack or names pack swaps: the audit counts the texts it could not
# reach that name one, so a user knows which identity set of their own (--identities FILE) would reach them.
UNCOVERED_GROUPS: dict[str, tuple[str, ...]] = {
    "religion": tuple(
        "hindu hindus hinduism atheist atheists agnostic agnostics mormon mormons sunni sunnis shia shiite shiites "
        "evangelical evangelicals jain jains rastafarian pagan pagans".split()
    ),
    "ethnicity": (
        "arab",
        "arabs",
        "roma",
        "romani",
        "indigenous",
        "aboriginal",
        "aboriginals",
        "inuit",
        "native american",
        "native americans",
        "korean",
        "koreans",
    ),
    "disability": tuple(
        "disabled disability disabilities wheelchair autistic autism handicapped retarded cripple cripples".split()
    ),
    "immigration": tuple(
        "immigrant immigrants migrant migrants refugee refugees foreigner foreigners illegals asylum".split()
    ),
}


def first_names() -> tuple[str, ...]:
    """Common US first names that are not English words (``resources/lexicon/first-names.txt``, written by
    ``tools/build_names_pack.py``), for counting the texts that name a first name the names pack lacks."""
    path = Path(str(resources.files("counterfair") / "resources" / "lexicon" / "first-names.txt"))
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@dataclass(frozen=True)
class TermForms:
    """How one identity term is written: as an adjective (with its proper capitals: "Muslim", "LGBT", "gay"), for one
    person ("Muslim", "Jew", "gay person") and for several ("Muslims", "Jews", "gay people"); ``also``: other plural
    spellings found in text ("gays"). A proper adjective (one written with a capital) keeps it wherever it lands."""

    adjective: str
    noun: str
    plural: str
    also: tuple[str, ...] = ()
    place: str | None = None  # the country of a nationality ("Mexico" for "Mexican"): "from Mexico" -> "from Canada"

    @property
    def proper(self) -> bool:
        return self.adjective[:1].isupper()

    @classmethod
    def default(cls, term: str) -> TermForms:
        """For a term the set gives no forms: the adjective with "person"/"people" (always grammatical)."""
        return cls(term, f"{term} person", f"{term} people")


FR_SLOTS = ("m.sg", "f.sg", "m.pl", "f.pl")
DE_CASES = ("nom", "acc", "dat", "gen")


@dataclass(frozen=True)
class TermInflection:
    """How a French or German identity term inflects (:mod:`counterfair.editors.inflected`).

    French: ``forms`` by ``m.sg``, ``f.sg``, ``m.pl``, ``f.pl``; a missing key means the term has no such form
    ("lesbienne" has no masculine), and a swap onto it changes the noun's gender with its articles and adjectives.
    German: ``adjective`` is the stem that takes the endings ("muslimisch"; ``invariable`` for "trans"), ``forms``
    the noun by gender and case (``m.nom`` ... ``pl.gen``); a term without a noun is written as adjective + "Mensch",
    "Person" or "Menschen"."""

    forms: Mapping[str, str]
    adjective: str | None = None
    invariable: bool = False
    proper_noun: bool = False  # French: as a noun for people it takes a capital ("un Mexicain", "les Noirs")


def parse_inflections(
    raw: Any, known: set[str], language: str, *, where: str, proper: Any = None
) -> dict[str, TermInflection]:
    """``inflections: {term: ...}`` in the format of the language's entry: ``gender_number`` (French, Spanish)
    ``[m.sg, f.sg, m.pl, f.pl]`` (``~`` where none); ``gender_case`` (German) ``{adjective: stem, invariable: bool,
    m: noun or [nom, acc, dat, gen], f: ..., pl: ...}``."""
    shape = get_language(language).inflections
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: 'inflections' must map each term to its forms")
    out: dict[str, TermInflection] = {}
    for term, entry in raw.items():
        key = str(term).lower()
        if key not in known:
            raise ConfigError(f"{where}: inflections given for {term!r}, which is not one of the set's terms")
        if shape == "gender_number":
            if not isinstance(entry, list) or len(entry) != 4 or not any(entry):
                raise ConfigError(f"{where}: inflections.{term} must be [m.sg, f.sg, m.pl, f.pl] (~ where none)")
            out[key] = TermInflection({slot: str(f) for slot, f in zip(FR_SLOTS, entry, strict=True) if f})
        elif shape == "gender_case":
            if not isinstance(entry, Mapping) or not ({"adjective", "m", "f", "pl"} & set(entry)):
                raise ConfigError(f"{where}: inflections.{term} must give 'adjective' and/or nouns 'm', 'f', 'pl'")
            forms: dict[str, str] = {}
            for gender in ("m", "f", "pl"):
                value = entry.get(gender)
                if value is None:
                    continue
                cases = [value] * 4 if isinstance(value, str) else value
                if not isinstance(cases, list) or len(cases) != 4:
                    raise ConfigError(f"{where}: inflections.{term}.{gender} must be a noun or [nom, acc, dat, gen]")
                forms |= {f"{gender}.{case}": str(form) for case, form in zip(DE_CASES, cases, strict=True)}
            adjective = entry.get("adjective")
            out[key] = TermInflection(forms, str(adjective) if adjective else None, bool(entry.get("invariable")))
        else:
            inflected = ", ".join(c for c, lang in languages().items() if lang.inflected)
            raise ConfigError(f"{where}: 'inflections' are for the packs of an inflected language ({inflected})")
    missing = sorted(known - set(out))[:5]
    if missing:
        raise ConfigError(f"{where}: 'inflections' must cover every term; none for {missing}")
    for term in _terms(proper, where=where, key="proper_nouns"):
        if term.lower() not in out:
            raise ConfigError(f"{where}: proper_nouns lists {term!r}, which is not one of the set's terms")
        out[term.lower()] = replace(out[term.lower()], proper_noun=True)
    return out


@dataclass(frozen=True)
class IdentitySet:
    """Identity terms for swaps (paper 001's set A), with an optional training / held-out split."""

    name: str
    train: tuple[str, ...]
    heldout: tuple[str, ...] = ()
    ambiguous: frozenset[str] = frozenset()
    groups: Mapping[str, str] = field(default_factory=dict)  # lower-case term -> group name
    forms: Mapping[str, TermForms] = field(default_factory=dict)  # lower-case term -> its written forms
    case_sensitive: bool = False  # proper nouns (first names, countries): "Will" is a name, "will" is not
    # "all": a term swaps with every other term; "one_per_group": with one term of each other group (the one at the
    # same rank in its group), only among the groups of its ``within`` partition (names: female names with female ones)
    targets: str = "all"
    within: tuple[tuple[str, ...], ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)  # version, language, source, license of the pack
    inflections: Mapping[str, TermInflection] = field(default_factory=dict)  # French and German sets

    @property
    def language(self) -> str:
        return str(self.info.get("language") or DEFAULT_LANGUAGE)

    def targets_for(self, term: str) -> tuple[str, ...]:
        """The terms a text's ``term`` is swapped to."""
        low = term.lower()
        if self.targets == "all":
            return tuple(t for t in self.terms if t.lower() != low)
        members: dict[str, list[str]] = {}
        for t in self.terms:
            members.setdefault(self.group_of(t), []).append(t)
        group = self.group_of(term)
        rank = [t.lower() for t in members.get(group, [])].index(low) if group in members else 0
        allowed = next((set(part) for part in self.within if group in part), set(members))
        return tuple(ts[rank % len(ts)] for g, ts in members.items() if g != group and g in allowed)

    def forms_of(self, term: str) -> TermForms:
        return self.forms.get(term.lower()) or TermForms.default(term)

    @property
    def terms(self) -> tuple[str, ...]:
        return self.train + self.heldout

    def group_of(self, term: str) -> str:
        """The reporting group of a term (``"other"`` when the set has no groups for it)."""
        return self.groups.get(term.lower(), "other")

    def split_of(self, term: str) -> str:
        """``train`` or ``heldout`` for a term of this set (case-insensitive)."""
        low = term.lower()
        if low in {t.lower() for t in self.train}:
            return "train"
        if low in {t.lower() for t in self.heldout}:
            return "heldout"
        raise KeyError(term)

    def resplit(self, seed: int, n_train: int | None = None) -> IdentitySet:
        """The same terms split at random into ``n_train`` training terms (default: as many as now) and held-out
        ones, as paper 001 draws its error bars over random splits; terms keep their forms, groups and ambiguity."""
        terms = list(self.terms)
        n = len(self.train) if n_train is None else n_train
        if not 0 < n < len(terms):
            raise ConfigError(f"n_train must be between 1 and {len(terms) - 1}, got {n}")
        import numpy as np

        order = np.random.default_rng(seed).permutation(len(terms))
        train = tuple(sorted(terms[i] for i in order[:n]))
        heldout = tuple(sorted(terms[i] for i in order[n:]))
        return replace(self, name=f"{self.name}:split{seed}", train=train, heldout=heldout)

    def subset(self, split: str) -> IdentitySet:
        """Only the training or only the held-out terms."""
        if split == "train":
            return replace(self, name=f"{self.name}:train", heldout=())
        if split == "heldout":
            return replace(self, name=f"{self.name}:heldout", train=self.heldout, heldout=())
        raise ConfigError(f"unknown split {split!r}; use 'train' or 'heldout'")


def _identity_from(data: Mapping[str, Any], *, where: str, name: str) -> IdentitySet:
    if "terms" in data and ("train" in data or "heldout" in data):
        raise ConfigError(f"{where}: give either 'terms' or 'train'/'heldout', not both")
    train = _terms(data.get("terms", data.get("train")), where=where, key="train")
    heldout = _terms(data.get("heldout"), where=where, key="heldout")
    both = {t.lower() for t in train} & {t.lower() for t in heldout}
    if both:
        raise ConfigError(f"{where}: terms in both 'train' and 'heldout': {', '.join(sorted(both))}")
    if len(train) + len(heldout) < 1:
        raise ConfigError(f"{where}: an identity set needs at least one term")
    if "ambiguous" in data:
        ambiguous = frozenset(t.lower() for t in _terms(data.get("ambiguous"), where=where, key="ambiguous"))
    else:  # a user's set: the built-in ambiguous words (colours, ages, ...) that it contains
        ambiguous = _builtin_identity("dixon50").ambiguous & {t.lower() for t in train + heldout}
    groups: dict[str, str] = {}
    raw_groups = data.get("groups") or {}
    if not isinstance(raw_groups, Mapping):
        raise ConfigError(f"{where}: 'groups' must map a group name to its terms")
    known = {t.lower() for t in train + heldout}
    for group, members in raw_groups.items():
        for term in _terms(members, where=where, key=f"groups.{group}"):
            if term.lower() not in known:
                raise ConfigError(f"{where}: group {group!r} lists {term!r}, which is not one of the set's terms")
            groups[term.lower()] = str(group)
    if not raw_groups and "name" not in data:  # a bare list of terms ("gay,muslim,black"): the built-in set's group
        builtin = _builtin_identity("dixon50").groups  # of each term it knows, else the term is its own group
        groups = {t: builtin.get(t, t) for t in sorted(known)}  # (was one group "other" for all: #49 item 11)
    language = str(data.get("language") or DEFAULT_LANGUAGE)
    inflections: dict[str, TermInflection] = {}
    if get_language(language).inflected or "inflections" in data:
        raw_inflections = data.get("inflections") or {}
        inflections = parse_inflections(raw_inflections, known, language, where=where, proper=data.get("proper_nouns"))
    if "forms" in data or inflections:
        forms = _forms_from(data.get("forms") or {}, known, where=where)
    else:  # a user's set: the built-in forms ("Jews", "Muslims", "gay people") of the terms it shares with it
        forms = {t: f for t, f in _builtin_identity("dixon50").forms.items() if t in known}
    forms = _with_places(forms, data.get("places"), known, where=where)
    targets = str(data.get("targets") or "all")
    if targets not in ("all", "one_per_group"):
        raise ConfigError(f"{where}: 'targets' must be 'all' or 'one_per_group', got {targets!r}")
    if targets == "one_per_group" and set(groups) != known:
        missing = sorted(known - set(groups))[:5]
        raise ConfigError(f"{where}: targets one_per_group needs a group for every term; none for {missing}")
    within = tuple(tuple(str(g) for g in part) for part in (data.get("within") or {}).values())
    unknown = {g for part in within for g in part} - set(groups.values())
    if unknown:
        raise ConfigError(f"{where}: 'within' names groups the set does not have: {', '.join(sorted(unknown))}")
    return IdentitySet(
        str(data.get("name") or name),
        train,
        heldout,
        ambiguous,
        groups,
        forms,
        case_sensitive=bool(data.get("case_sensitive", False)),
        targets=targets,
        within=within,
        info=_pack_info(data, default_source="user file")
        | ({"subject": "gender"} if data.get("subject") == "gender" else {}),
        inflections=inflections,
    )


def _with_places(forms: dict[str, TermForms], raw: Any, known: set[str], *, where: str) -> dict[str, TermForms]:
    """``places: {term: country}`` ("mexican: Mexico"): the country is matched and swapped too."""
    if not raw:
        return forms
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: 'places' must map a term to its country")
    out = dict(forms)
    for term, place in raw.items():
        low = str(term).lower()
        if low not in known or not str(place or "").strip():
            raise ConfigError(f"{where}: places.{term}: not one of the set's terms, or no country given")
        out[low] = replace(out.get(low) or TermForms.default(str(term)), place=" ".join(str(place).split()))
    lacking = sorted(t for t in known if not (out.get(t) and out[t].place))[:5]
    if lacking:
        raise ConfigError(f"{where}: 'places' must name a country for every term or none; none for {lacking}")
    return out


def _pack_info(data: Mapping[str, Any], *, default_source: str) -> JSONObject:
    """A pack's provenance: its version, language, source and licence."""
    version = data.get("version", 1)
    if not isinstance(version, int) or version < 1:
        raise ConfigError(f"pack {data.get('name')!r}: 'version' must be a positive integer, got {version!r}")
    return {
        "version": version,
        "language": str(data.get("language") or DEFAULT_LANGUAGE),
        "source": str(data.get("source") or default_source),
        "license": data.get("license"),
    }


@dataclass(frozen=True)
class GenderSet:
    """Gendered words for swaps: rows of (masculine, feminine, neutral or None) and the grammar rules that place the
    pronouns (:mod:`counterfair.editors.gender`). A word in several rows maps by its first row."""

    name: str
    rows: tuple[tuple[str, str, str | None], ...]
    grammar: str = "en-pronouns"
    info: Mapping[str, Any] = field(default_factory=dict)
    names: str | None = None  # a names pack whose first names change gender with the text ("names")
    # words that hold a gender no swap can move ("lesbian"): a text with one gets no binary swap
    gender_specific: tuple[str, ...] = ()

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w for row in self.rows for w in row[:2]))

    def group_of_word(self, word: str) -> str:
        low = word.lower()
        for male, female, _ in self.rows:
            if low == male.lower():
                return "male"
            if low == female.lower():
                return "female"
        raise KeyError(word)

    def group_of(self, term: str) -> str:
        return term if term in ("male", "female", "mixed", "neutral", "swapped") else "other"

    def other_of(self, word: str) -> str:
        low = word.lower()
        for male, female, _ in self.rows:
            if low == male.lower():
                return female
            if low == female.lower():
                return male
        raise KeyError(word)

    def neutral_of(self, word: str) -> str | None:
        low = word.lower()
        return next((n for m, f, n in self.rows if low in (m.lower(), f.lower())), None)


def _gender_from(data: Mapping[str, Any], *, where: str, name: str) -> GenderSet:
    raw = data.get("words")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: a gender pack needs 'words': rows of [masculine, feminine, neutral or ~]")
    rows: list[tuple[str, str, str | None]] = []
    role: dict[str, str] = {}
    for k, row in enumerate(raw, 1):
        if not isinstance(row, list) or len(row) != 3 or not all(isinstance(w, str) and w.strip() for w in row[:2]):
            raise ConfigError(f"{where}: words row {k} must be [masculine, feminine, neutral or ~], got {row!r}")
        for word, kind in ((row[0], "masculine"), (row[1], "feminine")):
            if role.setdefault(word.lower(), kind) != kind:
                raise ConfigError(f"{where}: words row {k}: {word!r} is listed as both masculine and feminine")
        rows.append((row[0], row[1], str(row[2]) if row[2] is not None else None))
    return GenderSet(
        str(data.get("name") or name),
        tuple(rows),
        grammar=str(data.get("grammar") or "en-pronouns"),
        info=_pack_info(data, default_source="user file"),
        names=str(data["names"]) if data.get("names") else None,
        gender_specific=_terms(data.get("gender_specific"), where=where, key="gender_specific"),
    )


def _forms_from(raw: Any, known: set[str], *, where: str) -> dict[str, TermForms]:
    """``forms: {term: [adjective, noun, plural, other plural spellings...]}``."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: 'forms' must map a term to [adjective, noun, plural, ...]")
    forms: dict[str, TermForms] = {}
    for term, entry in raw.items():
        if str(term).lower() not in known:
            raise ConfigError(f"{where}: forms given for {term!r}, which is not one of the set's terms")
        if not isinstance(entry, list) or len(entry) < 3 or not all(isinstance(x, str) and x.strip() for x in entry):
            raise ConfigError(
                f"{where}: forms.{term} must be [adjective, noun, plural, other plurals...], got {entry!r}"
            )
        if entry[0].lower() != str(term).lower():
            raise ConfigError(f"{where}: forms.{term} starts with {entry[0]!r}; the adjective must be the term itself")
        forms[str(term).lower()] = TermForms(entry[0], entry[1], entry[2], tuple(entry[3:]))
    return forms


@cache
def _builtin_identity(name: str) -> IdentitySet:
    found = _builtin_swap_set(name)
    if not isinstance(found, IdentitySet):
        raise ConfigError(
            f"{name!r} is a gender pack, not an identity set; it swaps through load_swap_set/--attributes"
        )
    return found


@cache
def _builtin_swap_set(name: str) -> IdentitySet | GenderSet:
    path = _pack_paths()[name]
    return _swap_set_from(_read_mapping(path), where=str(path), name=name)


def _swap_set_from(data: Mapping[str, Any], *, where: str, name: str) -> IdentitySet | GenderSet:
    kind = data.get("kind", "identity")
    if kind == "gender":
        return _gender_from(data, where=where, name=name)
    if kind != "identity":
        raise ConfigError(f"{where}: kind {kind!r} is not a swap set (identity or gender)")
    return _identity_from(data, where=where, name=name)


def load_swap_set(spec: str) -> IdentitySet | GenderSet:
    """A swap set by built-in name (``dixon50``, ``gender``, ``names``, ``nationality``) or from a YAML/JSON file of
    kind ``identity`` or ``gender``; anything else :func:`load_identity_set` takes."""
    if spec in known_identity_sets():
        return _builtin_swap_set(spec)
    path = Path(spec).expanduser()
    if path.suffix.lower() in (".yaml", ".yml", ".json") and path.exists():
        found = _swap_set_from(_read_mapping(path), where=str(path), name=path.stem)
        if isinstance(found, IdentitySet) and len(found.terms) < 2:
            raise ConfigError(f"{path}: an identity set needs at least two terms to swap between")
        return found
    return load_identity_set(spec)


def known_identity_sets() -> list[str]:
    return sorted(_pack_paths())


def identity_set_in(spec: str | Sequence[str] | None, language: str = "en") -> IdentitySet:
    """:func:`load_identity_set` for a run in ``language``: ``None`` is that language's own set (``dixon50``,
    ``identity-fr``, ``identity-de``), and a set in another language is refused before any work (its swaps, word lists
    and placebo words would not match the texts)."""
    code = get_language(language).code
    found = load_identity_set(spec if spec is not None else get_language(code).identity_set)
    if found.language != code:
        raise ConfigError(
            f"the identity set {found.name} is in {get_language(found.language).name} but the run is in "
            f"{get_language(code).name}: pass --language {found.language}"
        )
    return found


def load_identity_set(spec: str | Sequence[str] | None = None, *, min_terms: int = 2) -> IdentitySet:
    """``None``/``"dixon50"``: the built-in set; a YAML/JSON/TXT file; a comma-separated string; or a list.
    ``min_terms``: 2 to swap between terms; 1 where the terms are only found (``bias``'s groups)."""
    found = _load_identity_set(spec)
    if len(found.terms) < min_terms:
        raise ConfigError(f"identity set {found.name!r}: an identity set needs at least two terms to swap between")
    return found


def _load_identity_set(spec: str | Sequence[str] | None) -> IdentitySet:
    if spec is None:
        return _builtin_identity("dixon50")
    if not isinstance(spec, str):
        return _identity_from({"terms": list(spec)}, where="identity list", name="custom")
    if spec in known_identity_sets():
        return _builtin_identity(spec)
    path = Path(spec).expanduser()
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        if not path.exists():
            raise ConfigError(f"identity file {path} does not exist")
        found = _swap_set_from(_read_mapping(path), where=str(path), name=path.stem)
        if not isinstance(found, IdentitySet):
            raise ConfigError(f"{path} is a gender pack, not an identity set; give it to --attributes")
        return found
    if path.suffix.lower() == ".txt":
        if not path.exists():
            raise ConfigError(f"identity file {path} does not exist")
        from ..yamlfiles import read_capped

        raw = read_capped(path, "identity file")
        try:
            lines = [line.strip() for line in raw.decode("utf-8-sig").splitlines()]
        except UnicodeDecodeError as err:
            raise ConfigError(f"identity file {path}: not UTF-8 text (byte {err.start}); save it as UTF-8") from err
        return _identity_from(
            {"terms": [x for x in lines if x and not x.startswith("#")]}, where=str(path), name=path.stem
        )
    if "," in spec:
        return _identity_from({"terms": [t for t in spec.split(",") if t.strip()]}, where="--identities", name="custom")
    if spec.strip().lower() in {t.lower() for t in _builtin_identity("dixon50").terms}:  # one known term: "gay"
        return _identity_from({"terms": [spec.strip()]}, where="--identities", name="custom")
    raise ConfigError(
        f"unknown identity set {spec!r}; built-in sets: {', '.join(known_identity_sets())}; or give a file "
        "(.yaml/.json/.txt) or a comma-separated list of terms"
    )


# --------------------------------------------------------------------------------------------- lexicon packs

Pack = Attribute | IdentitySet | GenderSet
PACK_KINDS = ("wordlist", "identity", "gender")


def _pack_from(data: Mapping[str, Any], *, where: str, name: str) -> Pack:
    kind = data.get("kind") or ("wordlist" if ("ablation" in data or "substitution" in data) else "identity")
    if kind not in PACK_KINDS:
        raise ConfigError(f"{where}: kind {kind!r} is not one of {', '.join(PACK_KINDS)}")
    if kind == "wordlist":
        return _attribute_from(data, where=where, source=str(data.get("source") or where))
    return _swap_set_from({**data, "kind": kind}, where=where, name=name)


def load_pack(spec: str) -> Pack:
    """Any lexicon pack: a built-in name (an attribute of paper 000, ``dixon50``, ``gender``, ``names``,
    ``nationality``) or a YAML/JSON file whose ``kind`` is ``wordlist``, ``identity`` or ``gender``."""
    path = Path(spec).expanduser()
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        if not path.exists():
            raise ConfigError(f"pack file {path} does not exist")
        return _pack_from(_read_mapping(path), where=str(path), name=path.stem)
    if spec in known_identity_sets():
        return _builtin_swap_set(spec)
    return load_attribute(spec)


def is_swap_attribute(name: str) -> bool:
    """Whether ``--attributes`` names a swap pack (``gender``, ``names``, ``nationality``, an identity set or a pack
    file of kind identity/gender): its texts get swap variants, not ablation and substitution."""
    if name in known_identity_sets():
        return True
    path = Path(name).expanduser()
    if path.suffix.lower() in (".yaml", ".yml", ".json") and path.exists():
        return _read_mapping(path).get("kind") in ("identity", "gender")
    return False


def pack_kind(pack: Pack) -> str:
    return "wordlist" if isinstance(pack, Attribute) else "gender" if isinstance(pack, GenderSet) else "identity"


def describe_pack(pack: Pack) -> JSONObject:
    """A pack's kind, provenance, size and contents, for ``counterfair attributes show``."""
    out: dict[str, Any] = {"name": pack.name, "kind": pack_kind(pack)}
    if isinstance(pack, Attribute):
        return {**out, **pack.info, "terms": len(pack.terms), **pack.to_dict()}
    out |= dict(pack.info) | {"terms": len(pack.terms)}
    if isinstance(pack, GenderSet):
        return out | {"grammar": pack.grammar, "words": [list(r) for r in pack.rows]}
    members: dict[str, list[str]] = {}
    for term in pack.terms:
        members.setdefault(pack.group_of(term), []).append(term)
    return out | {
        "case_sensitive": pack.case_sensitive,
        "targets": pack.targets,
        "groups": members,
        "ambiguous": sorted(pack.ambiguous),
        "places": {t: pack.forms_of(t).place for t in pack.terms if pack.forms_of(t).place},
    }


def pack_catalogue() -> list[JSONObject]:
    """Every built-in pack: name, kind, version, language, number of terms and source (its JSON description's)."""
    from ..language_registry import languages

    packs: list[Pack] = [load_attribute(name, code) for code in languages() for name in known_attributes(code)]
    packs += [load_pack(name) for name in known_identity_sets()]
    rows: list[JSONObject] = []
    for pack in packs:
        info = describe_pack(pack)
        rows.append({k: info.get(k) for k in ("name", "kind", "version", "language", "terms", "source")})
    return rows


def validate_pack(path: str | Path) -> tuple[Pack, list[str]]:
    """Load a pack file (every structural error is a :class:`ConfigError` naming the file and the key) and return it
    with warnings about things that load but are likely mistakes."""
    pack = load_pack(str(path))
    warnings: list[str] = []
    if isinstance(pack, IdentitySet):
        if not pack.case_sensitive:
            from spacy.lang.en.stop_words import STOP_WORDS

            common = sorted(t for t in pack.terms if t.lower() in STOP_WORDS)
            if common:
                warnings.append(f"terms that are common English words, matched in any case: {', '.join(common)}")
        defaulted = sorted(t for t in pack.terms if t.lower() not in pack.forms)
        if defaulted:
            shown = ", ".join(defaulted[:8])
            warnings.append(f"{len(defaulted)} terms have no forms; as nouns they become '<term> person': {shown}")
        sizes: dict[str, int] = {}
        for term in pack.terms:
            sizes[pack.group_of(term)] = sizes.get(pack.group_of(term), 0) + 1
        lonely = sorted(g for g, n in sizes.items() if n == 1 and g != "other")
        if lonely:
            warnings.append(f"groups with a single term: {', '.join(lonely)}")
    if isinstance(pack, GenderSet):
        lacking = [m for m, _, n in pack.rows if n is None]
        if lacking:
            warnings.append(
                f"{len(lacking)} rows have no neutral form (no non-binary variant): {', '.join(lacking[:8])}"
            )
    return pack, warnings
