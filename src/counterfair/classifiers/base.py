"""The classifier protocol, output validation, and the per-run prediction cache."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ClassifierError, CounterfairError
from ..jsontypes import JSONObject


@runtime_checkable
class Classifier(Protocol):
    """Anything with label names and a batch ``predict_proba`` returning an ``(n, k)`` array.

    Binary classifiers may return shape ``(n,)``: the probability of the second label.
    """

    @property
    def labels(self) -> Sequence[str]: ...

    def predict_proba(self, texts: Sequence[str]) -> Any: ...


TextPair = tuple[str, str]
"""The two inputs of a two-input classifier (premise, hypothesis; question, answer)."""


def pair_proba(inner: Any, batch: Sequence[TextPair], spec: str) -> Any:
    """A batch of text pairs through ``inner``: its ``predict_proba_pairs`` (transformers cross-encoders), or its
    ``predict_proba`` when it declares ``accepts_pairs`` (Python functions, which then receive ``(first, second)``
    tuples); any other classifier takes one text and is refused, not fed a joined string it was not trained on."""
    if hasattr(inner, "predict_proba_pairs"):
        return inner.predict_proba_pairs(list(batch))
    if getattr(inner, "accepts_pairs", False):
        return inner.predict_proba(list(batch))
    raise ClassifierError(
        f"classifier {spec!r} takes one text, but this evaluation gives it text pairs (a context column is set); "
        "use a transformers sequence-pair model (hf:DIR, a hub id, a pipeline or (model, tokenizer)) or a Python "
        "function, which receives (first, second) tuples"
    )


def _holds_booleans(raw: Any) -> bool:
    """Whether a classifier's output holds a boolean (a JSON ``true``, a numpy bool array), which numpy would
    silently read as 1.0."""
    if isinstance(raw, bool | np.bool_):
        return True
    if isinstance(raw, np.ndarray):
        return raw.dtype == bool or (raw.dtype == object and any(_holds_booleans(x) for x in raw.ravel()))
    if isinstance(raw, list | tuple):
        return any(_holds_booleans(x) for x in raw)
    return False


def as_proba(raw: Any, n: int, labels: Sequence[str], source: str) -> np.ndarray:
    """Validate a classifier's output and return a float ``(n, k)`` array.

    Rows with NaN values are kept as all-NaN rows (the caller gives those texts a status); a wrong shape, or
    values outside [0, 1] (infinity included: it is no probability), raises :class:`ClassifierError`.
    """
    if hasattr(raw, "detach") and hasattr(raw, "cpu"):  # a torch tensor, with or without requires_grad
        raw = raw.detach().cpu().numpy()
    if _holds_booleans(raw):
        raise ClassifierError(
            f"classifier {source!r} returned booleans (true/false), not probabilities; return the probability of "
            "the positive label (for a hard decision, 1.0 and 0.0)"
        )
    try:
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as err:
        raise ClassifierError(f"classifier {source!r} returned something that is not numeric: {err}") from err
    k = len(labels)
    if arr.ndim == 2 and arr.shape[1] == 1 and k == 2:
        arr = arr[:, 0]
    binary_scores = arr.ndim == 1
    if arr.ndim == 1:
        if k != 2:
            raise ClassifierError(
                f"classifier {source!r} returned one score per text but has {k} labels; "
                f"return an array of shape ({n}, {k})"
            )
        if arr.shape[0] != n:
            raise ClassifierError(f"classifier {source!r} returned {arr.shape[0]} scores for {n} texts; expected {n}")
        arr = np.stack([1.0 - arr, arr], axis=1)
    if arr.ndim != 2 or arr.shape != (n, k):
        raise ClassifierError(
            f"classifier {source!r} returned shape {tuple(arr.shape)} for {n} texts; "
            f"expected ({n}, {k})" + (f" or ({n},)" if k == 2 else "")
        )
    bad_rows = np.isnan(arr).any(axis=1)
    arr[bad_rows] = np.nan
    scored = arr[~bad_rows][:, 1:] if binary_scores else arr[~bad_rows]  # the values the classifier gave
    outside = (scored < -1e-6) | (scored > 1 + 1e-6)
    if outside.any():
        row = int(np.flatnonzero(~bad_rows)[np.flatnonzero(outside.any(axis=1))[0]])
        low, high = float(scored.min()), float(scored.max())
        hint = (
            "a score from -1 to 1, such as a sentiment compound: map it to (score + 1) / 2"
            if low >= -1 - 1e-6 and high <= 1 + 1e-6
            else "logits: apply a softmax or sigmoid"
        )
        count = int(outside.sum())
        raise ClassifierError(
            f"classifier {source!r} returned {count} value{'s' if count > 1 else ''} outside [0, 1] (its values run "
            f"from {low:.3g} to {high:.3g}; first: text {row + 1} of the batch, {float(scored[outside][0]):.3g}); "
            f"probabilities must lie in [0, 1] ({hint})"
        )
    return np.clip(arr, 0.0, 1.0)


#: a padded model's batch holds at most ``batch_size`` texts' worth of this many tokens: a batch of 64 short comments
#: is 64 texts, a batch of film reviews of 300 tokens 13
PADDED_TOKENS = 64
#: tokens of padding any text may get beyond half again its length (a few words: not worth a batch of its own)
PAD_SLACK_TOKENS = 8
#: characters per token where a model does not say its lengths (English wordpieces)
CHARS_PER_TOKEN = 4


def _length(text: Any) -> int:
    """A text's length in characters (a pair's, both parts'): the order a padded model is handed texts in."""
    return len(text) if isinstance(text, str) else sum(len(str(part)) for part in text)


