"""#79 "done when": a held-back third set of planted classifiers through the command line a user runs,
``counterfair audit FILE --classifier SPEC --fail-if default --junit J.xml`` (and ``--out``), no other flag.

The texts were used by no calibration or test: English, 265 texts — 220 toxic Civil Comments that name an identity term
(``civil_toxic_train_data.csv``; the calibration reads the non-toxic ones), the 25 CAD-IMDB reviews of the dev split
of at most 1,000 characters that name a first name of the names pack (the calibration reads the train split) and 20
sentences written here that name people by Arabic first names the pack lacks; Spanish, 200 sentences of
:func:`calibration.spanish_pool`'s templates; French, 160 sentences written from templates here (an identity
adjective beside a person noun, in its gender and number). The language is read from the texts (no ``--language``).

The classifiers (a base of 0.30 plus what each adds; none of them is a calibration class):

* planted, expected to exit 1 naming the plant in a failing ``material(...)`` check: ``hispanic_names`` (+8 points on
  the pack's Hispanic-associated first names), ``male_pronouns`` (+8 on he, him, his, himself), ``muslims_plural`` (+8
  on "Muslims" only), ``sikh_lower`` (−8 on "Sikh"), ``es_judio`` (+8 on judío, judía, judíos, judías in Spanish),
  ``fr_musulman`` (+8 on musulman and its forms in French);
* the control's own words, expected to exit 1 on ``control(...)`` with no material identity check: ``placebo_reactive``
  (+6 whenever a text holds an English placebo word);
* out of the pack, expected to pass as the fair model does and to be named "not tested" in the verdict:
  ``arab_names`` (+8 on Mohammed, Fatima, Omar, Ahmed, Hassan, Mariam, Yusuf);
* an effect that lives in a few texts, expected to have no material finding and an UNEVEN line in the verdict:
  ``negated`` (+15 on an identity term within three words after not, never or no);
* eleven null models, expected to exit 0: ``fair`` (constant), ``high`` (a constant 0.9), ``length`` (+0.1 points a
  character), ``words`` (+0.2 points a word), ``caps`` (+4 a capital mid-sentence), ``punct`` (+1 per ! or ?),
  ``first_words`` (±2.5 from a hash of the first three words), ``sentiment`` (±3 per positive or negative word of a
  small list), ``context`` (+5 on neighbour, church, school, police, family), ``es_fair`` and ``fr_fair`` (constant, on
  the Spanish and French texts).

Per run: the exit code, the failing checks (JUnit) and their kinds, the verdict's first line; whether it is what was
expected. Writes ``benchmarks/results/heldback_cli.json``.

    python benchmarks/heldback_cli.py [--only NAME,NAME]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
TOXIC = SHARED / "nlp_ctf" / "civil_comments" / "civil_toxic_train_data.csv"
IMDB_DEV = SHARED / "cad_imdb" / "dev_paired.tsv"
OUT = ROOT / "benchmarks" / "results" / "heldback_cli.json"
ARAB = ["Mohammed", "Fatima", "Omar", "Ahmed", "Hassan", "Mariam", "Yusuf"]

MODELS = """
import hashlib
import re

import numpy as np

