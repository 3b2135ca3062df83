"""What the identity guard needs to know about English nouns, shipped with counterfair (derived from WordNet 3.0).

The guard blocks an ambiguous identity word ("black", "old", "straight") when it modifies or is predicated of a
thing rather than people, or starts a noun compound that is not a person ("black eye"). Two facts per lower-cased
word or ``_``-joined compound answer that, exactly as NLTK's ``synsets(form, "n")`` over WordNet 3.0 would:

- :meth:`NounFacts.concrete`: the first noun sense is filed under one of :data:`CONCRETE_LEXNAMES` and neither of the
  first two senses is a person ("car", "ears", "fats");
- :meth:`NounFacts.compound`: a multi-word noun whose first sense is not a person ("black_eye", "white_lie").

``tools/build_guard_lexicon.py`` derives the table (``resources/lexicon/wordnet-nouns.txt.gz``, 0.9 MB, with
WordNet's license beside it) from Debian's WordNet, so the guard answers the same on every install whether or not a
WordNet is present (issue #34). :data:`GUARD_LEXICON` names the table in editors' signatures.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import cache
from importlib import resources

# WordNet lexicographer files of things that are not people: a term modifying one of these ("a black car", "deaf
# ears", "trans fats", "an old house") is not an identity
CONCRETE_LEXNAMES = frozenset(
    f"noun.{name}" for name in ("artifact object substance food body plant animal phenomenon location shape".split())
)
GUARD_LEXICON = "wordnet-3.0-nouns/1"
_RESOURCE = "wordnet-nouns.txt.gz"


@dataclass(frozen=True)
class NounFacts:
    concrete_forms: frozenset[str]
    compound_forms: frozenset[str]

    def concrete(self, form: str) -> bool:
        return form in self.concrete_forms

    def compound(self, form: str) -> bool:
        return form in self.compound_forms


@cache
def noun_facts() -> NounFacts:
    """The shipped noun table (read once per process: about 0.2 s)."""
    raw = resources.files("counterfair.resources").joinpath("lexicon").joinpath(_RESOURCE).read_bytes()
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    lexnames = ""
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        if line.startswith("# concrete-lexnames: "):
            lexnames = line.split(": ", 1)[1]
        elif line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
        elif line and not line.startswith("#"):
            current.append(line)
    if frozenset(lexnames.split()) != CONCRETE_LEXNAMES:
        raise RuntimeError(f"{_RESOURCE} was built for other lexicographer files: run tools/build_guard_lexicon.py")
    return NounFacts(frozenset(sections["concrete"]), frozenset(sections["compound"]))
