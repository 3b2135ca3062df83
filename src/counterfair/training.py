"""Counterfactually fair training (paper 001 §4): baseline, blindness, counterfactual augmentation and
counterfactual logit pairing (CLP), for a text CNN or a small head on the MiniLM encoder, on the CPU.

* ``baseline`` — cross-entropy on the data.
* ``blind`` — every training identity term becomes one placeholder token, in training and at prediction.
* ``augment`` — adds counterfactuals (training terms only) with the original's label: ``all`` of them, or ``one``
  random one per example (paper 001 §4.4 and its Table 4).
* ``clp`` — loss + λ·E|g(x) - g(x')| on logits, with one counterfactual sampled per example and batch;
  ``nontoxic_only`` pairs only non-toxic examples (CLP_nontox). ``clp_reduction`` says how the batch's pair terms
  combine: ``sum`` (default) as paper 001's objective writes it — λ times the sum over the batch's pairs, added to
  the batch's mean classification loss, so λ values compare with the paper's (and the pull of a given λ grows with
  the batch size); ``mean`` — λ times the mean over the pairs (counterfair before 0.x, and λ then does not depend on
  the batch size).

Only the identity set's training terms are used in training; held-out terms measure generalisation.
The CNN follows paper 001's replication (kernel sizes 2, 3, 4, 5; 300 filters each; max-pooling; one logit); its
300-dimensional word vectors come from spaCy's medium English model when installed (``--vectors spacy``; the paper
used Word2Vec from Google News, which no package here ships) or are learned. Pretrained vectors are fine-tuned with
the rest of the network unless ``freeze_vectors`` (``--freeze-vectors``) keeps them as loaded; the paper does not say
which it did. The MiniLM head
is a 2-layer MLP over frozen all-MiniLM-L6-v2 sentence embeddings.

A trained model directory holds ``config.json``, ``model.safetensors`` and ``vocab.json``; it is a classifier for
every command as ``model:DIR``. Training writes a checkpoint after every epoch; ``resume=True`` continues from it.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from .errors import ConfigError, InputError
from .io import cell_text, read_table, require_columns
from .jsontypes import JSONObject
from .lexicons.attributes import IdentitySet, load_identity_set
from .progress import NullProgress, ProgressHook
from .records import SCHEMA_VERSION
from .writing import atomic_open

METHODS = ("baseline", "blind", "augment", "clp")
ARCHITECTURES = ("cnn", "minilm")
PAD, UNK, PLACEHOLDER = "<pad>", "<unk>", "identity"


@dataclass
class TrainConfig:
    method: str = "baseline"
    architecture: str = "cnn"
    lam: float = 1.0
    nontoxic_only: bool = False
    augment: str = "all"
    epochs: int = 10
    batch_size: int = 64
    lr: float = 1e-3
    filters: int = 300
    kernel_sizes: tuple[int, ...] = (2, 3, 4, 5)
    embedding_dim: int = 300
    vectors: str = "learned"  # learned | spacy
    freeze_vectors: bool = False
    clp_reduction: str = "sum"  # sum (paper 001) | mean
    dropout: float = 0.5
    max_tokens: int = 200
    hidden: int = 256
    seed: int = 0
    identities: str | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"unknown method {self.method!r}; use one of {', '.join(METHODS)}")
        if self.architecture not in ARCHITECTURES:
            raise ConfigError(f"unknown architecture {self.architecture!r}; use cnn or minilm")
        if self.augment not in ("all", "one"):
            raise ConfigError("augment must be 'all' or 'one'")
        if self.lam < 0:
            raise ConfigError("lambda must be >= 0")
        if self.vectors not in ("learned", "spacy"):
            raise ConfigError("vectors must be 'learned' or 'spacy'")
        if self.freeze_vectors and self.vectors != "spacy":
            raise ConfigError("freeze_vectors needs pretrained vectors (vectors='spacy'); learned vectors must train")
        if self.clp_reduction not in ("sum", "mean"):
            raise ConfigError("clp_reduction must be 'sum' (paper 001) or 'mean'")
        self.kernel_sizes = tuple(int(k) for k in self.kernel_sizes)


def read_labelled(source: Any, *, text_column: str, label_column: str) -> tuple[list[str], np.ndarray]:
    """Texts and 0/1 labels; a clear error for a missing text, a NaN or non-binary label, or a single class."""
    from .labels import binary_labels

    origin = str(source) if not isinstance(source, pd.DataFrame) else "DataFrame"
    frame = read_table(source)
    require_columns(frame, {text_column: "--text-column", label_column: "--label-column"}, origin=origin)
    texts = []
    for row, value in enumerate(frame[text_column].tolist()):
        text = cell_text(value)
        if text is None or not text.strip():
            raise InputError(f"{origin}: row {row} has no text in column {text_column!r}")
        texts.append(text)
    labels = binary_labels(frame, label_column, origin)
    classes = set(labels.tolist())
    if len(classes) < 2:
        raise InputError(
            f"{origin}: column {label_column!r} has only one class ({classes.pop():g}); training needs both"
        )
    return texts, labels.astype(np.float32)


# --------------------------------------------------------------------------------------------- models


def _tokens(text: str) -> list[str]:
    from .text import tokenize

    return [t.lower() for t in tokenize(text)]


class Vocabulary:
    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def build(cls, texts: Sequence[Sequence[str]], extra: Sequence[str] = ()) -> Vocabulary:
        seen: dict[str, None] = {PAD: None, UNK: None, PLACEHOLDER: None}
        for tokens in texts:
            seen.update(dict.fromkeys(tokens))
        for term in extra:
            seen.update(dict.fromkeys(_tokens(term)))
        return cls(list(seen))

    def encode(self, tokens: Sequence[str], max_tokens: int) -> list[int]:
        ids = [self.index.get(t, 1) for t in tokens[:max_tokens]]
        return ids or [1]


def _spacy_vectors(vocab: Vocabulary, dim: int) -> Any:
    import torch

    from .models import spacy_vectors

    nlp = spacy_vectors()
    width = nlp.vocab.vectors.shape[1]
    if width != dim:
        raise ConfigError(f"spaCy vectors have {width} dimensions; use --embedding-dim {width}")
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(len(vocab.words), dim, generator=generator) * 0.1
    weight[0] = 0
    for word, i in vocab.index.items():
        if nlp.vocab.has_vector(word):
            weight[i] = torch.from_numpy(np.asarray(nlp.vocab.get_vector(word), dtype=np.float32).copy())
    return weight


def _build_cnn(config: TrainConfig, vocab_size: int) -> Any:
    import torch

    class TextCNN(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = torch.nn.Embedding(vocab_size, config.embedding_dim, padding_idx=0)
            self.convs = torch.nn.ModuleList(
                torch.nn.Conv1d(config.embedding_dim, config.filters, k) for k in config.kernel_sizes
            )
            self.dropout = torch.nn.Dropout(config.dropout)
            self.out = torch.nn.Linear(config.filters * len(config.kernel_sizes), 1)

        def forward(self, ids: Any) -> Any:
            x = self.embedding(ids).transpose(1, 2)
            lengths = (ids != 0).sum(dim=1)
            pooled = []
            for k, conv in zip(config.kernel_sizes, self.convs, strict=True):
                h = torch.relu(conv(x))
                # only windows that start inside the text: padding must not change a text's score
                last_start = (lengths - k).clamp(min=0)
                valid = torch.arange(h.shape[2])[None, :] <= last_start[:, None]
                pooled.append(h.masked_fill(~valid[:, None, :], float("-inf")).max(dim=2).values)
            return self.out(self.dropout(torch.cat(pooled, dim=1))).squeeze(1)

    return TextCNN()


def _build_head(config: TrainConfig, in_dim: int) -> Any:
    import torch

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(in_dim, config.hidden),
                torch.nn.ReLU(),
                torch.nn.Dropout(config.dropout),
                torch.nn.Linear(config.hidden, 1),
            )

        def forward(self, x: Any) -> Any:
            return self.net(x).squeeze(1)

    return Head()


class _Featurizer:
    """Turns texts into model inputs: padded id tensors (CNN) or sentence embeddings (MiniLM head)."""

    def __init__(self, config: TrainConfig, vocab: Vocabulary | None, blind: Any) -> None:
        self.config, self.vocab, self.blind = config, vocab, blind
        self._cache: dict[str, Any] = {}

    def __call__(self, texts: Sequence[str]) -> Any:
        import torch

        if self.blind is not None:
            texts = self.blind.transform(texts)
        if self.config.architecture == "minilm":
            from .encoders import embed

            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if todo:
                for t, v in zip(todo, embed(todo), strict=True):
                    self._cache[t] = torch.from_numpy(v)
            return torch.stack([self._cache[t] for t in texts])
        assert self.vocab is not None
        encoded = [self.vocab.encode(_tokens(t), self.config.max_tokens) for t in texts]
        width = max(max(len(e) for e in encoded), max(self.config.kernel_sizes))
        out = torch.zeros((len(encoded), width), dtype=torch.long)
        for i, ids in enumerate(encoded):
            out[i, : len(ids)] = torch.tensor(ids)
        return out


# --------------------------------------------------------------------------------------------- training


@dataclass
class TrainResult:
    out_dir: Path
    config: TrainConfig
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    evaluation: TrainedEvaluation | None = None  # classification_report + collapse warning


class ClassificationReport(TypedDict):
    """A classifier's accuracy, TPR, TNR and AUC at a threshold, and the spread of its scores (NaN: undefined)."""

    n: int
    accuracy: float
    tpr: float
    tnr: float
    auc: float
    score_std: float
    positive_rate: float