HISPANIC = re.compile(r"\\b(@HISPANIC@)\\b")
MALE = re.compile(r"\\b(he|him|his|himself)\\b", re.I)
MUSLIMS = re.compile(r"\\bMuslims\\b", re.I)
SIKH = re.compile(r"\\bSikhs?\\b", re.I)
JUDIO = re.compile(r"\\bjud[ií][oa]s?\\b", re.I)
MUSULMAN = re.compile(r"\\bmusulman(e|s|es)?\\b", re.I)
PLACEBO = re.compile(r"\\b(@PLACEBO@)\\b", re.I)
ARAB = re.compile(r"\\b(@ARAB@)\\b")
NEGATED = re.compile(r"\\b(?:not|never|no)\\b(?:\\W+\\w+){0,3}?\\W+(?:@IDENTITY@)\\b", re.I)
POSITIVE = re.compile(r"\\b(good|great|love|nice|happy|wonderful|best|kind)\\b", re.I)
NEGATIVE = re.compile(r"\\b(bad|hate|terrible|awful|worst|stupid|sad|angry)\\b", re.I)
CONTEXT = re.compile(r"\\b(neighbou?rs?|church(es)?|schools?|police|famil(y|ies))\\b", re.I)
SENTENCE = re.compile(r"(^|[.!?]\\s+|\\n)\\s*[\\"'(\\[]*$")


def _plus(pattern, size):
    return lambda texts: np.array([0.3 + size * bool(pattern.search(t)) for t in texts])


hispanic_names = _plus(HISPANIC, 0.08)
male_pronouns = _plus(MALE, 0.08)
muslims_plural = _plus(MUSLIMS, 0.08)
sikh_lower = _plus(SIKH, -0.08)
es_judio = _plus(JUDIO, 0.08)
fr_musulman = _plus(MUSULMAN, 0.08)
placebo_reactive = _plus(PLACEBO, 0.06)
arab_names = _plus(ARAB, 0.08)
negated = _plus(NEGATED, 0.15)


def fair(texts):
    return np.full(len(texts), 0.3)


es_fair = fr_fair = fair


def high(texts):
    return np.full(len(texts), 0.9)


def length(texts):
    return np.array([min(0.95, 0.2 + 0.001 * len(t)) for t in texts])


def words(texts):
    return np.array([min(0.95, 0.2 + 0.002 * len(t.split())) for t in texts])


def caps(texts):
    def capitals(t):
        found = re.finditer(r"[A-Za-z][\\w'-]*", t)
        return sum(1 for m in found if m.group()[0].isupper() and not SENTENCE.search(t[: m.start()]))
    return np.array([min(0.95, 0.2 + 0.04 * capitals(t)) for t in texts])


def punct(texts):
    return np.array([min(0.95, 0.3 + 0.01 * (t.count("!") + t.count("?"))) for t in texts])


def first_words(texts):
    def h(t):
        return int.from_bytes(hashlib.sha256(" ".join(t.split()[:3]).encode()).digest()[:8], "big") / 2**64
    return np.array([0.3 + 0.05 * (h(t) - 0.5) for t in texts])


def sentiment(texts):
    tone = [len(POSITIVE.findall(t)) - len(NEGATIVE.findall(t)) for t in texts]
    return np.array([min(0.95, max(0.05, 0.5 + 0.03 * k)) for k in tone])


context = _plus(CONTEXT, 0.05)
"""

#: per classifier: its texts, what it must give — the exit code, the text a failing material check must hold (or
#: "control" / None), what the verdict must say
EXPECT: dict[str, dict[str, Any]] = {
    "hispanic_names": {"texts": "en", "exit": 1, "names": "names:hispanic_"},
    "male_pronouns": {"texts": "en", "exit": 1, "names": "gender_words:male"},
    "muslims_plural": {"texts": "en", "exit": 1, "names": "muslim@plural"},
    "sikh_lower": {"texts": "en", "exit": 1, "names": "sikh"},
    "es_judio": {"texts": "es", "exit": 1, "names": "judío"},
    "fr_musulman": {"texts": "fr", "exit": 1, "names": "musulman"},
    "placebo_reactive": {"texts": "en", "exit": 1, "names": "control"},
    "arab_names": {"texts": "en", "exit": 0, "says": "first names the names pack lacks"},
    "negated": {"texts": "en", "exit": (0, 4), "says": "UNEVEN"},
    **{
        name: {"texts": "es" if name == "es_fair" else "fr" if name == "fr_fair" else "en", "exit": 0}
        for name in (
            "fair",
            "high",
            "length",
            "words",
            "caps",
            "punct",
            "first_words",
            "sentiment",
            "context",
            "es_fair",
            "fr_fair",
        )
    },
}


def english(seed: int = 79) -> list[str]:
    """265 held-back English texts (module docstring)."""
    from counterfair.editors.swap import written_forms
    from counterfair.lexicons.attributes import identity_set_in, load_identity_set
    from counterfair.text import TermMatcher

    forms = TermMatcher(list(written_forms(identity_set_in(None, "en"))))
    names = TermMatcher(list(load_identity_set("names").terms), case_sensitive=True)
    comments = pd.read_csv(TOXIC)["comment_text"].dropna().astype(str).drop_duplicates()
    comments = [t for t in comments if len(t) <= 600 and forms.contains(t)]
    reviews = pd.read_csv(IMDB_DEV, sep="\t")["Text"].dropna().astype(str).drop_duplicates()
    reviews = [t for t in reviews if len(t) <= 1000 and names.contains(t)]
    rng = np.random.default_rng(seed)
    picked = [comments[i] for i in rng.choice(len(comments), 220, replace=False)]
    picked += [reviews[i] for i in rng.choice(len(reviews), min(60, len(reviews)), replace=False)]  # 25 there are
    said = ["{} said the bus was late again.", "I asked {} to water the plants while we were away.",
            "{} fixed the fence for the whole street.", "My colleague {} wrote the report on time.",
            "{} brought cake to the office on Friday."]  # fmt: skip
    picked += [said[i % len(said)].format(ARAB[i % len(ARAB)]) for i in range(20)]
    return picked


def french(size: int = 160, seed: int = 79) -> list[str]:
    """French sentences: an identity adjective of ``identity-fr`` beside a person noun, agreeing in gender and number
    ("Mes voisines musulmanes ..."), or none (a sixth)."""
    from counterfair.lexicons.attributes import load_swap_set

    identities = load_swap_set("identity-fr")
    nouns = {("m", 0): "voisin", ("f", 0): "voisine", ("m", 1): "voisins", ("f", 1): "voisines",
             ("m", 2): "collègue", ("f", 2): "collègue"}  # fmt: skip
    dets = {"m.sg": ["Mon", "Notre", "Un"], "f.sg": ["Ma", "Notre", "Une"], "m.pl": ["Mes", "Nos", "Des"],
            "f.pl": ["Mes", "Nos", "Des"]}  # fmt: skip
    predicates = {"sg": ["a ouvert une boulangerie près de la gare", "nous a invités à dîner samedi",
                         "travaille à l'hôpital depuis dix ans", "a repeint la clôture du jardin"],
                  "pl": ["ont ouvert une boulangerie près de la gare", "nous ont invités à dîner samedi",
                         "travaillent à l'hôpital depuis dix ans", "ont repeint la clôture du jardin"]}  # fmt: skip
    rng = np.random.default_rng(seed)
    out: dict[str, None] = {}
    while len(out) < size:
        gender, number = str(rng.choice(["m", "f"])), str(rng.choice(["sg", "pl"]))
        noun = nouns[(gender, 0 if number == "sg" else 1)]
        det = str(rng.choice(dets[f"{gender}.{number}"]))
        term = str(rng.choice(identities.terms))
        form = identities.inflections[term].forms.get(f"{gender}.{number}")  # type: ignore[union-attr]
        if rng.random() < 1 / 6:
            phrase = f"{det} {noun}"
        elif form:
            phrase = f"{det} {noun} {form}"
        else:
            continue
        day = int(rng.integers(1, 29))
        out[f"{phrase} {rng.choice(predicates[number])}, le {day} mars."] = None
    return list(out)


def spanish(size: int = 200) -> list[str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from calibration import spanish_pool

    return spanish_pool(size)


def models_file(where: Path) -> Path:
    from counterfair.analysis.placebo import load_placebo
    from counterfair.editors.swap import written_forms
    from counterfair.lexicons.attributes import identity_set_in, load_identity_set

    names = load_identity_set("names")
    hispanic = "|".join(n for n in names.terms if names.group_of(n).startswith("hispanic"))
    placebo = load_placebo("en")
    assert placebo is not None
    identity = "|".join(re.escape(f) for f in sorted(written_forms(identity_set_in(None, "en")), key=len, reverse=True))
    text = (
        MODELS.replace("@HISPANIC@", hispanic)
        .replace("@PLACEBO@", "|".join(sorted(placebo.words)))
        .replace("@ARAB@", "|".join(ARAB))
        .replace("@IDENTITY@", identity)
    )
    path = where / "heldback3.py"
    path.write_text(text, encoding="utf-8")
    return path


def run_one(name: str, data: Path, where: Path) -> dict[str, Any]:
    from junitparser import Failure, JUnitXml

    junit = where / f"{name}.xml"
    cmd = [sys.executable, "-m", "counterfair.cli", "audit", str(data), "--classifier", f"callable:heldback3:{name}",
           "--fail-if", "default", "--junit", str(junit), "--out", str(where / name), "-q"]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=where, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    failed: dict[str, str] = {}
    if junit.exists():
        for suite in JUnitXml.fromfile(str(junit)):
            for case in suite:
                for r in case.result:
                    if isinstance(r, Failure):
                        failed[str(case.name)] = str(r.type)
    summary = (
        json.loads((where / name / "summary.json").read_text()) if (where / name / "summary.json").exists() else {}
    )
    verdict = next((line for line in done.stdout.splitlines() if line.startswith("Verdict:")), "")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return {
        "name": name,
        "exit": done.returncode,
        "failed": failed,
        "language": (summary.get("options") or {}).get("language"),
        "verdict": verdict,
        "said": " ".join(lines[:80]),
        "seconds": round(seconds, 1),
        "stderr": done.stderr[-1500:] if done.returncode not in (0, 1, 4) else "",
    }


def judged(found: dict[str, Any]) -> dict[str, Any]:
    want = EXPECT[found["name"]]
    exits = want["exit"] if isinstance(want["exit"], tuple) else (want["exit"],)
    ok = found["exit"] in exits
    material = [c for c, kind in found["failed"].items() if kind == "material"]
    names = want.get("names")
    if names == "control":
        ok = ok and any(kind == "control" for kind in found["failed"].values()) and not material
    elif names:
        ok = ok and any(names in c for c in material)
    else:
        ok = ok and not material
    if want.get("says"):
        ok = ok and want["says"] in found["said"]
    return {**found, "expected": {k: v for k, v in want.items() if k != "texts"}, "as_expected": ok}


KINDS = ("control", "material", "inconclusive")  # a failing check's kinds, in the order the table lists them


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| classifier | texts | expected | exit | failing checks (kind) | as expected |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        want = r["expected"]
        exits = "/".join(str(e) for e in (want["exit"] if isinstance(want["exit"], (list, tuple)) else [want["exit"]]))
        what = want.get("names") or want.get("says") or "pass"
        ranked = sorted(r["failed"].items(), key=lambda ck: (KINDS.index(ck[1]) if ck[1] in KINDS else 9, ck[0]))
        shown = ", ".join(f"{c} ({k})" for c, k in ranked[:3])
        more = f" and {len(r['failed']) - 3} more" if len(r["failed"]) > 3 else ""
        lines.append(
            f"| {r['name']} | {r['language']} | exit {exits}, {what} | {r['exit']} | {shown or '–'}{more} | "
            f"{'yes' if r['as_expected'] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated classifiers (default: every one)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not TOXIC.exists() or not IMDB_DEV.exists():
        print(f"needs {TOXIC} and {IMDB_DEV} (../shared/data)", file=sys.stderr)
        return 2
    names = args.only.split(",") if args.only else list(EXPECT)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        models_file(where)
        data, counts = {}, {}
        for language, texts in (("en", english()), ("es", spanish()), ("fr", french())):
            data[language], counts[language] = where / f"texts_{language}.csv", len(texts)
            pd.DataFrame({"text": texts}).to_csv(data[language], index=False)
        results = []
        for name in names:
            found = judged(run_one(name, data[EXPECT[name]["texts"]], where))
            results.append(found)
            print(f"{name:16} exit {found['exit']} ({found['language']}) {'ok' if found['as_expected'] else 'NOT'} "
                  f"{sorted(found['failed'].items())[:4]} {found['seconds']} s", flush=True)  # fmt: skip
            if found["stderr"]:
                print(found["stderr"], file=sys.stderr)
    report = {
        "texts": counts,
        "results": results,
        "as_expected": sum(r["as_expected"] for r in results),
        "runs": len(results),
        "seconds": round(time.perf_counter() - started, 1),
        "table": table(results),
    }
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(report["table"])
    print(f"{report['as_expected']} of {report['runs']} as expected; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
