"""LangFair's side of ``langfair_side_by_side.py``, run in LangFair's own environment (``--langfair-python``).

Reads ``{"texts1": [...], "texts2": [...], "minilm": PATH}`` as JSON on stdin; prints LangFair's pairwise values of
its counterfactual metrics (``BleuSimilarity``, ``RougelSimilarity``, ``CosineSimilarity``, ``how="pairwise"``) and its
``SentimentBias`` (VADER, strong and weak parity, one value each) as JSON.
Without NLTK's Punkt data (downloaded by LangFair at run time; this machine has no network) ``word_tokenize`` is given
the same fallback counterfair uses (a regex sentence split, then NLTK's word tokenizer), so both sides tokenise alike.
"""

from __future__ import annotations

import json
import re
import sys

import nltk.tokenize

payload = json.load(sys.stdin)
try:
    nltk.tokenize.word_tokenize("Check the Punkt data.")
except LookupError:
    _split = re.compile(r"(?<=[.!?])\s+")
    _tokenizer = nltk.tokenize.NLTKWordTokenizer()

    def _fallback(text: str, language: str = "english", preserve_line: bool = False) -> list[str]:
        return [t for sentence in _split.split(text) for t in _tokenizer.tokenize(sentence)]

    nltk.tokenize.word_tokenize = _fallback
    import langfair.metrics.counterfactual.metrics.bleu as lf_bleu

    lf_bleu.word_tokenize = _fallback

from langfair.metrics.counterfactual.metrics import (  # noqa: E402
    BleuSimilarity,
    CosineSimilarity,
    RougelSimilarity,
    SentimentBias,
)

a, b = payload["texts1"], payload["texts2"]
out = {
    "bleu": [float(x) for x in BleuSimilarity(how="pairwise").evaluate(a, b, show_progress_bars=False)],
    "rouge_l": [float(x) for x in RougelSimilarity(how="pairwise").evaluate(a, b, show_progress_bars=False)],
    "cosine": [
        float(x)
        for x in CosineSimilarity(transformer=payload["minilm"], how="pairwise").evaluate(
            a, b, show_progress_bars=False
        )
    ],
}
out["sentiment_strong"] = [float(SentimentBias(parity="strong").evaluate(a, b, show_progress_bars=False))]
out["sentiment_weak"] = [float(SentimentBias(parity="weak").evaluate(a, b, show_progress_bars=False))]
json.dump(out, sys.stdout)