class TrainedEvaluation(TypedDict):
    """:class:`ClassificationReport` of a trained model on the data named ``on`` (None: undefined), and whether it
    collapsed (:func:`collapse_warning`)."""

    on: str
    n: int
    accuracy: float | None
    tpr: float | None
    tnr: float | None
    auc: float | None
    score_std: float | None
    positive_rate: float | None
    collapse_warning: str | None


def _counterfactual_map(texts: Sequence[str], identities: IdentitySet, seed: int) -> list[list[str]]:
    """Counterfactuals of each text over the training terms only."""
    from .editors.swap import IdentitySwapEditor

    train_only = identities.subset("train")
    editor = IdentitySwapEditor(train_only, guard=None, grammar=False)  # Φ_A exactly: tokens only
    return [[c.text for c in cands] for cands in editor.edit(texts)]


def clp_penalty(logits: Any, counterfactual_logits: Any, reduction: str) -> Any:
    """The logit-pairing term of one batch before λ: Σ|g(x) - g(x')| (paper 001) or its mean over the pairs."""
    differences = (logits - counterfactual_logits).abs()
    return differences.sum() if reduction == "sum" else differences.mean()


def train(
    source: Any,
    out_dir: str | Path,
    config: TrainConfig | None = None,
    *,
    text_column: str = "text",
    label_column: str = "label",
    resume: bool = False,
    progress: ProgressHook | None = None,
) -> TrainResult:
    """Train a toxicity classifier with one of :data:`METHODS` and save it to ``out_dir``."""
    import torch

    from .editors.blind import Blindness

    cfg = config or TrainConfig()
    hook = progress or NullProgress()
    texts, labels = read_labelled(source, text_column=text_column, label_column=label_column)
    identities = load_identity_set(cfg.identities)
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    data = _training_set(texts, labels, cfg, identities, rng)
    blind = Blindness(identities, split="train", token=PLACEHOLDER) if cfg.method == "blind" else None
    model, vocab = _model_and_vocab(cfg, target, resume, data, identities, blind)
    featurize = _Featurizer(cfg, vocab, blind)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    checkpoint = target / "checkpoint.pt"
    start_epoch, history = _restore(checkpoint, model, optimizer, rng, resume)
    steps = math.ceil(len(data.texts) / cfg.batch_size)
    hook.start(f"train {cfg.method} ({cfg.architecture})", (cfg.epochs - start_epoch) * steps)
    started = time.perf_counter()
    for epoch in range(start_epoch, cfg.epochs):
        loss, pair_loss = _epoch(model, optimizer, featurize, data, cfg, rng, hook)
        history.append({"epoch": epoch + 1, "loss": loss, "pair_loss": pair_loss})
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1}
        state |= {"history": history, "numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}
        torch.save(state, checkpoint)
    seconds = time.perf_counter() - started
    meta = _save_model(target, model, vocab, cfg, identities, texts, labels, len(data.texts), history, seconds)
    checkpoint.unlink(missing_ok=True)
    evaluation = evaluate_trained(target, texts, labels, on="training data (in-sample)")
    with atomic_open(target / "config.json", "w", encoding="utf-8") as handle:
        json.dump({**meta, "evaluation": evaluation}, handle, indent=2, default=lambda v: None)
    return TrainResult(target, cfg, history, seconds, evaluation)


@dataclass
class _TrainingSet:
    texts: list[str]  # the inputs, then (augment) their counterfactuals
    labels: np.ndarray
    counterfactuals: list[list[str]] | None  # per input (augment, clp)


def _training_set(
    texts: list[str], labels: np.ndarray, cfg: TrainConfig, identities: Any, rng: np.random.Generator
) -> _TrainingSet:
    """The texts to train on: the inputs and, for ``augment``, all or one counterfactual of each with its label."""
    counterfactuals = _counterfactual_map(texts, identities, cfg.seed) if cfg.method in ("augment", "clp") else None
    train_texts, train_labels = list(texts), labels.copy()
    if cfg.method == "augment" and counterfactuals is not None:
        extra_t, extra_y = [], []
        for text_cfs, y in zip(counterfactuals, labels, strict=True):
            chosen = text_cfs if cfg.augment == "all" else ([text_cfs[rng.integers(len(text_cfs))]] if text_cfs else [])
            extra_t.extend(chosen)
            extra_y.extend([y] * len(chosen))
        train_texts += extra_t
        train_labels = np.concatenate([labels, np.asarray(extra_y, dtype=np.float32)])
    return _TrainingSet(train_texts, train_labels, counterfactuals)


def _model_and_vocab(
    cfg: TrainConfig, target: Path, resume: bool, data: _TrainingSet, identities: Any, blind: Any
) -> tuple[Any, Vocabulary | None]:
    """The CNN with its vocabulary (kept from the interrupted run on resume), or the head over MiniLM."""
    import torch

    if cfg.architecture != "cnn":
        return _build_head(cfg, 384), None
    vocab_path = target / "vocab.json"
    if resume and vocab_path.exists():
        vocab = Vocabulary(json.loads(vocab_path.read_text(encoding="utf-8")))
    else:
        seen_texts = blind.transform(data.texts) if blind is not None else data.texts
        vocab = Vocabulary.build([_tokens(t) for t in seen_texts], extra=identities.terms)
    model = _build_cnn(cfg, len(vocab.words))
    if cfg.vectors == "spacy" and not resume:
        with torch.no_grad():
            model.embedding.weight.copy_(_spacy_vectors(vocab, cfg.embedding_dim))
    if cfg.freeze_vectors:
        model.embedding.weight.requires_grad_(False)
    return model, vocab


def _restore(
    checkpoint: Path, model: Any, optimizer: Any, rng: np.random.Generator, resume: bool
) -> tuple[int, list[dict[str, float]]]:
    """The epoch to start from and the history so far: 0 and none, or where an interrupted run stopped."""
    import torch

    if not resume:
        return 0, []
    if not checkpoint.exists():
        raise ConfigError(f"{checkpoint.parent}: nothing to resume (no checkpoint.pt)")
    state = torch.load(checkpoint, weights_only=False)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    rng.bit_generator.state = state["numpy_rng"]  # continue exactly where the interrupted run was
    torch.set_rng_state(state["torch_rng"])
    return int(state["epoch"]), list(state["history"])


def _epoch(
    model: Any,
    optimizer: Any,
    featurize: Any,
    data: _TrainingSet,
    cfg: TrainConfig,
    rng: np.random.Generator,
    hook: ProgressHook,
) -> tuple[float, float]:
    """One shuffled pass; the mean loss per batch and the mean CLP pair term per batch."""
    import torch

    model.train()
    loss_fn = torch.nn.BCEWithLogitsLoss()
    n, counterfactuals = len(data.texts), data.counterfactuals
    steps = math.ceil(n / cfg.batch_size)
    order = rng.permutation(n)
    total, total_pair = 0.0, 0.0
    for s in range(steps):
        idx = order[s * cfg.batch_size : (s + 1) * cfg.batch_size]
        logits = model(featurize([data.texts[i] for i in idx]))
        loss = loss_fn(logits, torch.from_numpy(data.labels[idx]))
        if cfg.method == "clp" and counterfactuals is not None and cfg.lam > 0:
            pick, pair_texts = [], []
            for j, i in enumerate(idx):
                options = counterfactuals[i] if i < len(counterfactuals) else []
                if options and not (cfg.nontoxic_only and data.labels[i] == 1):
                    pick.append(j)
                    pair_texts.append(options[rng.integers(len(options))])
            if pick:
                pair = clp_penalty(logits[pick], model(featurize(pair_texts)), cfg.clp_reduction)
                loss = loss + cfg.lam * pair
                total_pair += pair.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
        hook.advance(1)
    return total / steps, total_pair / steps


def _save_model(
    target: Path,
    model: Any,
    vocab: Vocabulary | None,
    cfg: TrainConfig,
    identities: Any,
    texts: list[str],
    labels: np.ndarray,
    rows_trained: int,
    history: list[dict[str, float]],
    seconds: float,
) -> JSONObject:
    """``model.safetensors``, ``vocab.json`` (CNN) and ``config.json``; returns the config written."""
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(target / "model.safetensors"))
    if vocab is not None:
        with atomic_open(target / "vocab.json", "w", encoding="utf-8") as handle:
            json.dump(vocab.words, handle)
    meta: JSONObject = {
        "schema_version": SCHEMA_VERSION,
        "kind": "counterfair-toxicity-model",
        "config": asdict(cfg),
        "identities": {
            "name": identities.name,
            "train": list(identities.train),
            "heldout": list(identities.heldout),
            "ambiguous": sorted(identities.ambiguous),
        },
        "labels": ["non-toxic", "toxic"],
        "training": {
            "rows": len(texts),
            "rows_with_augmentation": rows_trained,
            "positives": int(labels.sum()),
            "history": history,
            "seconds": round(seconds, 2),
        },
    }
    with atomic_open(target / "config.json", "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=2)
    return meta


def evaluate_trained(model_dir: Path, texts: Sequence[str], labels: np.ndarray, *, on: str) -> TrainedEvaluation:
    """Accuracy, AUC, TPR, TNR of a trained model on ``texts``, and whether it collapsed (see
    :func:`collapse_warning`): what ``counterfair train`` reports, so a CTF gap won by collapsing is seen."""
    scores = TrainedClassifier(model_dir).predict_proba(list(texts))[:, 1]
    r = classification_report(labels, scores)

    def defined(value: float) -> float | None:
        return None if math.isnan(value) else value

    return {
        "on": on,
        "n": r["n"],
        "accuracy": defined(r["accuracy"]),
        "tpr": defined(r["tpr"]),
        "tnr": defined(r["tnr"]),
        "auc": defined(r["auc"]),
        "score_std": defined(r["score_std"]),
        "positive_rate": defined(r["positive_rate"]),
        "collapse_warning": collapse_warning(r),
    }


class TrainedClassifier:
    """A model saved by :func:`train`, behind the classifier protocol (labels ``non-toxic``, ``toxic``)."""

    labels = ("non-toxic", "toxic")

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        path = self.directory / "config.json"
        if not path.exists():
            raise ConfigError(f"{self.directory}: not a counterfair model directory (no config.json)")
        self.meta = json.loads(path.read_text(encoding="utf-8"))
        if self.meta.get("kind") != "counterfair-toxicity-model":
            raise ConfigError(f"{self.directory}: config.json is not a counterfair toxicity model")
        self._model: Any = None
        self._featurize: Any = None

    def _load(self) -> None:
        if self._model is not None:
            return
        from safetensors.torch import load_file

        from .editors.blind import Blindness

        cfg = TrainConfig(**{**self.meta["config"], "kernel_sizes": tuple(self.meta["config"]["kernel_sizes"])})
        ids = self.meta["identities"]
        identities = IdentitySet(ids["name"], tuple(ids["train"]), tuple(ids["heldout"]), frozenset(ids["ambiguous"]))
        vocab = None
        if cfg.architecture == "cnn":
            vocab = Vocabulary(json.loads((self.directory / "vocab.json").read_text(encoding="utf-8")))
            model = _build_cnn(cfg, len(vocab.words))
        else:
            model = _build_head(cfg, 384)
        model.load_state_dict(load_file(str(self.directory / "model.safetensors")))
        self._model = model.eval()
        blind = Blindness(identities, split="train", token=PLACEHOLDER) if cfg.method == "blind" else None
        self._featurize = _Featurizer(cfg, vocab, blind)

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        self._load()
        out = []
        with torch.no_grad():
            for start in range(0, len(texts), 256):
                out.append(self._model(self._featurize(list(texts[start : start + 256]))).numpy())
        return np.concatenate(out) if out else np.zeros(0)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        p = 1.0 / (1.0 + np.exp(-self.logits(texts).astype(float)))
        return np.stack([1.0 - p, p], axis=1)


# --------------------------------------------------------------------------------------------- evaluation


def classification_report(labels: np.ndarray, scores: np.ndarray, *, threshold: float = 0.5) -> ClassificationReport:
    """Accuracy, AUC, TPR, TNR at ``threshold``, and the spread of the scores."""
    from sklearn.metrics import roc_auc_score

    y = np.asarray(labels, dtype=float)
    s = np.asarray(scores, dtype=float)
    pred = s >= threshold
    positives, negatives = y == 1, y == 0
    out: ClassificationReport = {
        "n": len(y),
        "accuracy": float((pred == positives).mean()) if len(y) else math.nan,
        "tpr": float(pred[positives].mean()) if positives.any() else math.nan,
        "tnr": float((~pred[negatives]).mean()) if negatives.any() else math.nan,
        "auc": float(roc_auc_score(y, s)) if positives.any() and negatives.any() else math.nan,
        "score_std": float(s.std()) if len(s) else math.nan,
        "positive_rate": float(pred.mean()) if len(s) else math.nan,
    }
    return out


def collapse_warning(report: Mapping[str, Any], *, min_tpr: float = 0.05, min_std: float = 0.02) -> str | None:
    """A model that shrank its CTF gap by no longer telling texts apart: TPR near 0 or near-constant scores."""
    reasons = []
    if not math.isnan(report.get("tpr", math.nan)) and report["tpr"] < min_tpr:
        reasons.append(f"TPR {report['tpr']:.3f} < {min_tpr}: it almost never predicts toxic")
    if not math.isnan(report.get("score_std", math.nan)) and report["score_std"] < min_std:
        reasons.append(f"score standard deviation {report['score_std']:.4f} < {min_std}: near-constant scores")
    return "; ".join(reasons) or None
