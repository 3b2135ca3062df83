"""Adapters that put different kinds of text classifiers behind the :class:`Classifier` protocol.

Each adapter stores its parameters in ``__init__`` and loads its model on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ClassifierError, ConfigError, InputError
from ..io import cell_text, read_table, require_columns


def _default_labels(k: int) -> list[str]:
    return [str(i) for i in range(k)]


class ProfanityCheckClassifier:
    """alt-profanity-check: a linear SVM over TF-IDF, calibrated; labels ``non-toxic``, ``toxic``."""

    labels = ("non-toxic", "toxic")

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        try:
            from profanity_check import predict_prob
        except ImportError as err:
            from ..errors import ModelNotAvailable

            raise ModelNotAvailable(
                "the profanity-check classifier is not installed", pip="pip install alt-profanity-check==1.9.1"
            ) from err
        return np.asarray(predict_prob(list(texts)), dtype=float)


class SklearnClassifier:
    """A saved scikit-learn estimator (joblib or pickle) that takes raw texts, e.g. a Pipeline.

    Loading a pickle runs code from the file: only load files you trust.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise ConfigError(f"sklearn classifier file {self.path} does not exist")
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            import joblib

            try:
                model = joblib.load(self.path)
            except Exception as err:
                raise ConfigError(f"{self.path}: cannot load as a scikit-learn model ({err})") from err
            if not hasattr(model, "predict_proba"):
                raise ConfigError(
                    f"{self.path}: {type(model).__name__} has no predict_proba; save a probabilistic "
                    "model (for an SVM, wrap it in CalibratedClassifierCV)"
                )
            self._model = model
        return self._model

    @property
    def labels(self) -> list[str]:
        classes = getattr(self._load(), "classes_", None)
        if classes is None:
            raise ConfigError(f"{self.path}: the model has no classes_; is it fitted?")
        return [str(c) for c in classes]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        try:
            return np.asarray(model.predict_proba(list(texts)), dtype=float)
        except (ValueError, TypeError, AttributeError) as err:
            raise ClassifierError(
                f"{self.path}: predict_proba failed on raw texts ({err}); the saved model must accept a "
                "list of strings (e.g. a Pipeline that starts with a vectorizer)"
            ) from err


