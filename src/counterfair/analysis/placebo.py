"""The placebo words of an identity audit: words that describe a person and name no group ("quiet", "busy"), put in
each identity slot beside the identity terms, in the same grammatical form ("Muslims" -> "quiet people", "a Muslim" ->
"a quiet person"), by the same swap machinery. The in-slot measures (:mod:`counterfair.analysis.slots`) compare a
text's score with each identity term against its score with these words: the part of a change due to the identity,
not to an edit of that kind.

The placebo words ship with each language's entry as ``languages/<code>/placebo.yaml`` (written by
``tools/placebo_frequencies.py``, with each word's Zipf frequency); a user's file (``--placebo FILE``) replaces them:
``words:`` a mapping word -> Zipf frequency or a plain list, and for an inflected language (``language: fr|de|es``)
``inflections:`` in the identity packs' format, so that the swap of
:class:`~counterfair.editors.inflected.InflectedSwapEditor` writes each placebo with the agreement it gives an
identity term ("une musulmane pratiquante" -> "une curieuse pratiquante", "einen Muslim" -> "einen neugierigen
Menschen"); an occurrence it cannot write that way gets no placebo.

(Until 2026-11-28 the audit also computed an older statistic here, each identity swap's |change| minus a
frequency-matched placebo swap's; the in-slot measures replaced it: one statistic, see docs/changelog.md.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..editors.registry import swaps_identities
from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..language_registry import DEFAULT_LANGUAGE, get_language, languages
from ..lexicons.attributes import IdentitySet, TermInflection


@dataclass(frozen=True)
class PlaceboSet:
    """Words that describe a person and name no group, with their Zipf frequencies (``None``: unknown)."""

    name: str
    words: Mapping[str, float | None]
    source: str = ""
    language: str = DEFAULT_LANGUAGE
    inflections: Mapping[str, TermInflection] = field(default_factory=dict)  # French and German: each word's forms

    def to_dict(self) -> JSONObject:
        out: JSONObject = {"name": self.name, "words": dict(self.words), "source": self.source}
        return {**out, "language": self.language} if self.inflections else out


def builtin_placebo_path(language: str | None = None) -> Path:
    """The placebo words a language ships (its entry's ``placebo`` file)."""
    entry = get_language(language)
    return entry.path(entry.placebo)


def load_placebo(spec: str | None, identities: IdentitySet | None = None) -> PlaceboSet | None:
    """``None``/``"none"``: no placebo; a language's code (``"en"``, ``"fr"``, ``"de"``, ``"es"``): its built-in words
    (``"default"``: of ``identities``' language); else a YAML or JSON file. A placebo word that is one of
    ``identities``' terms is an error (it would not be a placebo), and so is a set in another language than theirs."""
    if spec is None or spec.lower() in ("none", "off", "no"):
        return None
    key = spec.lower()
    if key in ("default", "builtin"):
        key = identities.language if identities is not None else DEFAULT_LANGUAGE
    path = builtin_placebo_path(key) if key in languages() else Path(spec)
    if not path.exists():
        codes = ", ".join(languages())
        raise ConfigError(f"--placebo {spec}: no such file (a YAML file with words:, a language ({codes}), or none)")
    from ..yamlfiles import read_mapping

    data = read_mapping(path, "--placebo")
    if not data.get("words"):
        raise ConfigError(f"--placebo {path}: needs a non-empty 'words:' (a list, or a mapping word -> Zipf frequency)")
    raw = data["words"]
    words: dict[str, float | None] = {}
    for i, item in enumerate(raw.items() if isinstance(raw, Mapping) else ((w, None) for w in raw)):
        word, zipf = item
        if not isinstance(word, str) or not word.strip():
            raise ConfigError(f"--placebo {path}: word {i + 1} is not a word ({word!r})")
        if zipf is not None and not isinstance(zipf, int | float):
            raise ConfigError(f"--placebo {path}: the frequency of {word!r} is not a number ({zipf!r})")
        words[word.strip()] = None if zipf is None else float(zipf)
    if identities is not None:
        clash = sorted(w for w in words if w.lower() in {t.lower() for t in identities.terms})
        if clash:
            raise ConfigError(f"--placebo {path}: {', '.join(clash)} is an identity term, not a placebo")
    language, inflections = _language_forms(data, words, path, identities)
    name, source = str(data.get("name") or path.stem), str(data.get("source") or "")
    return PlaceboSet(name, words, source, language, inflections)


def _language_forms(
    data: Mapping[str, Any], words: Mapping[str, Any], path: Path, identities: IdentitySet | None
) -> tuple[str, dict[str, TermInflection]]:
    """The placebo set's language (that of the identity set it serves) and, in French and German, its words' forms."""
    from ..lexicons.attributes import parse_inflections

    try:
        entry = get_language(str(data.get("language") or DEFAULT_LANGUAGE))
        language = entry.code
    except ConfigError as err:
        raise ConfigError(f"--placebo {path}: 'language': {err}") from None
    if identities is not None and identities.language != language:
        raise ConfigError(
            f"--placebo {path}: its words are in {language!r} but the identity set {identities.name} is in "
            f"{identities.language!r}; use --placebo {identities.language} or a file in that language"
        )
    if not entry.inflected:
        return language, {}
    if "inflections" not in data:
        raise ConfigError(
            f"--placebo {path}: {entry.name} placebo words need 'inflections' (the identity packs' format) so "
            "that the swap can write them with agreement"
        )
    known = {w.lower() for w in words}
    return language, parse_inflections(data["inflections"], known, language, where=f"--placebo {path}")


def swapped_matches(
    rows: Sequence[Mapping[str, Any]], editor: Any, identities: IdentitySet, attribute: str = "identity"
) -> dict[Any, list[Any]]:
    """Per input id of an identity swap (of ``attribute``: the audit's identity set, or a swap pack), the occurrences
    of identity terms (``editor.find``) that its identity swaps replaced (their ``edits``): where a placebo word goes,
    so the identity guard's verdicts carry over."""
    terms = {t.lower() for t in identities.terms}
    spans: dict[Any, list[tuple[int, int]]] = {}
    texts: dict[Any, str] = {}
    for row in rows:
        if swaps_identities(row["method"]) and row.get("edits") and row.get("attribute", "identity") == attribute:
            spans.setdefault(row["input_id"], []).extend((e["start"], e["end"]) for e in json.loads(row["edits"]))
            texts[row["input_id"]] = row["source_text"]
    return {
        key: [
            m
            for m in editor.find(texts[key])
            if m.term.lower() in terms and any(s <= m.start and m.end <= e for s, e in edited)
        ]
        for key, edited in spans.items()
    }


def placebo_editor(identities: IdentitySet, placebo: PlaceboSet) -> Any:
    """The swap of the identity set's language that writes placebo words (:func:`~counterfair.editors.registry.
    identity_editor`, without the guard: its verdicts come from the identity swaps' edits). French and German swap over
    the identity terms and the placebo words together, each with its forms; English needs no forms for them."""
    from dataclasses import replace

    from ..editors.registry import identity_editor

    if get_language(identities.language).inflected:
        own = {t.lower() for t in identities.terms}
        extra = tuple(w for w in placebo.words if w.lower() not in own)
        inflections = {w.lower(): placebo.inflections[w.lower()] for w in extra}
        identities = replace(
            identities, train=identities.train + extra, inflections={**identities.inflections, **inflections}
        )
    return identity_editor(identities, guard=None)
