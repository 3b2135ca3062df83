"""Build the identity guard's noun table from WordNet 3.0 (Debian's ``wordnet-base``), so that the guard gives one
answer on every install (issue #34: with and without Debian's WordNet the guard blocked 10 and 39 occurrences).

The guard asks WordNet two questions about a lower-cased word or ``_``-joined compound, through NLTK's
``synsets(form, "n")`` (which lemmatises with ``morphy``):

- concrete: the first noun sense is filed under a lexicographer file of things (``CONCRETE_LEXNAMES``) and neither
  of the first two senses is ``noun.person`` ("car", "ears", "fats");
- compound: the form is a multi-word noun whose first sense is not ``noun.person`` ("black_eye").

Every form for which ``synsets`` is not empty is a noun lemma, a key of the noun exception list, or reaches a lemma
through one of morphy's noun suffix rules; the script lists all of those (the rules inverted over every lemma) and
asks the real reader, so the table answers exactly as NLTK over WordNet 3.0 does. Run:

    python tools/build_guard_lexicon.py    # writes src/counterfair/resources/lexicon/wordnet-nouns.txt.gz
"""

from __future__ import annotations

import gzip
from pathlib import Path

from counterfair.lexicons.nouns import CONCRETE_LEXNAMES
from counterfair.lexicons.wordnet import load_wordnet

OUT = Path(__file__).resolve().parents[1] / "src/counterfair/resources/lexicon/wordnet-nouns.txt.gz"


def candidate_forms(reader) -> set[str]:
    lemmas = {lemma for lemma, by_pos in reader._lemma_pos_offset_map.items() if "n" in by_pos}
    forms = set(lemmas) | set(reader._exception_map["n"])
    for lemma in lemmas:
        for old, new in reader.MORPHOLOGICAL_SUBSTITUTIONS["n"]:
            if lemma.endswith(new):
                forms.add(lemma[: len(lemma) - len(new)] + old)
    return forms


def main() -> None:
    reader = load_wordnet()
    concrete, compounds = [], []
    for form in sorted(candidate_forms(reader)):
        synsets = reader.synsets(form, "n")
        if not synsets:
            continue
        names = [s.lexname() for s in synsets[:2]]
        if names[0] in CONCRETE_LEXNAMES and "noun.person" not in names:
            concrete.append(form)
        if "_" in form and names[0] != "noun.person":
            compounds.append(form)
    header = [
        "# counterfair identity guard: noun facts derived from WordNet 3.0 by tools/build_guard_lexicon.py",
        "# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. (license: LICENSE-WORDNET)",
        "# concrete-lexnames: " + " ".join(sorted(CONCRETE_LEXNAMES)),
    ]
    body = ["[concrete]", *concrete, "[compound]", *compounds]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as handle:  # mtime 0: the same bytes on every build
        handle.write(("\n".join(header + body) + "\n").encode("utf-8"))
    print(
        f"{len(concrete)} concrete forms, {len(compounds)} non-person compounds -> {OUT} ({OUT.stat().st_size:,} bytes)"
    )


if __name__ == "__main__":
    main()
