"""Write ``src/counterfair/resources/placebo/en.yaml``: the placebo words (adjectives that describe a person and name
no social group, neutral in tone, one word each) with their Zipf frequencies, and the Zipf frequencies of the
built-in identity terms, so that an identity swap's placebo can be a word of similar frequency.

Needs ``wordfreq`` (not a counterfair dependency: the frequencies ship in the YAML):

    pip install --target /tmp/wordfreq wordfreq==3.1.1
    PYTHONPATH=/tmp/wordfreq python tools/placebo_frequencies.py
"""

from __future__ import annotations

from pathlib import Path

import yaml
from wordfreq import zipf_frequency

from counterfair.lexicons.attributes import load_identity_set

WORDS = (
    "bespectacled freckled sunburned punctual talkative sporty barefoot tidy sleepy thirsty polite athletic shy "
    "bored curious hungry musical tall calm careful quiet tired busy short small"
).split()

TARGET = Path(__file__).resolve().parents[1] / "src" / "counterfair" / "resources" / "placebo" / "en.yaml"


def main() -> None:
    from importlib.metadata import version

    identities = load_identity_set()
    overlap = {w for w in WORDS} & {t.lower() for t in identities.terms}
    if overlap:
        raise SystemExit(f"placebo words that are identity terms: {sorted(overlap)}")
    data = {
        "name": "placebo-en",
        "version": 1,
        "language": "en",
        "source": (
            f"Zipf frequencies (log10 of occurrences per billion words) from wordfreq {version('wordfreq')}, "
            "English; written by tools/placebo_frequencies.py"
        ),
        "words": {w: round(zipf_frequency(w, "en"), 2) for w in WORDS},
        "term_frequencies": {t: round(zipf_frequency(t, "en"), 2) for t in identities.terms},
    }
    header = (
        "# Placebo words for the audit's placebo control: each identity swap gets a matched swap to one of these\n"
        "# words (same position, same grammatical form, similar frequency). Replace with --placebo FILE: a mapping\n"
        "# `words: {word: zipf}` (or a plain list), and optionally `term_frequencies` for your identity terms.\n"
    )
    TARGET.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
