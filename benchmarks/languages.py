"""Benchmark of French and German (#19 item 5): reach, statuses and speed of the agreeing identity swaps, and what the
BERTScore fallback measures.

No French or German corpus is in ../shared/data, so the texts are built: templates (noun phrases with articles,
adjectives before and after, predicates, prepositions, elisions) filled with every form of every term of identity-fr
and identity-de, then swapped to every other term. Reported:

1. **Reach** — of all (text, target) swaps, the share written and, for the rest, each status.
2. **Speed** — swaps per second (one run, 2 CPU cores; French includes spaCy's French parse where a gender changes).
3. **BERTScore fallback** — on the tests' hand-written sentence pairs, mean BLEU and MiniLM BERTScore F1 (the English
   fallback encoder), and their Spearman correlation: how much of BLEU's ordering the fallback keeps.

Usage: python benchmarks/languages.py
Results: benchmarks/results/languages.json
"""

from __future__ import annotations

import collections
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from counterfair.editors.inflected import InflectedSwapEditor
from counterfair.editors.swap import SwapRefused
from counterfair.lexicons.attributes import load_swap_set

OUT = Path(__file__).resolve().parent / "results" / "languages.json"
TEMPLATES = {
    "fr": {
        "m.sg": ["Un {} pratiquant prie.", "Le {} est arrivé.", "Ce {} est très gentil.", "J'ai vu un jeune {}."],
        "f.sg": ["Une {} pratiquante prie.", "La {} est arrivée.", "Cette {} est très gentille.", "Ma voisine est {}."],
        "m.pl": ["Les {} sont nombreux ici.", "Des {} engagés manifestent.", "Je parle avec des hommes {}."],
        "f.pl": ["Les {} sont nombreuses ici.", "Des femmes {} manifestent.", "Les droits des {} comptent."],
    },
    "de": {
        "adj": ["Ein {}er Mann betet.", "Eine {}e Frau singt.", "Die {}en Kinder spielen.", "Er ist {}."],
        "m.nom": ["Ein gläubiger {} betet.", "Der {} ist nett."],
        "m.acc": ["Ich habe einen {} getroffen."],
        "m.dat": ["Wir sprechen mit dem {}."],
        "f.nom": ["Eine {} wurde gewählt.", "Die {} lacht."],
        "pl.nom": ["Die {} feiern.", "Viele {} demonstrieren."],
        "pl.dat": ["Wir sprechen mit den {}."],
    },
}


def texts_for(language: str) -> list[tuple[str, str]]:
    """(text, its term) for every template and every form of every term."""
    pack = load_swap_set(f"identity-{language}")
    out = []
    for term in pack.terms:
        inflection = pack.inflections[term.lower()]
        for slot, templates in TEMPLATES[language].items():
            if slot == "adj":
                if inflection.adjective and not inflection.invariable:
                    out += [(t.format(inflection.adjective), term) for t in templates]
                continue
            form = inflection.forms.get(slot)
            if form:
                out += [(t.format(form), term) for t in templates]
    return out


def reach(language: str) -> dict[str, Any]:
    pack = load_swap_set(f"identity-{language}")
    editor = InflectedSwapEditor(pack)
    statuses: collections.Counter[str] = collections.Counter()
    samples: list[list[str]] = []
    pairs = texts_for(language)
    started = time.perf_counter()
    for text, term in pairs:
        matches = editor.identity_matches([text])[0]
        for target in pack.terms:
            if target == term:
                continue
            try:
                new = editor.swap(text, matches, term, target)[0]
                statuses["written" if new != text else "unchanged:blocked"] += 1
                if len(samples) < 400 and new != text:
                    samples.append([text, target, new])
            except SwapRefused as refusal:
                statuses[refusal.status.split(":")[0] + ":" + refusal.status.split(":")[1]] += 1
    seconds = time.perf_counter() - started
    total = sum(statuses.values())
    return {
        "texts": len(pairs),
        "swaps": total,
        "written_share": round(statuses["written"] / total, 4),
        "statuses": dict(statuses.most_common()),
        "swaps_per_second": round(total / seconds, 1),
        "samples": samples[::20],
    }


def fallback() -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from scipy.stats import spearmanr
    from tests.test_languages import FRENCH, GERMAN

    from counterfair.metrics.bertscore import BERTScoreScorer
    from counterfair.metrics.functional import sentence_bleu

    out: dict[str, Any] = {}
    for language, rows in (("fr", FRENCH), ("de", GERMAN)):
        pairs = [
            (text, expected) for _, text, _, _, expected in rows if not expected.startswith("!") and expected != text
        ]
        scorer = BERTScoreScorer.for_language(language)
        f1 = scorer.score([b for _, b in pairs], [a for a, _ in pairs]).f1
        bleu = sentence_bleu([b for _, b in pairs], [a for a, _ in pairs])
        rho = spearmanr(bleu, f1).statistic
        out[language] = {
            "pairs": len(pairs),
            "encoder": scorer.model,
            "covers_language": scorer.covers_language,
            "mean_bleu": round(float(bleu.mean()), 3),
            "mean_bertscore_f1": round(float(f1.mean()), 3),
            "spearman_bleu_bertscore": round(float(rho), 3),
        }
    return out


def main() -> None:
    result = {
        "machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version()},
        "reach": {language: reach(language) for language in ("fr", "de")},
        "bertscore_fallback": fallback(),
    }
    for language, found in result["reach"].items():
        print(language, {k: v for k, v in found.items() if k != "samples"})
    print(json.dumps(result["bertscore_fallback"], indent=1))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