class HFClassifier:
    """A transformers sequence-classification directory (``config.json`` + weights + tokenizer).

    Texts longer than the model's maximum length are truncated, as every transformer classifier does;
    the number truncated is counted in ``truncated``.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        device: str | None = None,
        max_length: int | None = None,
        dtype: str | None = None,
    ) -> None:
        from ..models import classifier_dtype

        self.directory = Path(directory)
        if not (self.directory / "config.json").exists():
            raise ConfigError(f"hf classifier: {self.directory} is not a transformers directory (no config.json)")
        self.device = device  # None: the run's --device (COUNTERFAIR_DEVICE), else a GPU torch sees, else the CPU
        self.dtype = classifier_dtype(dtype)  # the forward pass's precision (--dtype): float32, or autocast to less
        self.max_length = max_length
        self.truncated = 0
        self._model: Any = None
        self._tokenizer: Any = None
        self._encoded: dict[str, tuple[dict[str, list[int]], bool]] = {}  # tokenised by lengths(), for _predict

    def _load(self) -> None:
        if self._model is None:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            from ..models import quiet_loading, torch_device

            self.device = torch_device(self.device)
            with quiet_loading():
                self._tokenizer = AutoTokenizer.from_pretrained(self.directory)
                model = AutoModelForSequenceClassification.from_pretrained(self.directory)
            self._model = model.to(self.device).eval()
            if self.max_length is None:
                limits = [getattr(model.config, "max_position_embeddings", None), self._tokenizer.model_max_length]
                self.max_length = int(min(x for x in limits if x and x < 10**6) if any(limits) else 512)

    @property
    def runs_on(self) -> str | None:
        """Where the model ran, in words (``cuda:0 (NVIDIA H200) in bfloat16``); None before it loaded."""
        from ..models import device_name

        return f"{device_name(str(self.device))} in {self.dtype}" if self._model is not None else None

    @property
    def labels(self) -> list[str]:
        self._load()
        id2label = self._model.config.id2label
        return [str(id2label[i]) for i in range(len(id2label))]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self._predict(list(texts), None)

    def predict_proba_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """A sequence-pair model (NLI, paraphrase): each pair encoded as the tokenizer's two segments."""
        return self._predict([a for a, _ in pairs], [b for _, b in pairs])

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in tokens (after truncation), for :class:`~counterfair.classifiers.base.CachedClassifier`
        to batch texts of like length together; the tokens are kept for :meth:`predict_proba` (each text is
        tokenised once)."""
        self._load()
        enc = self._tokenizer(list(texts), truncation=True, max_length=self.max_length)
        cut = _truncated(self._tokenizer, enc, list(texts), None, self.max_length)
        for i, text in enumerate(texts):
            self._encoded[text] = ({k: enc[k][i] for k in enc}, cut[i])
        return [len(enc["input_ids"][i]) for i in range(len(texts))]

    def _predict(self, texts: list[str], text_pairs: list[str] | None) -> np.ndarray:
        self._load()
        if text_pairs is None and texts and all(t in self._encoded for t in texts):
            return self._predict_encoded(texts)
        from ..models import precision

        with precision(str(self.device), self.dtype):
            proba, truncated = transformer_proba_counted(
                self._model, self._tokenizer, texts, text_pairs, self.max_length, str(self.device)
            )
        self.truncated += truncated
        return proba

    def _predict_encoded(self, texts: list[str]) -> np.ndarray:
        import torch

        encoded = [self._encoded.pop(t) for t in texts]
        self.truncated += sum(cut for _, cut in encoded)
        from ..models import precision

        batch = self._tokenizer.pad([features for features, _ in encoded], return_tensors="pt")
        with torch.inference_mode(), precision(str(self.device), self.dtype):
            logits = self._model(**batch.to(self.device)).logits.float()
        return _probabilities(self._model, logits)

    #: :class:`~counterfair.classifiers.base.CachedClassifier` hands it texts of like length together (less padding)
    sorts_by_length = True


def _probabilities(model: Any, logits: Any) -> np.ndarray:
    """Softmax over the logits, or a sigmoid per label for a multi-label model."""
    import torch

    if getattr(model.config, "problem_type", None) == "multi_label_classification":
        return torch.sigmoid(logits).cpu().numpy()  # type: ignore[no-any-return]
    return torch.softmax(logits, dim=-1).cpu().numpy()  # type: ignore[no-any-return]


def _truncated(
    tokenizer: Any, enc: Any, texts: list[str], text_pairs: list[str] | None, max_length: int | None
) -> list[bool]:
    """Which inputs ``enc`` (their encoding with truncation) cut to ``max_length``: a fast tokenizer keeps what it
    cut off; a slow one is asked again without truncation."""
    if not max_length:
        return [False] * len(texts)
    if enc.encodings is not None:
        return [bool(e.overflowing) for e in enc.encodings]
    full = tokenizer(texts, text_pairs, add_special_tokens=True)["input_ids"]
    return [len(ids) > max_length for ids in full]


def transformer_proba(
    model: Any, tokenizer: Any, texts: list[str], text_pairs: list[str] | None, max_length: int | None, device: str
) -> np.ndarray:
    """Class probabilities of a transformers sequence-classification model: softmax over the logits, or a sigmoid
    per label for a multi-label model; ``text_pairs`` gives each text a second segment."""
    return transformer_proba_counted(model, tokenizer, texts, text_pairs, max_length, device)[0]


def transformer_proba_counted(
    model: Any, tokenizer: Any, texts: list[str], text_pairs: list[str] | None, max_length: int | None, device: str
) -> tuple[np.ndarray, int]:
    """:func:`transformer_proba` and how many inputs were truncated to ``max_length``, tokenised once (a fast
    tokenizer keeps what it cut off; a slow one is asked again without truncation to count)."""
    import torch

    kwargs: dict[str, Any] = {"max_length": max_length} if max_length else {}
    enc = tokenizer(texts, text_pairs, padding=True, truncation=True, return_tensors="pt", **kwargs)
    truncated = sum(_truncated(tokenizer, enc, texts, text_pairs, max_length))
    with torch.inference_mode():
        logits = model(**enc.to(device)).logits.float()
    return _probabilities(model, logits), truncated


class SpacyClassifier:
    """A spaCy pipeline with a ``textcat`` or ``textcat_multilabel`` component (directory or package)."""

    def __init__(self, name_or_path: str | Path) -> None:
        self.name_or_path = str(name_or_path)
        self._nlp: Any = None
        self._labels: list[str] = []

    def _load(self) -> Any:
        if self._nlp is None:
            import warnings

            import spacy

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # version-mismatch notices of older pipelines
                try:
                    nlp = spacy.load(self.name_or_path)
                except OSError as err:
                    raise ConfigError(f"spacy classifier: cannot load {self.name_or_path} ({err})") from err
            pipes = [name for name in nlp.pipe_names if nlp.get_pipe(name).__class__.__name__.startswith("Text")]
            if not pipes:
                raise ConfigError(f"spacy classifier: {self.name_or_path} has no textcat component")
            textcat: Any = nlp.get_pipe(pipes[0])
            self._labels = [str(label) for label in textcat.labels]
            self._nlp = nlp
        return self._nlp

    @property
    def labels(self) -> list[str]:
        self._load()
        return self._labels

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        nlp = self._load()
        return np.array([[doc.cats[label] for label in self._labels] for doc in nlp.pipe(list(texts))])


def load_function(target: str, what: str) -> Callable[..., Any]:
    """The function ``module:function`` or ``path/to/file.py:function`` names (``what``: its role, for errors)."""
    module_name, sep, func_name = target.rpartition(":")
    if not sep or not module_name or not func_name:
        raise ConfigError(f"{what} {target!r}: expected 'module:function' or 'file.py:function'")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.exists():
            raise ConfigError(f"{what}: file {path} does not exist")
        spec = importlib.util.spec_from_file_location(f"counterfair_user_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"{what}: cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        module = _import_here(module_name, what)
    fn = getattr(module, func_name, None)
    if fn is None or not callable(fn):
        raise ConfigError(f"{what}: {module_name!r} has no function {func_name!r}")
    return fn  # type: ignore[no-any-return]


def _import_here(module_name: str, what: str) -> Any:
    """Module ``module_name``, found on the import path or, as ``python -c`` would find it, in the working directory
    (a console script's path holds its own folder, not the one the user stands in)."""
    top = module_name.partition(".")[0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        here = Path.cwd()
        if err.name != top or not ((here / f"{top}.py").is_file() or (here / top / "__init__.py").is_file()):
            raise ConfigError(
                f"{what}: cannot import {module_name!r} ({err}); a file of functions can be named as FILE.py:FUNCTION"
            ) from err
    except ImportError as err:
        raise ConfigError(f"{what}: cannot import {module_name!r} ({err})") from err
    sys.path.insert(0, str(here))  # kept: the module may import its neighbours as it runs
    try:
        return importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(f"{what}: cannot import {module_name!r} from {here} ({err})") from err


class CallableClassifier:
    """``module:function`` or ``path/to/file.py:function``: a function from a list of texts to scores.

    The function returns shape ``(n,)`` (binary: probability of label ``1``) or ``(n, k)``; name the labels
    by giving the function a ``labels`` attribute, otherwise they are ``"0" .. "k-1"``. In a two-input evaluation
    (a context column) it receives ``(first, second)`` tuples instead of texts.
    """

    accepts_pairs = True

    def __init__(self, target: str) -> None:
        module_name, sep, func_name = target.rpartition(":")
        if not sep or not module_name or not func_name:
            raise ConfigError(f"callable classifier {target!r}: expected 'module:function' or 'file.py:function'")
        self.target = target
        self._fn: Callable[[list[str]], Any] | None = None
        self._labels: list[str] | None = None

    def _load(self) -> Callable[[list[str]], Any]:
        if self._fn is None:
            fn = load_function(self.target, "callable classifier")
            self._fn = fn
            declared = getattr(fn, "labels", None)
            if declared is not None:
                self._labels = [str(label) for label in declared]
        return self._fn

    @property
    def labels(self) -> list[str]:
        self._load()
        return self._labels if self._labels is not None else _default_labels(2)

    def predict_proba(self, texts: Sequence[str]) -> Any:
        out = self._load()(list(texts))
        if self._labels is None:
            shape = np.shape(out)
            self._labels = _default_labels(shape[1] if len(shape) == 2 and shape[1] > 1 else 2)
        return out


#: the longest ``Retry-After`` an HTTP classifier waits before it retries a 429 (seconds)
RETRY_AFTER_CAP = 60.0


class HTTPClassifier:
    """A classifier behind an HTTP endpoint.

    Request: ``POST {"texts": [...]}``. Response: ``{"scores": [...]}`` (binary: probability of the second
    label), or ``{"probabilities": [[...], ...]}``, either optionally with ``"labels": [...]``; a bare JSON
    list is read as ``scores``/``probabilities``. Each row of probabilities must sum to 1 unless the answer says
    ``"multi_label": true``; a value outside [0, 1] (``Infinity`` included) is an error, ``NaN`` a per-text status.
    Connection errors, 5xx answers and HTTP 429 are retried (a 429's ``Retry-After`` honoured up to
    :data:`RETRY_AFTER_CAP` seconds); a redirect is not followed (the error names its target). Messages show the
    address with its secrets redacted (:func:`counterfair.redact.redact`).
    """

    def __init__(self, url: str, *, timeout: float = 60.0, retries: int = 3) -> None:
        from ..redact import redact

        self.url = url
        self.shown = redact(url)  # what messages show: no user:password, no ?api_key=
        self.timeout = timeout
        self.retries = retries
        self._labels: list[str] | None = None

    @property
    def labels(self) -> list[str]:
        if self._labels is None:
            self._post(["counterfair label probe"])  # learns the labels from the first answer
        return self._labels or _default_labels(2)

    def _post(self, texts: list[str]) -> Any:
        import httpx

        from ..httpjson import BadAnswer, post_json

        last: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                answer = post_json(httpx, self.url, {"texts": texts}, deadline=self.timeout, timeout=self.timeout)
            except httpx.HTTPError as err:
                last = err
            except BadAnswer as err:
                raise ClassifierError(f"classifier at {self.shown}: {err}") from None
            else:
                if answer.status >= 500 or answer.status == 429:
                    last = ClassifierError(f"HTTP {answer.status}: {answer.text[:200]}")
                    if answer.status == 429 and answer.retry_after is not None and attempt < self.retries:
                        time.sleep(min(max(answer.retry_after, 0.0), RETRY_AFTER_CAP))  # the server's own wait
                        continue
                elif 300 <= answer.status < 400:
                    raise ClassifierError(
                        f"classifier at {self.shown} answered HTTP {answer.status}, a redirect to "
                        f"{answer.location or '(no address given)'}; counterfair does not follow redirects: "
                        "give the final address as http:URL"
                    )
                elif answer.status >= 400:
                    raise ClassifierError(
                        f"classifier at {self.shown} answered HTTP {answer.status}: {answer.text[:200]}"
                    )
                else:
                    return self._parse(answer)
            time.sleep(min(0.5 * 2**attempt, 4.0))
        raise ClassifierError(f"classifier at {self.shown} failed after {self.retries + 1} tries: {last}")

    def _parse(self, answer: Any) -> Any:
        data = answer.data
        if data is None:
            raise ClassifierError(f"classifier at {self.shown} did not answer JSON: {answer.text[:200]!r}")
        if isinstance(data, dict):
            labels = data.get("labels")
            values = data.get("probabilities", data.get("scores"))
            if values is None:
                raise ClassifierError(
                    f"classifier at {self.shown}: the answer has neither 'probabilities' nor 'scores' "
                    f"(keys: {sorted(data)})"
                )
        else:
            labels, values = None, data
        if not (isinstance(data, dict) and data.get("multi_label") is True):
            self._check_rows(values)
        if labels is not None:
            if not isinstance(labels, list) or not all(isinstance(label, str | int) for label in labels):
                raise ClassifierError(
                    f"classifier at {self.shown}: 'labels' must be a list of names, got {labels!r:.200}"
                )
            self._labels = [str(label) for label in labels]
        elif self._labels is None:
            shape = np.shape(values)
            self._labels = _default_labels(shape[1] if len(shape) == 2 and shape[1] > 1 else 2)
        return values

    def _check_rows(self, values: Any) -> None:
        """Rows of class probabilities must each sum to 1 (a row summing to 1.8 is not a distribution); an answer
        with ``"multi_label": true`` holds one independent probability per label and is exempt."""
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return  # as_proba names the non-numeric answer
        if arr.ndim != 2 or arr.shape[1] < 2:
            return
        sums = arr.sum(axis=1)
        bad = np.flatnonzero(np.isfinite(sums) & (np.abs(sums - 1.0) > 1e-3))
        if bad.size:
            raise ClassifierError(
                f"classifier at {self.shown}: the probabilities of text {bad[0] + 1} of the batch sum to "
                f"{sums[bad[0]]:.4g}, not 1 ({bad.size} rows like it); answer one distribution per text, or add "
                '"multi_label": true when each label is scored on its own'
            )

    def predict_proba(self, texts: Sequence[str]) -> Any:
        return self._post(list(texts))


class VaderClassifier:
    """VADER's rule-based sentiment (``vaderSentiment``; its lexicon ships inside the package): per text the shares of
    its words' sentiment that are positive, negative and neutral, as labels ``pos``, ``neg``, ``neu``; name the one to
    compare (``--positive-label neg``: the label LangFair's sentiment bias reads by default)."""

    labels = ("pos", "neg", "neu")

    def __init__(self) -> None:
        self._analyzer: Any = None

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if self._analyzer is None:
            try:
                from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
            except ImportError as err:
                from ..extras import MissingExtra

                raise MissingExtra({"metrics": ["the vader classifier"]}) from err
            self._analyzer = SentimentIntensityAnalyzer()
        rows = [self._analyzer.polarity_scores(str(t)) for t in texts]
        return np.array([[r["pos"], r["neg"], r["neu"]] for r in rows], dtype=float).reshape(len(rows), 3)


class ScoresClassifier:
    """Precomputed scores: a table with columns ``text`` and ``score`` (probability of label ``1``).

    The simplest way to audit a model counterfair cannot run: score the texts elsewhere, then name the
    file. A text that is not in the file gets NaN (a per-row status), never a made-up score.
    """

    labels = ("0", "1")

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.missing = 0
        self._scores: dict[str, float] | None = None

    def _load(self) -> dict[str, float]:
        if self._scores is None:
            frame = read_table(self.path)
            require_columns(frame, {"text": "a 'text' column", "score": "a 'score' column"}, origin=str(self.path))
            scores: dict[str, float] = {}
            first_row: dict[str, int] = {}
            for index, (text_cell, score_cell) in enumerate(zip(frame["text"], frame["score"], strict=True)):
                line = index + 2
                text = cell_text(text_cell)
                if text is None:
                    raise InputError(f"{self.path}: row {line} has no text")
                try:
                    score = float(score_cell)
                except (TypeError, ValueError):
                    raise InputError(f"{self.path}: row {line}: score {score_cell!r} is not a number") from None
                if math.isnan(score) or not 0.0 <= score <= 1.0:
                    raise InputError(f"{self.path}: row {line}: score {score_cell!r} is not in [0, 1]")
                if text in scores and scores[text] != score:
                    raise InputError(
                        f"{self.path}: rows {first_row[text]} and {line} give the same text different "
                        f"scores ({scores[text]} and {score})"
                    )
                scores[text] = score
                first_row.setdefault(text, line)
            self._scores = scores
        return self._scores

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        scores = self._load()
        values = np.array([scores.get(text, np.nan) for text in texts], dtype=float)
        self.missing += int(np.isnan(values).sum())
        return values
