"""The help text of the options several commands share, said once: the options dataclasses' fields
(:func:`counterfair.records.option`, :func:`~counterfair.records.knob`) and the command line's shared typer options
(``command_line``: ``Encoding``, ``Language``, ...) both read it, so ``--help`` and
:func:`~counterfair.records.option_help` say the same."""

from __future__ import annotations

ATTRIBUTE = (
    "One attribute or pack (`counterfair attributes list`): a word list (islam, judaism, lgbq, transgender) or a swap "
    "pack (gender, names, nationality, an identity set); or a YAML/JSON file."
)
ENCODING = "Text encoding of the input file (a byte-order mark overrides it), e.g. latin-1."
LANGUAGE = (
    "en, fr, de or es: the word lists, the identity set (identity-fr, identity-de, identity-es, swapped with agreement "
    "of articles and adjectives), the gender words, the placebo words and the BERTScore encoder (docs: languages)."
)
LANGUAGE_AUTO = (
    "auto (the default: read from the texts' words, English unless another language clearly leads), en, fr, de or es: "
    "the word lists, the identity set (identity-fr, identity-de, identity-es, swapped with agreement of articles and "
    "adjectives), the gender words, the placebo words and the BERTScore encoder (docs: languages)."
)
MAX_TEXT_CHARS = "Longer texts (in characters) are not edited: status skipped:too_long; 0 = no limit."
LLM_PARALLEL = (
    "In-process LLM: sequences decoded together (default 16, env COUNTERFAIR_LLM_PARALLEL; 1: one after another)."
)
RETRY_NEARNESS = (
    "Sample a text again only while one of its LLM candidates came this near to passing every filter (its smallest "
    "score over the threshold; 0: retry every failing text up to the last attempt, as paper 000)."
)
LLM_CONCURRENCY = "LLM server (openai:URL): requests in flight (default 32, env COUNTERFAIR_LLM_CONCURRENCY)."
ENGINE = "local, or ray: the classifier's batches on Ray workers, each building the model once (outputs as local)."
ADDRESS = "Ray cluster address (default: start a local Ray)."
CLASSIFIER_BATCH = (
    "Texts per classifier call; a padded model (hf:) gets batches formed by length, as many tokens as this many "
    "short texts: a GPU takes 256-1024."
)

#: an options field's name -> its shared help (the fields that take it, in whichever command has them)
SHARED = {
    "encoding": ENCODING,
    "language": LANGUAGE,
    "max_text_chars": MAX_TEXT_CHARS,
    "llm_parallel": LLM_PARALLEL,
    "retry_nearness": RETRY_NEARNESS,
    "llm_concurrency": LLM_CONCURRENCY,
    "engine": ENGINE,
    "address": ADDRESS,
    "batch_size": CLASSIFIER_BATCH,
}
