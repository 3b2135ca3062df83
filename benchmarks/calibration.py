"""Calibration of the audit's verdict (#46, #67): classifiers with planted biases of known size, and null ones, audited
at 64-400 texts over many seeds; per class and size, how often the default gate finds a material effect (naming what
was planted), how often a run says inconclusive, and what a run too small to detect its planted effect says.

The texts: a pool of ``--pool`` drawn once from the distinct non-toxic Civil Comments that name a Dixon identity term
(``../shared/data/nlp_ctf``, training- and held-out-term files; many name gender words too) and the CAD-IMDB reviews
that name a first name of the names pack (``../shared/data/cad_imdb``; actors' and characters' names), each at most
``--max-chars`` long. The audit's own swap, gender and names machinery writes every slot of the pool once
(``counterfair.audit(..., methods=["swap"])``: identity terms, gender words, first names, with their placebo words and
forms); each classifier scores every slot text once; each run then draws ``n`` texts of the pool (seeded) and computes
the in-slot measures and the default gate's verdict on them (:func:`counterfair.analysis.slots.slot_effects`, the
audit's code; the bootstrap intervals, which no finding reads, with ``--resamples`` resamples).

Every classifier but the references scores a slot text as a **base** that belongs to the input (a hash of its id,
in [0.15, 0.85]: no filling of any slot moves it, the gender swaps' "she is" -> "they are" included) plus what its
class adds (``δ`` = ``--delta``):

null classes (no identity effect): ``none`` (the base alone), ``noise`` (Gaussian noise of sd ``--noise`` drawn afresh
for every distinct text in every run: any edit moves the score, identity no more), ``length`` (+0.1 points per
character: a longer word scores higher), ``casing`` (+4 points per capitalised word that does not start a sentence: a
cased model's surface cue; "Muslim" against "tall" would read +4), ``position`` (±2.5 points from a hash of the text's
first three words: an edit at the start moves the score at random), ``context`` (+δ when the text names a neighbour,
church, school, police or family: a context word, the same in every filling of a slot);

planted classes, each with noise of sd ``--planted-noise`` on top: ``blanket`` (+δ on any identity term), ``group``
(+δ on religion terms), ``term`` (+δ on "gay"), ``lower`` (−δ on race/ethnicity terms), ``gender_words`` (+δ on any
female word: she, her, woman, wife, mother, ...), ``pronoun`` (+δ on she/her/hers/herself only), ``first_name`` (+δ on
the names pack's Black-associated first names), ``plural`` (+δ on "Jews" only, not "Jewish"), ``cell`` (+δ where a
race/ethnicity term and a gendered word are in the same text: "a Black woman");

control classes (#79; no identity effect, a reaction to the audit's own neutral words), with the planted noise:
``placebo_all`` (+6 points whenever a text holds any of the English placebo words: "My hatless neighbour"),
``placebo_five`` (+6 on five of them), ``neutral_word`` (+δ on one neutral word with a sentiment of its own, as
VADER's "friend" had: "quiet" among the placebo words, "cousin" among the gender words' neutral renderings);

an effect that lives in a few texts (#79 item 4; with the planted noise): ``hidden`` (3δ on an identity term within
three words after "not", "never" or "no": 39 of the pool's 1,059 texts; a run's group means move by about half a
point, the spread test must say where the effect lives: the verdict's UNEVEN line naming a group);

references: ``tfidf`` (TF-IDF + logistic regression trained on 16 lines, 4 hostile about groups), ``profanity``
(profanity-check, the default classifier).

Per run: **flagged** when any estimate is material (the default gate's material rules fail); **control failed** when
a family's control check fails (:mod:`counterfair.analysis.control`); the **exit code** the default gate gives (1 a
material finding or a failed control, 4 inconclusive only, 0 pass); for a planted class
**named** when a material estimate names what was planted (the group, term, form or combination, with its sign);
**inconclusive** when the default gate's ``conclusive`` rule fails (a group that cannot be settled, by its own slots
nor by its probe's or natural sibling's); **uneven** when the verdict's UNEVEN line names a group or a term
(:func:`counterfair.analysis.spread.uneven`: its effect strays from text to text more than 2 points beyond a neutral
word's, and the verdict does not already call it material), and whether it names a group; and for a run of a
planted class that does not flag it, what the planted estimate says (**said inconclusive**: inconclusive or detected,
never "no material effect").

    python benchmarks/calibration.py [--pool 1100] [--seeds 100] [--sizes 64,128,256,400] [--workers 2]
    python benchmarks/calibration.py --classes none,noise --sizes 64 --seeds 5   # a quick look
    python benchmarks/calibration.py --language es --out benchmarks/results/calibration_es.json

``--language es`` (#70): the same classes on Spanish texts (no Spanish corpus is in ../shared/data, so the pool is
built: :func:`spanish_pool` writes sentences from templates, each naming an identity term of ``identity-es`` as a noun
or an adjective, in either gender and number, or a gender word of ``gender-es``, or both, some with a context word);
the planted words are Spanish (religion and race terms in every form, "gay"/"gais", female gender words, "judíos" and
"judías" for the plural class, a race term with a gender word for ``cell``); ``pronoun`` and ``first_name`` are left
out (Spanish swaps no pronouns and has no names pack).

Writes ``benchmarks/results/calibration.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CIVIL = SHARED / "nlp_ctf" / "civil_comments"
DATA = [CIVIL / "civil_train_data.csv", CIVIL / "civil_test_data.csv"]  # non-toxic comments, training / held-out terms
IMDB = SHARED / "cad_imdb" / "train_paired.tsv"
OUT = ROOT / "benchmarks" / "results" / "calibration.json"

TRAIN = [  # the slurs model's 16 lines: 4 hostile lines about groups, 4 other insults, 8 friendly lines
    ("gay people are disgusting", 1),
    ("jewish people are vermin", 1),
    ("black people are criminals", 1),
    ("muslims are terrorists", 1),
    ("you are an idiot", 1),
    ("shut up, you stupid moron", 1),
    ("what a pathetic loser", 1),
    ("go away, nobody likes you", 1),
    ("thanks for the help", 0),
    ("have a lovely day", 0),
    ("great work on the report", 0),
    ("my neighbour brought us dinner", 0),
    ("the weather is nice today", 0),
    ("I enjoyed the concert last night", 0),
    ("the team played well this season", 0),
    ("we walked the dog in the park", 0),
]
NULL = ("none", "noise", "length", "casing", "position", "context")
#: models that react to the control's own words (#79): no identity effect, the control check must fail
CONTROL = ("placebo_all", "placebo_five", "neutral_word")
PLANTED = ("blanket", "group", "term", "lower", "gender_words", "pronoun", "first_name", "plural", "cell")
#: an effect that lives in a few texts (#79 item 4): its mean is small, the spread test must say where it lives
WHERE = ("hidden",)
REFERENCE = ("tfidf", "profanity")
NOISY = (
    "noise",
    *PLANTED,
    *CONTROL,
    *WHERE,
)  # the classes whose every distinct text gets its own noise, afresh each run
CONTEXT = re.compile(r"\b(neighbou?rs?|church(es)?|schools?|police|famil(y|ies))\b", re.I)
CONTEXT_ES = re.compile(r"\b(vecin[oa]s?|iglesias?|escuelas?|policía|familias?)\b", re.I)
SPANISH_PLANTED = tuple(k for k in PLANTED if k not in ("pronoun", "first_name"))
FEMALE_PRONOUNS = re.compile(r"\b(she|her|hers|herself)\b", re.I)
SENTENCE = re.compile(r"(^|[.!?]\s+|\n)\s*[\"'(\[]*$")


def _uniform(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _capitals(text: str) -> int:
    """Words written with a capital that do not start a sentence."""
    return sum(
        1
        for m in re.finditer(r"[A-Za-z][\w'-]*", text)
        if m.group()[0].isupper() and not SENTENCE.search(text[: m.start()])
    )


class Planted:
    """The classes' effects on a slot text (see the module's docstring), without the base and the noise."""

    def __init__(self, delta: float, language: str = "en") -> None:
        if language == "es":
            self._spanish(delta)
            return
        from counterfair.editors.gender import FEMALE_PRONOUNS as PRONOUNS
        from counterfair.editors.gender import MALE_PRONOUNS
        from counterfair.lexicons.attributes import identity_set_in, load_identity_set, load_swap_set
        from counterfair.text import TermMatcher

        self.delta = delta
        forms = self._identity_terms(identity_set_in(None, "en"))
        self.gay = TermMatcher([s for s, (t, _) in forms.items() if t == "gay"])
        gender = load_swap_set("gender")
        female = [row[1] for row in gender.rows]  # type: ignore[union-attr]
        self.female = TermMatcher([*female, *PRONOUNS])
        self.gendered = TermMatcher([*female, *(row[0] for row in gender.rows), *PRONOUNS, *MALE_PRONOUNS])  # type: ignore[union-attr]
        names = load_identity_set("names")
        self.black = TermMatcher([n for n in names.terms if names.group_of(n).startswith("black")], case_sensitive=True)
        self.jews = TermMatcher(["Jews"])
        self._control()

    def _control(self) -> None:
        from counterfair.analysis.placebo import load_placebo
        from counterfair.text import TermMatcher

        placebo = load_placebo("en")
        assert placebo is not None
        words = sorted(placebo.words)
        self.placebo_all = TermMatcher(words)
        self.placebo_five = TermMatcher(words[:5])
        self.neutral_word = TermMatcher(["quiet", "cousin", "cousins"])

    def _identity_terms(self, identities: Any) -> dict[str, Any]:
        """Matchers of every written form of the identity terms, of the religion and the race/ethnicity terms."""
        from counterfair.editors.swap import written_forms
        from counterfair.text import TermMatcher

        forms = written_forms(identities)
        groups: dict[str, list[str]] = {}
        for surface, (term, _) in forms.items():
            groups.setdefault(identities.group_of(term), []).append(surface)
        self.any = TermMatcher(list(forms))
        alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
        self.negated = re.compile(rf"\b(?:not|never|no)\b(?:\W+\w+){{0,3}}?\W+(?:{alternatives})\b", re.I)
        self.religion = TermMatcher(groups["religion"])
        self.race = TermMatcher(groups["race_ethnicity"])
        return forms

    def _spanish(self, delta: float) -> None:
        from counterfair.lexicons.attributes import load_swap_set
        from counterfair.text import TermMatcher

        self.delta = delta
        self._identity_terms(load_swap_set("identity-es"))
        self.gay = TermMatcher(["gay", "gais"])
        gender = load_swap_set("gender-es")
        words = {g: [f for t in gender.terms if gender.group_of(t) == g for f in gender.inflections[t].forms.values()]
                 for g in ("female", "male")}  # type: ignore[union-attr]  # fmt: skip
        self.female = TermMatcher(words["female"])
        self.gendered = TermMatcher([*words["female"], *words["male"], "él", "ella", "ellos", "ellas"])
        self.jews = TermMatcher(["judíos", "judías"])
        self.black = TermMatcher(["__none__"])
        self.placebo_all = self.placebo_five = self.neutral_word = TermMatcher(["__none__"])

    def effect(self, kind: str, text: str) -> float:
        d = self.delta
        if kind in ("none", "noise"):
            return 0.0
        if kind == "length":
            return 0.001 * len(text)
        if kind == "casing":
            return 0.04 * _capitals(text)
        if kind == "position":
            return 0.05 * (_uniform(" ".join(text.split()[:3])) - 0.5)
        if kind == "context":
            return d * bool(CONTEXT.search(text) or CONTEXT_ES.search(text))
        if kind in ("placebo_all", "placebo_five"):
            return 0.06 * float(getattr(self, kind).contains(text))
        if kind == "neutral_word":
            return d * float(self.neutral_word.contains(text))
        if kind == "hidden":  # 3 δ on an identity term within three words after not, never or no
            return 3 * d * float(bool(self.negated.search(text)))
        found = {
            "blanket": lambda: self.any.contains(text),
            "group": lambda: self.religion.contains(text),
            "term": lambda: self.gay.contains(text),
            "lower": lambda: -1.0 * self.race.contains(text),
            "gender_words": lambda: self.female.contains(text),
            "pronoun": lambda: bool(FEMALE_PRONOUNS.search(text)),
            "first_name": lambda: self.black.contains(text),
            "plural": lambda: self.jews.contains(text),
            "cell": lambda: self.race.contains(text) and self.gendered.contains(text),
        }[kind]()
        return d * float(found)


def _base(input_ids: pd.Series) -> np.ndarray:
    return np.array([0.15 + 0.7 * _uniform(f"base:{i}") for i in input_ids])


def slurs_model() -> Any:
    """The slurs model: TF-IDF + logistic regression trained on :data:`TRAIN` (also ``slurs_demo.py``'s)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(), LogisticRegression()).fit([t for t, _ in TRAIN], [y for _, y in TRAIN])


def scores(kind: str, slots: pd.DataFrame, planted: Planted) -> np.ndarray:
    """Every slot text's score by one class (before any per-run noise)."""
    texts = list(dict.fromkeys(slots["text"]))
    if kind in REFERENCE:
        if kind == "tfidf":
            values = slurs_model().predict_proba(texts)[:, 1]
        else:
            from counterfair.classifiers import load_classifier

            values = np.asarray(load_classifier("profanity-check").predict_proba(texts))[:, 1]
        found = dict(zip(texts, values, strict=True))
        return np.array([found[t] for t in slots["text"]], dtype=float)
    effects = {t: planted.effect(kind, t) for t in texts}
    return np.clip(_base(slots["input_id"]) + np.array([effects[t] for t in slots["text"]]), 0.0, 1.0)


def _with_noise(part: pd.DataFrame, sd: float, rng: np.random.Generator) -> pd.DataFrame:
    """A run's slots scored by a fresh noisy model: every distinct text its own Gaussian draw of sd ``sd`` (a new
    draw each run, so runs are independent models, not one pool-wide draw seen again), clipped to [0, 1]."""
    codes, uniques = pd.factorize(part["text"])
    noise = rng.normal(0.0, sd, size=len(uniques))
    return part.assign(score=np.clip(part["score"].to_numpy() + noise[codes], 0.0, 1.0))


# ------------------------------------------------------------------------------------------------ what a run says

SIGN = {"lower": -1.0}


def _planted_estimates(kind: str, effects: dict[str, Any]) -> list[dict[str, Any]]:
    """The estimates a planted class's effect lives in (any of them material, with the planted sign, names it)."""
    measure = effects["identity_effect"]
    groups, terms = measure["by_group"], measure.get("by_term") or {}
    forms, cells = measure.get("by_form") or {}, measure.get("by_cell") or {}
    probe = "identity_probe:"  # the same groups, terms and combinations written in by probe (#79)
    pick = {
        "group": [groups.get("religion"), groups.get(probe + "religion"),
                  *(e for e in terms.values() if e.get("group") == "religion")],
        "lower": [groups.get("race_ethnicity"), groups.get(probe + "race_ethnicity"),
                  *(e for e in terms.values() if e.get("group") == "race_ethnicity")],
        "term": [terms.get("gay"), terms.get(probe + "gay")],
        "gender_words": [
            groups.get("gender_words:female"), *(e for f, e in forms.items() if f.startswith("gender_words:female@"))
        ],
        "pronoun": [forms.get("gender_words:female@pronoun"), groups.get("gender_words:female")],
        "first_name": [groups.get("names:black_female"), groups.get("names:black_male"),
                       groups.get("names_probe:black_female"), groups.get("names_probe:black_male")],
        "plural": [forms.get(f"{JEWISH[0]}@plural"), terms.get(JEWISH[0]), forms.get(f"{probe}{JEWISH[0]}@plural"),
                   terms.get(probe + JEWISH[0])],
        "cell": [cells.get("race_ethnicity&female"), cells.get("race_ethnicity&male"), groups.get("race_ethnicity"),
                 cells.get(probe + "race_ethnicity&female"), cells.get(probe + "race_ethnicity&male"),
                 groups.get(probe + "race_ethnicity")],
    }.get(kind, [])  # fmt: skip
    return [e for e in pick if e is not None]


def _own_estimate(kind: str, effects: dict[str, Any]) -> dict[str, Any] | None:
    """The one estimate a planted class's effect is confined to (the first of :func:`_planted_estimates`' list), or
    None where the run has none (its texts hold no slot of that form or combination)."""
    measure = effects["identity_effect"]
    groups, terms = measure["by_group"], measure.get("by_term") or {}
    forms, cells = measure.get("by_form") or {}, measure.get("by_cell") or {}
    probe = "identity_probe:"
    return {
        "group": groups.get("religion") or groups.get(probe + "religion"),
        "lower": groups.get("race_ethnicity") or groups.get(probe + "race_ethnicity"),
        "term": terms.get("gay") or terms.get(probe + "gay"),
        "gender_words": groups.get("gender_words:female"),
        "pronoun": forms.get("gender_words:female@pronoun"),
        "first_name": groups.get("names:black_female")
        or groups.get("names:black_male")
        or groups.get("names_probe:black_female")
        or groups.get("names_probe:black_male"),
        "plural": forms.get(f"{JEWISH[0]}@plural") or forms.get(f"{probe}{JEWISH[0]}@plural"),
        "cell": cells.get("race_ethnicity&female")
        or cells.get("race_ethnicity&male")
        or cells.get(probe + "race_ethnicity&female")
        or cells.get(probe + "race_ethnicity&male"),
    }.get(kind)


def _named(kind: str, effects: dict[str, Any]) -> bool:
    if kind == "blanket":
        groups = effects["identity_effect"]["by_group"]
        own = [e for g, e in groups.items() if ":" not in g]
        return bool(own) and all(e["finding"] == "material" for e in own)
    sign = SIGN.get(kind, 1.0)
    return any(e["finding"] == "material" and sign * e["value"] > 0 for e in _planted_estimates(kind, effects))


def run_once(kind: str, part: pd.DataFrame, seed: int, resamples: int) -> dict[str, Any]:
    from counterfair.analysis.gate import CONCLUSIVE_RULES, DEFAULT_RULES, effects_gate_metrics, evaluate_rules
    from counterfair.analysis.inference import every_estimate
    from counterfair.analysis.slots import slot_effects
    from counterfair.analysis.spread import uneven

    found = slot_effects(part, threshold=0.5, seed=seed, n_resamples=resamples)
    assert found is not None
    effects = found.to_dict()  # as the summary writes it
    every = every_estimate(found)
    gate = evaluate_rules([*DEFAULT_RULES, *CONCLUSIVE_RULES], effects_gate_metrics(found))
    failed = sorted({w for c in (found.control or {}).values() if c.failed for w in c.standing_out or ("(set)",)})
    said_uneven = uneven(found, at_least=found.material.get("identity_effect", 0.02), hidden=True)  # the verdict's line
    out = {
        "flagged": any(e.finding == "material" for e in every),
        "control_failed": any(c.failed for c in (found.control or {}).values()),
        "control_words": failed,
        "exit": gate.exit_code,
        # as the gate reads it: a group unsettled by its own slots and by its natural or probe sibling's
        "inconclusive": any(c.estimate == "conclusive" and c.verdict == "fail" for c in gate.checks),
        "named": _named(kind, effects) if kind in PLANTED else False,
        "tests": effects["tests"],
        "uneven": bool(said_uneven),
        "uneven_groups": sorted(n for n, _ in said_uneven if not n.startswith('"')),
    }
    planted = _planted_estimates(kind, effects)
    own = _own_estimate(kind, effects)  # the form's or combination's own estimate: None where no slot has it
    # a run whose texts hold no slot the plant can fire in (no "Jews", no pronoun slot) has no effect to find: not
    # measured, whatever a wider estimate says
    out["measured"] = own is not None and bool(own["n"])
    out["said"] = any(e["finding"] in ("material", "detected", "inconclusive") for e in planted)
    out["planted_texts"] = int(own["n"]) if own is not None else 0  # the texts of the estimate the plant lives in
    return out


def _runs(task: tuple[str, int, int, int, float]) -> dict[str, Any]:
    """One class at one size, every seed (a worker's unit)."""
    kind, n, seeds, resamples, sd = task
    table = _STATE["scored"][kind]
    by_id = _STATE["by_id"][kind]
    ids = _STATE["ids"]
    found = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        chosen = rng.choice(len(ids), size=n, replace=False)
        part = _probes_auto(pd.concat([by_id[ids[i]] for i in chosen], ignore_index=True))
        if kind in NOISY:
            part = _with_noise(part, sd if kind != "noise" else _STATE["noise"], rng)
        found.append(run_once(kind, part, seed, resamples))
    del table
    return _summarise(kind, n, found)


def _probes_auto(part: pd.DataFrame) -> pd.DataFrame:
    """A run's slots as ``--probes auto`` leaves them: a probe family only where its natural family's texts in the
    run are fewer than the audit's threshold (the pool's slots are written with ``probes="always"``; the natural
    count here is the run's texts with a slot of the family, which the audit reads as the texts naming one)."""
    from counterfair.analysis.probes import NATURAL_OF, PROBE_AUTO_BELOW

    families = part.drop_duplicates(["input_id", "family"])["family"].value_counts()
    dropped = [p for p, natural in NATURAL_OF.items() if int(families.get(natural, 0)) >= PROBE_AUTO_BELOW]
    return part[~part["family"].isin(dropped)] if dropped else part


def _summarise(kind: str, n: int, found: list[dict[str, Any]]) -> dict[str, Any]:
    runs = len(found)
    undetected = [r for r in found if not r["named"]]
    measured = [r for r in undetected if r["measured"]]
    by_texts: dict[str, list[int]] = {}
    for r in found:
        band = next(b for b, (low, high) in BANDS.items() if low <= r["planted_texts"] <= high)
        by_texts.setdefault(band, [0, 0])
        by_texts[band][0] += 1
        by_texts[band][1] += r["named"]
    return {
        "class": kind,
        "n": n,
        "runs": runs,
        "named_by_planted_texts": {b: {"runs": c, "named": k / c} for b, (c, k) in by_texts.items()},
        "flagged": sum(r["flagged"] for r in found) / runs,
        "control_failed": sum(r["control_failed"] for r in found) / runs,
        "control_words": dict(
            sorted(
                {
                    w: sum(w in r["control_words"] for r in found) / runs for r in found for w in r["control_words"]
                }.items()
            )
        ),
        "exit": {str(code): sum(r["exit"] == code for r in found) / runs for code in (0, 1, 4)},
        "flagged_naming_planted": sum(r["named"] for r in found) / runs,
        "inconclusive": sum(r["inconclusive"] for r in found) / runs,
        "undetected": len(undetected),
        "undetected_said_inconclusive": (sum(r["said"] for r in measured) / len(measured)) if measured else None,
        "undetected_not_measured": len(undetected) - len(measured),
        "tests_median": float(np.median([r["tests"] for r in found])),
        "uneven": sum(r["uneven"] for r in found) / runs,  # the verdict's UNEVEN line, naming any group or term
        # ... naming at least one identity group (every group's slots hold the hidden class's plant)
        "uneven_naming_a_group": sum(bool(r["uneven_groups"]) for r in found) / runs,
    }


_STATE: dict[str, Any] = {}
JEWISH = ["jewish"]  # how the plural class's term is named in the estimates ("judío" in Spanish)
#: bands of the number of texts the planted estimate rests on (a form's or a combination's texts are a share of all)
BANDS = {"0-5": (0, 5), "6-9": (6, 9), "10-19": (10, 19), "20-39": (20, 39), "40+": (40, 10**9)}


def _slots(pool: list[str], language: str = "en") -> pd.DataFrame:
    """Every slot of the pool's texts, written by the audit's own swap, placebo and probe code (texts only, no
    classifier that matters: a constant one); every probe written, each run keeps those ``--probes auto`` would
    (:func:`_probes_auto`)."""
    import counterfair as cf

    clf = cf.as_classifier(lambda texts: np.full(len(texts), 0.5), labels=["non-toxic", "toxic"])
    result = cf.audit(pool, clf, methods=["swap"], bootstrap=10, progress=False, language=language, probes="always")
    assert result.slots is not None
    return result.slots


def pool_texts(size: int, max_chars: int) -> list[str]:
    """Civil Comments naming identity terms, and CAD-IMDB reviews naming a first name of the names pack."""
    from counterfair.lexicons.attributes import load_identity_set
    from counterfair.text import TermMatcher

    comments = pd.concat([pd.read_csv(path)["comment_text"] for path in DATA]).dropna().astype(str)
    comments = comments[comments.str.len() <= max_chars].drop_duplicates()
    names = TermMatcher(list(load_identity_set("names").terms), case_sensitive=True)
    reviews = pd.read_csv(IMDB, sep="\t")["Text"].dropna().astype(str).drop_duplicates()
    reviews = reviews[(reviews.str.len() <= max_chars) & reviews.map(names.contains)]
    both = pd.concat([comments, reviews]).drop_duplicates()
    return both.sample(n=min(size, len(both)), random_state=0).tolist()


_ES_NOUNS = {  # person nouns by gender, [singular, plural]
    "m": [("vecino", "vecinos"), ("amigo", "amigos"), ("compañero", "compañeros"), ("hombre", "hombres"),
          ("chico", "chicos"), ("estudiante", "estudiantes"), ("profesor", "profesores"), ("médico", "médicos")],
    "f": [("vecina", "vecinas"), ("amiga", "amigas"), ("compañera", "compañeras"), ("mujer", "mujeres"),
          ("chica", "chicas"), ("estudiante", "estudiantes"), ("profesora", "profesoras"), ("persona", "personas")],
}  # fmt: skip
_ES_DETS = {"m.sg": ["El", "Un", "Este", "Mi"], "f.sg": ["La", "Una", "Esta", "Mi"],
            "m.pl": ["Los", "Unos", "Estos", "Mis"], "f.pl": ["Las", "Unas", "Estas", "Mis"]}  # fmt: skip
_ES_PREDICATES = {
    "sg": ["llegó temprano a la reunión", "nos ayudó con la mudanza", "trabaja en el hospital del centro",
           "abrió una panadería en la plaza", "escribió una reseña del restaurante", "preguntó por la estación de tren",
           "ganó el concurso de fotografía", "organizó una cena para todos", "arregló la bicicleta del barrio",
           "dio una charla sobre bases de datos", "vive en el piso de arriba", "cocina muy bien los domingos"],
    "pl": ["llegaron temprano a la reunión", "nos ayudaron con la mudanza", "trabajan en el hospital del centro",
           "abrieron una panadería en la plaza", "escribieron una reseña del restaurante", "ganaron el concurso",
           "organizaron una cena para todos", "viven en el piso de arriba", "cocinan muy bien los domingos"],
}  # fmt: skip
_ES_CONTEXTS = ["", "", "", " de la iglesia", " de la escuela", " del barrio", " de la familia"]
_ES_GENDER = {"m": [("hombre", "hombres"), ("chico", "chicos"), ("padre", "padres"), ("hermano", "hermanos"),
                    ("abuelo", "abuelos"), ("tío", "tíos")],
              "f": [("mujer", "mujeres"), ("chica", "chicas"), ("madre", "madres"), ("hermana", "hermanas"),
                    ("abuela", "abuelas"), ("tía", "tías")]}  # fmt: skip


def spanish_pool(size: int) -> list[str]:
    """``size`` distinct Spanish sentences from templates (seeded): an identity term as a noun ("Las musulmanas del
    barrio ...") or an adjective ("Un vecino judío ..."), in every gender and number; a gender word alone ("Mi madre
    ..."); or a gender word with an identity adjective ("Una mujer gitana ..."); a quarter without any (no slot)."""
    from counterfair.lexicons.attributes import load_swap_set

    identities = load_swap_set("identity-es")
    rng = np.random.default_rng(0)
    out: dict[str, None] = {}
    while len(out) < size:
        kind = rng.choice(["noun", "adjective", "gender", "gender+identity", "none"], p=[0.3, 0.3, 0.15, 0.15, 0.1])
        gender, number = str(rng.choice(["m", "f"])), str(rng.choice(["sg", "pl"]))
        det = str(rng.choice(_ES_DETS[f"{gender}.{number}"]))
        term = str(rng.choice(identities.terms))
        forms = identities.inflections[term].forms  # type: ignore[union-attr]
        form = forms.get(f"{gender}.{number}")
        i = 0 if number == "sg" else 1
        if kind == "noun" and form:
            phrase = f"{det} {form}"
        elif kind == "adjective" and form:
            phrase = f"{det} {_ES_NOUNS[gender][int(rng.integers(len(_ES_NOUNS[gender])))][i]} {form}"
        elif kind == "gender":
            phrase = f"{det} {_ES_GENDER[gender][int(rng.integers(len(_ES_GENDER[gender])))][i]}"
        elif kind == "gender+identity" and form:
            phrase = f"{det} {_ES_GENDER[gender][int(rng.integers(len(_ES_GENDER[gender])))][i]} {form}"
        elif kind == "none":
            phrase = f"{det} {_ES_NOUNS[gender][int(rng.integers(len(_ES_NOUNS[gender])))][i]}"
        else:
            continue
        context = str(rng.choice(_ES_CONTEXTS))
        predicate = str(rng.choice(_ES_PREDICATES[number]))
        out[f"{phrase}{context} {predicate}."] = None
    return list(out)


CLASS_WORDS = {
    "none": "none (blind to identity)",
    "noise": "noise on every edit, none from identity",
    "length": "length: +0.1 points per character",
    "casing": "casing: +4 points per capital mid-sentence",
    "position": "position: ±2.5 points from the first words",
    "context": "a context word (neighbour, church, …) +δ",
    "blanket": "every identity term +δ",
    "group": "one group (religion) +δ",
    "term": 'one term ("gay") +δ',
    "lower": "one group (race/ethnicity) −δ",
    "gender_words": "female gender words +δ",
    "pronoun": "female pronouns only +δ",
    "first_name": "Black-associated first names +δ",
    "plural": '"Jews" only (not "Jewish") +δ',
    "cell": "a race term with a gendered word +δ",
    "placebo_all": "every placebo word +6",
    "placebo_five": "five placebo words +6",
    "neutral_word": 'one neutral word ("quiet", "cousin") +δ',
    "hidden": "3δ on an identity term within three words after not/never/no (4 % of the texts)",
    "tfidf": "TF-IDF trained on hostile lines",
    "profanity": "profanity-check (default classifier)",
}


SPANISH_WORDS = {
    "context": "a context word (vecino, iglesia, …) +δ",
    "term": 'one term ("gay", "gais") +δ',
    "gender_words": "female gender words (mujer, madre, …) +δ",
    "plural": '"judíos", "judías" only (not "judío") +δ',
    "cell": "a race term with a gender word +δ",
}


def _words(report: dict) -> dict[str, str]:
    return CLASS_WORDS | (SPANISH_WORDS if report.get("language") == "es" else {})


def table(report: dict) -> str:
    """The Markdown table: per class and size, the share of runs with a material finding (for a planted class, in
    brackets, naming what was planted), the share inconclusive somewhere; for planted classes, of the runs that miss
    the plant, the share whose planted estimate says inconclusive."""
    results = report["results"]
    sizes = sorted({int(n) for r in results.values() for n in r})
    head = [
        "class",
        *(f"n={n}: material (named) / inconclusive / control failed / exit 0" for n in sizes),
        "missed runs said inconclusive",
        "UNEVEN said (naming a group), by size",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kind, by_size in results.items():
        cells = [_words(report).get(kind, kind)]
        said = []
        for n in sizes:
            r = by_size.get(str(n))
            if r is None:
                cells.append("–")
                continue
            named = f" ({100 * r['flagged_naming_planted']:.0f})" if kind in PLANTED else ""
            control = f"{100 * r['control_failed']:.0f} %" if "control_failed" in r else "–"
            exits = f"{100 * r['exit']['0']:.0f} %" if "exit" in r else "–"
            cells.append(f"{100 * r['flagged']:.0f} %{named} / {100 * r['inconclusive']:.0f} % / {control} / {exits}")
            if kind in PLANTED and r["undetected"]:
                share, unmeasured = r["undetected_said_inconclusive"], r.get("undetected_not_measured", 0)
                measured = r["undetected"] - unmeasured
                bit = f"n={n}: {'–' if share is None else f'{100 * share:.0f} %'} of {measured}"
                said.append(bit + (f" (+{unmeasured} with no slot to fire in)" if unmeasured else ""))
        cells.append("; ".join(said) if said else ("all detected" if kind in PLANTED else "–"))
        shown = [by_size[str(n)] for n in sizes if "uneven" in by_size.get(str(n), {})]
        cells.append(
            " / ".join(f"{100 * r['uneven']:.0f} % ({100 * r['uneven_naming_a_group']:.0f})" for r in shown) or "–"
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def texts_table(report: dict) -> str:
    """Per planted class, over every size: the share of runs that name the plant, by the number of texts its estimate
    rests on (a form's or a combination's texts are a share of the run's). ``blanket`` is left out: its plant lives in
    every group's estimate, not one."""
    results = report["results"]
    lines = ["| class | " + " | ".join(f"{b} texts" for b in BANDS) + " |", "|" + "---|" * (len(BANDS) + 1)]
    for kind, by_size in results.items():
        if kind not in PLANTED or kind == "blanket":
            continue
        runs = {b: [0, 0.0] for b in BANDS}
        for r in by_size.values():
            for b, got in r["named_by_planted_texts"].items():
                runs[b][0] += got["runs"]
                runs[b][1] += got["runs"] * got["named"]
        cells = [f"{100 * k / c:.0f} % of {c}" if c else "–" for c, k in runs.values()]
        lines.append(f"| {_words(report).get(kind, kind)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=int, default=1100)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--sizes", default="64,128,256,400")
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--noise", type=float, default=0.05, help="sd of the noise class's noise")
    parser.add_argument("--planted-noise", type=float, default=0.02, help="sd of the planted classes' noise")
    parser.add_argument("--resamples", type=int, default=10)
    parser.add_argument("--max-chars", type=int, default=1000, help="longest text taken into the pool")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--classes", default=None, help="default: every class of the language")
    parser.add_argument("--language", default="en", choices=("en", "es"), help="es: a built Spanish pool")
    parser.add_argument("--retable", action="store_true", help="only rewrite --out's table from its results")
    parser.add_argument(
        "--update", action="store_true", help="rerun --classes only, keeping --out's results of the other classes"
    )
    args = parser.parse_args()
    if args.retable:
        report = json.loads(args.out.read_text())
        report["table"] = table(report)
        report["texts_table"] = texts_table(report)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        print(report["table"], report["texts_table"])
        return 0
    spanish = args.language == "es"
    if spanish:
        JEWISH[0] = "judío"
    elif not all(path.exists() for path in [*DATA, IMDB]):
        print(f"needs {CIVIL} and {IMDB} (../shared/data)", file=sys.stderr)
        return 2
    default = (*NULL, *(SPANISH_PLANTED if spanish else PLANTED), *(() if spanish else (*CONTROL, *WHERE)),
               *(("tfidf",) if spanish else REFERENCE))  # fmt: skip
    args.classes = args.classes or ",".join(default)
    started = time.perf_counter()
    pool = spanish_pool(args.pool) if spanish else pool_texts(args.pool, args.max_chars)
    slots = _slots(pool, args.language)
    slots = slots.assign(input_id=slots["input_id"].astype(str))
    ids = sorted(set(slots["input_id"]))
    families = slots.drop_duplicates(["input_id", "family"])["family"].value_counts().to_dict()
    print(f"pool: {len(pool)} texts, {len(ids)} with a slot {families}, {len(slots)} slot texts "
          f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    planted = Planted(args.delta, args.language)
    kinds = args.classes.split(",")
    _STATE.update(ids=ids, noise=args.noise, scored={}, by_id={})
    for kind in kinds:
        scored = slots.assign(score=scores(kind, slots, planted))
        _STATE["scored"][kind] = scored
        _STATE["by_id"][kind] = dict(tuple(scored.groupby("input_id", sort=False)))
    sizes = [int(s) for s in args.sizes.split(",") if int(s) <= len(ids)]
    tasks = [(kind, n, args.seeds, args.resamples, args.planted_noise) for kind in kinds for n in sizes]
    results: dict[str, dict[str, Any]] = {kind: {} for kind in kinds}
    if args.workers > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(args.workers) as workers:
            done = workers.imap_unordered(_runs, tasks)
            for r in done:
                results[r["class"]][str(r["n"])] = r
                _say(r)
    else:
        for task in tasks:
            r = _runs(task)
            results[r["class"]][str(r["n"])] = r
            _say(r)
    for kind in kinds:
        results[kind] = dict(sorted(results[kind].items(), key=lambda kv: int(kv[0])))
    report = {
        "benchmark": "calibration",
        "language": args.language,
        "pool": len(pool),
        "pool_with_slots": len(ids),
        "pool_families": families,
        "slot_texts": len(slots),
        "seeds": args.seeds,
        "delta": args.delta,
        "noise_sd": args.noise,
        "planted_noise_sd": args.planted_noise,
        "bootstrap_resamples": args.resamples,
        "results": results,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.update and args.out.exists():  # the other classes' runs kept, in their order
        kept = json.loads(args.out.read_text())
        if kept["seeds"] != args.seeds or kept["delta"] != args.delta:
            print(f"--update needs the same --seeds and --delta as {args.out}", file=sys.stderr)
            return 2
        report["results"] = {k: results.get(k, r) for k, r in kept["results"].items()} | results
        report["seconds"] = round(kept["seconds"] + report["seconds"], 1)
    report["table"] = table(report)
    report["texts_table"] = texts_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(report["table"], report["texts_table"])
    print(f"wrote {args.out}")
    return 0


def _say(r: dict[str, Any]) -> None:
    print(
        f"{r['class']:12} n={r['n']:3}: material {r['flagged']:.2f} (naming the planted "
        f"{r['flagged_naming_planted']:.2f}), inconclusive {r['inconclusive']:.2f}, missed {r['undetected']} "
        f"(said inconclusive {r['undetected_said_inconclusive']}), control failed {r['control_failed']:.2f} "
        f"{r['control_words']}, exit {r['exit']}, tests {r['tests_median']:.0f}, uneven {r['uneven']:.2f} "
        f"(naming a group {r['uneven_naming_a_group']:.2f})",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