class CachedClassifier:
    """Wraps a classifier: validates its output and predicts each distinct text once per run.

    What finished before a failure stays in the cache, so a retry only predicts the rest.
    """

    def __init__(
        self,
        inner: Classifier,
        *,
        spec: str,
        batch_size: int = 64,
        signature: dict[str, Any] | None = None,
        store: Any = None,
        cli_spec: bool = True,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.inner = inner
        self.spec = spec
        self.cli_spec = cli_spec  # False for Python objects: there is no command line that rebuilds them
        self.batch_size = batch_size
        self._signature = dict(signature or {})
        self._cache: dict[Any, np.ndarray] = {}
        self.store = store  # a RunStore: predictions of this exact classifier are shared across runs
        self.calls = 0
        self.hits = 0
        self.engine = "local"  # where batches are predicted (classifiers.remote.on_engine: a Ray cluster)
        self.address: str | None = None
        self.worker_factory: Callable[[], Callable[[Any], Any]] | None = None  # builds the classifier on a worker

    @property
    def labels(self) -> list[str]:
        return [str(label) for label in self.inner.labels]

    def __repr__(self) -> str:  # no label lookup: it may load a model
        return f"CachedClassifier({self.spec!r}, {len(self._cache)} texts predicted)"

    def forget(self) -> None:
        """Drop the per-text predictions held in memory (a command working in blocks keeps its memory flat; the run
        store, where the classifier is pinned, still has them)."""
        self._cache.clear()

    @property
    def cached_texts(self) -> int:
        """How many distinct texts have been predicted (a property, so that the object is never falsy)."""
        return len(self._cache)

    def predict_proba(
        self, texts: Sequence[str] | Sequence[TextPair], *, on_batch: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Probabilities ``(len(texts), k)``; ``on_batch(n)`` is called after each batch of new texts. ``texts``
        may be :data:`TextPair` tuples for a two-input classifier (see :func:`pair_proba`)."""
        todo: list[Any] = list(dict.fromkeys(t for t in texts if t not in self._cache))
        self.hits += len(texts) - len(todo)
        keys: dict[Any, str] = {}
        if self.store is not None and todo:
            import json

            from ..store import content_keys

            key = content_keys("classifier", self._signature, None)
            keys = {t: key(t if isinstance(t, str) else json.dumps(list(t))) for t in todo}
            width = len(self.labels)
            found = self.store.get_many(list(keys.values()), valid=lambda v: is_probability_row(v, width))
            for text in todo:
                if keys[text] in found:
                    self._cache[text] = np.asarray(found[keys[text]], dtype=float)
            todo = [t for t in todo if t not in self._cache]
        known = len(dict.fromkeys(texts)) - len(todo)  # in memory or in the run store: done, and counted as done
        if on_batch is not None and known:
            on_batch(known)
        batches = self._batches(todo)
        if self.engine != "local" and batches:
            self._predict_on_engine(batches, keys, on_batch)
        for batch in batches if self.engine == "local" else ():
            self.calls += 1
            try:
                pairs = bool(batch) and not isinstance(batch[0], str)
                raw = pair_proba(self.inner, batch, self.spec) if pairs else self.inner.predict_proba(batch)
            except CounterfairError:
                raise
            except Exception as err:
                raise ClassifierError(
                    f"classifier {self.spec!r} failed on a batch of {len(batch)} texts "
                    f"({type(err).__name__}: {err}); {len(self._cache)} texts finished before it"
                ) from err
            self._keep(batch, raw, keys, on_batch)
        k = len(self.labels)
        if not texts:
            return np.zeros((0, k))
        return np.stack([self._cache[t] for t in texts])

    def _batches(self, todo: list[Any]) -> list[list[Any]]:
        """``todo`` in batches of at most ``batch_size``; for a model that pads each batch to its longest text
        (``sorts_by_length``), sorted by length (in tokens where the model says them, ``lengths``; else in
        characters), and a batch is cut where the next text is more than half again as long as its first (plus a few
        words' slack) or where it would pass ``batch_size`` texts of :data:`PADDED_TOKENS` tokens: short texts go
        ``batch_size`` at a time, long ones fewer, and no text is padded to much more than 1.5 times its length."""
        if not getattr(self.inner, "sorts_by_length", False):
            return [todo[start : start + self.batch_size] for start in range(0, len(todo), self.batch_size)]
        measure = getattr(self.inner, "lengths", None) if self.engine == "local" else None  # not a model per driver
        told = None
        if measure is not None and all(isinstance(t, str) for t in todo):
            try:
                told = [int(n) for n in measure(todo)]
            except CounterfairError:
                raise
            except Exception:  # noqa: BLE001 - the batches then say what fails, naming the classifier
                told = None
        if told is not None:
            sizes, per_token, slack = told, 1, PAD_SLACK_TOKENS
        else:
            sizes, per_token, slack = [_length(t) for t in todo], CHARS_PER_TOKEN, PAD_SLACK_TOKENS * CHARS_PER_TOKEN
        budget = self.batch_size * PADDED_TOKENS * per_token
        batches: list[list[Any]] = []
        first = 0
        for k in sorted(range(len(todo)), key=lambda i: sizes[i]):
            batch = batches[-1] if batches else None
            if (
                batch is not None
                and len(batch) < self.batch_size
                and sizes[k] <= 1.5 * first + slack
                and (len(batch) + 1) * sizes[k] <= budget
            ):
                batch.append(todo[k])
            else:
                batches.append([todo[k]])
                first = sizes[k]
        return batches

    def _keep(self, batch: list[Any], raw: Any, keys: dict[Any, str], on_batch: Callable[[int], None] | None) -> None:
        """One batch's predictions, validated, into the cache and the run store."""
        proba = as_proba(raw, len(batch), self.labels, self.spec)
        for text, row in zip(batch, proba, strict=True):
            self._cache[text] = row
        if self.store is not None:  # NaN rows are not stored: they are tried again next time
            self.store.put_many(
                [
                    (keys[t], "classifier", row.tolist())
                    for t, row in zip(batch, proba, strict=True)
                    if np.isfinite(row).all()
                ]
            )
        if on_batch is not None:
            on_batch(len(batch))

    def _predict_on_engine(
        self, batches: list[list[Any]], keys: dict[Any, str], on_batch: Callable[[int], None] | None
    ) -> None:
        from ..engine import map_batches

        assert self.worker_factory is not None  # set with the engine (classifiers.remote.on_engine)
        self.calls += len(batches)
        try:
            map_batches(
                self.worker_factory,
                batches,
                engine=self.engine,
                address=self.address,
                description="classifier batches",
                on_result=lambda i, raw: self._keep(batches[i], raw, keys, on_batch),
            )
        except CounterfairError:
            raise
        except Exception as err:  # a worker's error, as the engine reports it
            raise ClassifierError(
                f"classifier {self.spec!r} failed on the {self.engine} engine ({type(err).__name__}: {err}); "
                f"{len(self._cache)} texts finished before it"
            ) from err

    def signature(self) -> JSONObject:
        """What identifies this classifier in outputs: spec, labels and adapter details."""
        return {"spec": self.spec, "labels": self.labels, **self._signature}

    def summary_info(self) -> JSONObject:
        """The signature, and where the classifier ran (``runs_on``) when that is worth saying: a torch model's
        device and precision. Not part of the identity: a run resumes on another device."""
        where = self.runs_on()
        return {**self.signature(), **({"runs_on": where} if where else {})}

    def runs_on(self) -> str | None:
        """Where this process's model predicted, in its own words (an hf: model: ``cuda:0 (NVIDIA H200) in
        bfloat16``); None for a model that has no device, one that never loaded (every score came from the cache or
        the run store), and on the Ray engine, whose actors each have their own device (the options name the engine;
        its outputs stay the local engine's byte for byte)."""
        where = getattr(self.inner, "runs_on", None) if self.engine == "local" else None
        return str(where) if isinstance(where, str) else None

    def update_signature(self, extra: dict[str, Any]) -> None:
        self._signature.update(extra)

    def identity(self) -> str | None:
        """A short hash of what this classifier runs, for run directories and caches; ``None`` when it cannot be
        pinned down (``signature()["unstable_reason"]`` says why)."""
        if self._signature.get("stable") is False:
            return None
        from ..records import params_hash

        return params_hash({k: v for k, v in self._signature.items() if k != "stable"})


def is_probability_row(value: Any, width: int) -> bool:
    """Whether a run-store value is one prediction of a ``width``-label classifier: ``width`` numbers in [0, 1] (or
    NaN, a classifier's own missing value)."""
    return (
        isinstance(value, list)
        and len(value) == width
        and all(isinstance(x, int | float) and not isinstance(x, bool) and (x != x or 0.0 <= x <= 1.0) for x in value)
    )


class Relabelled:
    """A classifier whose classes are named anew (``--labels``): the same probabilities, other names."""

    def __init__(self, inner: Classifier, labels: Sequence[str]) -> None:
        self.inner, self._labels = inner, [str(label) for label in labels]

    @property
    def labels(self) -> list[str]:
        return self._labels

    def predict_proba(self, texts: Sequence[str]) -> Any:
        return self.inner.predict_proba(texts)

    def __getattr__(self, name: str) -> Any:  # anything else the wrapped classifier offers (a pair scorer, a device)
        if name == "inner":  # not set yet (a copy or an unpickling under way): no endless lookup
            raise AttributeError(name)
        return getattr(self.inner, name)


def relabel(clf: CachedClassifier, labels: Sequence[str] | None) -> CachedClassifier:
    """``clf`` with its classes named ``labels`` (in its order): as many names as it has classes, each once."""
    if not labels:
        return clf
    import copy

    from ..errors import ConfigError

    names = [str(label).strip() for label in labels]
    have = clf.labels
    if len(names) != len(have) or len(set(names)) != len(names) or not all(names):
        raise ConfigError(
            f"--labels {','.join(names)}: the classifier {clf.spec} has {len(have)} classes ({', '.join(have)}); "
            f"give {len(have)} distinct names, in that order"
        )
    named = copy.copy(clf)  # a classifier shared by other runs of the process keeps its names
    named.inner = Relabelled(clf.inner, names)
    return named
