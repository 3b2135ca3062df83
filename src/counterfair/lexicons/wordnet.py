"""WordNet 3.0 from Debian's packages (``apt-get install wordnet-base wordnet-sense-index``), read with NLTK.

NLTK expects ``<root>/corpora/wordnet/`` with a ``lexnames`` file that Debian does not ship; on first use the
data files are copied (28 MB) into ``<cache>/wordnet/corpora/wordnet/`` and the standard 45-line ``lexnames`` is
written there.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import ModelNotAvailable
from ..writing import atomic_open

DEBIAN_DIR = Path("/usr/share/wordnet")
APT = "apt-get install wordnet-base wordnet-sense-index && pip install nltk"
_LEXFILES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object noun.person "
    "noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl"
).split()
_SYNTACTIC_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def lexnames_text() -> str:
    """The standard WordNet ``lexnames`` file: number, lexicographer file, syntactic category."""
    return "".join(f"{i:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(_LEXFILES))


@cache
def load_wordnet(source: str | None = None) -> Any:
    """An NLTK WordNet reader over Debian's WordNet files (or ``source``, a directory with the same files)."""
    try:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError as err:
        raise ModelNotAvailable("the synonym editor needs NLTK and WordNet", pip=APT) from err
    src = Path(source or os.environ.get("COUNTERFAIR_WORDNET") or DEBIAN_DIR)
    if not (src / "data.noun").exists():
        raise ModelNotAvailable(f"WordNet data not found in {src}", pip=APT)
    from ..models import cache_root

    target = cache_root() / "wordnet" / "corpora" / "wordnet"
    target.mkdir(parents=True, exist_ok=True)
    import shutil

    # each file written through atomic_open (a temporary file renamed whole): another process (a second audit, a
    # test worker) never reads a half-copied file, and a killed copy is not taken for a finished one next time
    for item in src.iterdir():
        copy = target / item.name
        if item.is_file() and not copy.exists():
            with open(item, "rb") as source_file, atomic_open(copy, "wb") as out:
                shutil.copyfileobj(source_file, out)  # a copy: NLTK refuses symlinks that leave its data root
    if not (target / "lexnames").exists():
        with atomic_open(target / "lexnames", "w", encoding="utf-8") as out:
            out.write(lexnames_text())
    import nltk

    root = str(target.parent.parent)
    if root not in nltk.data.path:
        nltk.data.path.append(root)  # NLTK reads only from its registered data paths
    import warnings

    with warnings.catch_warnings():  # NLTK warns that the multilingual functions, which we do not use, are absent
        warnings.filterwarnings("ignore", message="The multilingual functions", category=UserWarning)
        return WordNetCorpusReader(str(target), None)
