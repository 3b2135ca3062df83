"""How far identity swaps reach real toxic text, and how often the guard is right (#20 items 14-17).

Data: Civil Comments from the paper-001 replication (../shared/data/nlp_ctf/civil_comments): the toxic training
comments, the non-toxic training comments and the held-out-term comments, `comment_text` only (237 + 531 + 310 rows in
the files here; the data README's counts are those of the full replication). All were selected for containing a
Dixon term as a word, so the adjective-only matcher reaches most by construction; what this measures is what the
grammatical swap adds (nouns, plurals), what the guard removes, and how many comments about groups no built-in set
covers get nothing.

For each text: the swap editor (Dixon 50, spaCy guard) with ``grammar=False`` (the listed terms, token for token)
and ``grammar=True`` (the default). Per group: the share of texts with at least one swap. Guard: occurrences,
blocked occurrences, and every blocked occurrence written out with its context for a hand check; the labels we gave
(benchmarks/data/guard_blocked_labels.csv) give the guard's precision.

    python benchmarks/swap_coverage.py        # about 2 min on 2 cores; writes benchmarks/results/swap_coverage.json
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from counterfair.editors.swap import IdentitySwapEditor
from counterfair.lexicons.attributes import UNCOVERED_GROUPS, load_identity_set
from counterfair.text import TermMatcher

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "nlp_ctf" / "civil_comments"
LABELS = Path(__file__).resolve().parent / "data" / "guard_blocked_labels.csv"
OUT = Path(__file__).resolve().parent / "results" / "swap_coverage.json"


def measure(texts: list[str], grammar: bool) -> dict[str, Any]:
    identities = load_identity_set()
    editor = IdentitySwapEditor(identities, guard="spacy", grammar=grammar)
    started = time.perf_counter()
    kept = editor.identity_matches(texts)
    counts = editor.last_counts
    seconds = time.perf_counter() - started
    reached = [bool(k) for k in kept]
    by_group: dict[str, list[int]] = {}
    forms: Counter[str] = Counter()
    for found, text in zip(kept, texts, strict=True):
        groups = {identities.group_of(m.term) for m in found}
        for group in groups:
            by_group.setdefault(group, [0, 0])[0] += 1
        forms.update(editor.form_used(text, m) for m in found)
    mentioned: dict[str, int] = Counter()
    every_form = IdentitySwapEditor(identities, guard=None, grammar=True)
    for text in texts:  # texts that mention a group in any written form, guard or not: one denominator for both
        for group in {identities.group_of(m.term) for m in every_form.identity_matches([text])[0]}:
            mentioned[group] += 1
    for group, n in mentioned.items():
        by_group.setdefault(group, [0, 0])[1] = n
    blocked = []
    all_found = [[editor._canonical(m) for m in editor._matcher.find(t)] for t in texts]
    for i, (found, keep) in enumerate(zip(all_found, kept, strict=True)):
        kept_spans = {(m.start, m.end) for m in keep}
        for m in found:
            if (m.start, m.end) not in kept_spans:
                text = texts[i]
                blocked.append({"text": i, "term": m.text, "context": text[max(0, m.start - 40) : m.end + 40]})
    return {
        "texts": len(texts),
        "texts_with_a_swap": sum(reached),
        "share_with_a_swap": round(sum(reached) / len(texts), 4),
        "occurrences": sum(f for f, _ in counts),
        "blocked": sum(b for _, b in counts),
        "kept_by_form": dict(forms),
        "by_group": {g: {"texts_with_a_swap": a, "texts_mentioning": n} for g, (a, n) in sorted(by_group.items())},
        "seconds": round(seconds, 1),
        "blocked_occurrences": blocked,
    }


def main() -> None:
    if not DATA.exists():
        sys.exit(f"{DATA} not found (the shared data folder)")
    texts: list[str] = []
    for name in ("civil_toxic_train_data.csv", "civil_train_data.csv", "civil_test_data.csv"):
        texts += pd.read_csv(DATA / name)["comment_text"].astype(str).tolist()
    results: dict[str, Any] = {"data": f"Civil Comments (nlp_ctf): {len(texts)} comments, toxic and not"}
    for with_grammar in (False, True):
        results["grammar" if with_grammar else "tokens_only"] = measure(texts, with_grammar)
    uncovered = {}
    for group, words in UNCOVERED_GROUPS.items():
        matcher = TermMatcher(words)
        uncovered[group] = sum(1 for t in texts if matcher.contains(t))
    results["texts_mentioning_uncovered_groups"] = uncovered
    if LABELS.exists():  # our hand labels of a seeded sample of 40 blocked occurrences; only those still blocked count
        labels = pd.read_csv(LABELS)
        blocked = results["grammar"]["blocked_occurrences"]
        now = {(b["text"], b["term"], b["context"].replace("\n", " ")) for b in blocked}
        current = labels[[(r.text_index, r.term, r.context) in now for r in labels.itertuples()]]
        right = int((current["label"] == "not_identity").sum())
        results["guard_precision_hand_checked"] = {
            "labelled": len(labels),
            "still_blocked": len(current),
            "rightly_blocked": right,
            "precision": round(right / len(current), 3) if len(current) else None,
        }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2))
    for key in ("tokens_only", "grammar"):
        r = results[key]
        print(
            f"{key}: {r['texts_with_a_swap']} of {r['texts']} texts swapped ({r['share_with_a_swap']:.1%}); "
            f"{r['occurrences']} occurrences, {r['blocked']} blocked; forms {r['kept_by_form']}; {r['seconds']} s"
        )
        for group, g in r["by_group"].items():
            print(f"   {group:15s} {g['texts_with_a_swap']:5d} of {g['texts_mentioning']:5d} texts that mention it")
    print("texts mentioning groups no built-in set covers:", uncovered)
    print("guard hand check:", results.get("guard_precision_hand_checked"))


if __name__ == "__main__":
    main()
