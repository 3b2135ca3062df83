"""Attribute-reference detectors: does a text (still) reference the sensitive attribute?

Three kinds behind one interface (``reference_proba(texts) -> (n,)`` probabilities):

* ``keyword`` — 1 if any of the attribute's terms occurs (whole word, any case), else 0; no model.
* ``mlp:DIR`` — paper 000 App. A.3: a two-layer network (hidden 2048) over a sentence encoder, multi-label,
  trained with ``counterfair train-attribute`` (:func:`train_attribute_classifier`). The paper embeds with BERT's
  first token; we use all-MiniLM-L6-v2's sentence embedding (mean pooling, normalised), the encoder that ships here.
* ``llm`` — asks an instruction LLM the rater question of App. C (explicit / implicit / no reference); explicit or
  implicit counts as a reference. The raw answer is kept; an answer that cannot be parsed after retries gives NaN
  (the filter then rejects the candidate with the reason ``attribute_unknown``), never a made-up value.
* ``keyword+llm`` — the keyword detector's 1 where a term occurs; elsewhere the probability that an instruction LLM
  answers "yes" to "is this text about <subject>, by naming or alluding to them?" (one worked pair about another
  group before it; from the answer's first-token log-probabilities where the backend gives them). It sees allusions
  the word list cannot ("during Eid"). Before its first answer it asks three control questions and refuses an LLM
  that cannot tell them apart (``AllusionControls``). The default for runs that load an LLM anyway (``auto``).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, Protocol, TypedDict, runtime_checkable

import numpy as np
import pandas as pd

from .encoders import embed
from .errors import ConfigError, InputError
from .io import cell_text, read_table, require_columns
from .jsontypes import JSONObject
from .lexicons.attributes import Attribute
from .progress import NullProgress, ProgressHook
from .records import SCHEMA_VERSION
from .writing import atomic_open


@runtime_checkable
class AttributeDetector(Protocol):
    name: str

    def reference_proba(self, texts: Sequence[str]) -> np.ndarray: ...

    def info(self) -> JSONObject: ...


class KeywordDetector:
    """Probability 1 when one of the attribute's terms occurs, else 0."""

    name = "keyword"

    def __init__(self, attribute: Attribute) -> None:
        self.attribute = attribute
        self._matcher = attribute.matcher()

    def reference_proba(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([1.0 if self._matcher.contains(t) else 0.0 for t in texts])

    def info(self) -> JSONObject:
        return {"detector": "keyword", "attribute": self.attribute.name, "terms": list(self.attribute.terms)}


# --------------------------------------------------------------------------------------------- MLP


def _mlp(in_dim: int, hidden: int, out_dim: int) -> Any:
    import torch

    return torch.nn.Sequential(torch.nn.Linear(in_dim, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, out_dim))


@dataclass
class TrainResult:
    out_dir: Path
    labels: list[str]
    metrics: dict[str, Any] = field(default_factory=dict)


def _binary_labels(frame: pd.DataFrame, columns: Sequence[str], origin: str) -> np.ndarray:
    out = np.zeros((len(frame), len(columns)), dtype=np.float32)
    for j, column in enumerate(columns):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{origin}: row {row}, column {column!r}: {frame[column].iloc[row]!r} is not a number")
        out[:, j] = (values.fillna(0.0).to_numpy() > 0.5).astype(np.float32)
    return out


PAPER_STEPS = 36_000
"""Paper 000 App. A.3: 36k AdamW steps of batch 256."""
PAPER_NEGATIVES = 20_000
"""Paper 000 App. A.3: 20k sampled texts that reference none of the attributes."""


def _negative_sample(y: np.ndarray, limit: int | None, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, int]]:
    """Rows to train on: every row with a positive label and at most ``limit`` rows with none (random, seeded)."""
    negative = np.flatnonzero(y.sum(axis=1) == 0)
    keep_negative = negative
    if limit is not None and len(negative) > limit:
        keep_negative = np.sort(rng.choice(negative, size=limit, replace=False))
    rows = np.sort(np.concatenate([np.flatnonzero(y.sum(axis=1) > 0), keep_negative]))
    return rows, {"available": len(negative), "kept": len(keep_negative)}


def _batches(train_idx: np.ndarray, batch_size: int, steps: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """``steps`` mini-batches: shuffled passes over ``train_idx``, the last pass cut where the steps end."""
    done = 0
    while done < steps:
        perm = rng.permutation(train_idx)
        for start in range(0, len(perm), batch_size):
            if done == steps:
                return
            yield perm[start : start + batch_size]
            done += 1


class LabelValidation(TypedDict):
    """One label of the attribute classifier on the held-out rows: F1 at 0.5, positives, AUC where both classes
    occur."""

    f1: float
    positives: int
    auc: NotRequired[float]


def _validation_metrics(
    model: Any, x: Any, y: np.ndarray, val_idx: np.ndarray, labels: Sequence[str]
) -> dict[str, LabelValidation]:
    import torch
    from sklearn.metrics import f1_score, roc_auc_score

    with torch.no_grad():
        p_val = torch.sigmoid(model(x[torch.from_numpy(val_idx)])).numpy()
    per_label: dict[str, LabelValidation] = {}
    for j, column in enumerate(labels):
        truth = y[val_idx, j]
        entry: LabelValidation = {
            "f1": float(f1_score(truth, p_val[:, j] > 0.5, zero_division=0)),
            "positives": int(truth.sum()),
        }
        if 0 < truth.sum() < len(truth):
            entry["auc"] = float(roc_auc_score(truth, p_val[:, j]))
        per_label[column] = entry
    return per_label


def _read_training_frame(
    source: str | Path | pd.DataFrame, text_column: str, label_columns: Sequence[str]
) -> tuple[list[str], np.ndarray, str]:
    if not label_columns:
        raise ConfigError("give at least one label column (--label-columns)")
    origin = str(source) if not isinstance(source, pd.DataFrame) else "DataFrame"
    frame = read_table(source)
    require_columns(
        frame, {text_column: "--text-column", **dict.fromkeys(label_columns, "--label-columns")}, origin=origin
    )
    texts = [cell_text(v) for v in frame[text_column].tolist()]
    for row, text in enumerate(texts):
        if text is None or not text.strip():
            raise InputError(f"{origin}: row {row} has no text in column {text_column!r}")
    y = _binary_labels(frame, label_columns, origin)
    for j, column in enumerate(label_columns):
        if y[:, j].sum() == 0:
            raise InputError(f"{origin}: label column {column!r} has no positive example (score > 0.5)")
    return [t or "" for t in texts], y, origin


def _check_schedule(steps: int | None, epochs: int | None, batch_size: int, negatives: int | None) -> None:
    """The schedule's options, checked before any data is read or embedded."""
    if steps is not None and epochs is not None:
        raise ConfigError("give either steps or epochs, not both")
    if (steps is not None and steps < 1) or (epochs is not None and epochs < 1) or batch_size < 1:
        raise ConfigError("steps, epochs and batch size must be at least 1")
    if negatives is not None and negatives < 0:
        raise ConfigError(f"negatives must be 0 or more (None keeps all), got {negatives}")


def _schedule(steps: int | None, epochs: int | None, train_rows: int, batch_size: int) -> tuple[int, JSONObject]:
    _check_schedule(steps, epochs, batch_size, None)
    per_epoch = max(1, math.ceil(train_rows / batch_size))
    if epochs is not None:
        return epochs * per_epoch, {"schedule": "epochs", "epochs": epochs}
    total = PAPER_STEPS if steps is None else steps
    return total, {"schedule": "steps", "steps": total, "epochs_equivalent": round(total / per_epoch, 1)}


def train_attribute_classifier(
    source: str | Path | pd.DataFrame,
    out_dir: str | Path,
    *,
    text_column: str = "comment_text",
    label_columns: Sequence[str],
    hidden: int = 2048,
    lr: float = 1e-3,
    weight_decay: float = 2e-3,
    batch_size: int = 256,
    steps: int | None = None,
    epochs: int | None = None,
    negatives: int | None = PAPER_NEGATIVES,
    validation: float = 0.1,
    encoder: str = "all-minilm-l6-v2",
    seed: int = 0,
    progress: ProgressHook | None = None,
) -> TrainResult:
    """Train the multi-label attribute classifier of paper 000 App. A.3 and save it to ``out_dir``.

    Label columns hold identity scores (CivilComments-Identities style): a text is positive for a label when its
    score is above 0.5. Rows with no text are an error naming the row; missing scores count as 0. As in the paper,
    every text with a positive label is kept and at most ``negatives`` (20k) of the texts with none, sampled
    (``None`` keeps all), and training runs ``steps`` mini-batches (36k); ``epochs=N`` trains N passes instead.
    """
    import torch
    from safetensors.torch import save_file

    _check_schedule(steps, epochs, batch_size, negatives)
    texts, y_all, origin = _read_training_frame(source, text_column, label_columns)
    rng = np.random.default_rng(seed)
    rows, negative_info = _negative_sample(y_all, negatives, rng)
    hook = progress or NullProgress()
    x = embed([texts[i] for i in rows], encoder=encoder)
    y = y_all[rows]
    order = rng.permutation(len(x))
    n_val = round(len(x) * validation) if len(x) >= 20 else 0
    val_idx, train_idx = order[:n_val], order[n_val:]
    total_steps, schedule = _schedule(steps, epochs, len(train_idx), batch_size)
    torch.manual_seed(seed)
    model = _mlp(x.shape[1], hidden, len(label_columns))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    hook.start("train attribute classifier", total_steps)
    started = time.perf_counter()
    loss = torch.zeros(())
    for batch in _batches(train_idx, batch_size, total_steps, rng):
        index = torch.from_numpy(batch)
        optimizer.zero_grad()
        loss = loss_fn(model(xt[index]), yt[index])
        loss.backward()
        optimizer.step()
        hook.advance(1)
    metrics: dict[str, Any] = {
        "train_rows": len(train_idx),
        "val_rows": n_val,
        "negatives": negative_info,
        "steps": total_steps,
        "final_loss": float(loss.item()),
        "seconds": round(time.perf_counter() - started, 2),
    }
    if n_val:
        metrics["validation"] = _validation_metrics(model, xt, y, val_idx, label_columns)
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(target / "model.safetensors"))
    training = {"lr": lr, "weight_decay": weight_decay, "batch_size": batch_size, **schedule, "negatives": negatives}
    config = {
        "schema_version": SCHEMA_VERSION,
        "kind": "attribute-mlp",
        "labels": list(label_columns),
        "encoder": encoder,
        "input_dim": int(x.shape[1]),
        "hidden": hidden,
        "threshold": 0.5,
        "training": {**training, "seed": seed, "source": origin, "text_column": text_column},
        "metrics": metrics,
    }
    with atomic_open(target / "config.json", "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2)
    return TrainResult(target, list(label_columns), metrics)


class MLPDetector:
    """A classifier saved by :func:`train_attribute_classifier`; ``label`` picks the output for the attribute."""

    name = "mlp"

    def __init__(self, directory: str | Path, *, label: str | None = None, attribute: Attribute | None = None) -> None:
        self.directory = Path(directory)
        config_path = self.directory / "config.json"
        if not config_path.exists():
            raise ConfigError(f"{self.directory}: not an attribute classifier (no config.json)")
        self.config = json.loads(config_path.read_text(encoding="utf-8"))
        labels = [str(x) for x in self.config["labels"]]
        if label is None and attribute is not None:
            names = [attribute.name, *attribute.aliases]
            label = next((lab for lab in labels if lab.lower() in names), None)
            if label is None:
                raise ConfigError(
                    f"{self.directory}: none of its labels {labels} matches attribute {attribute.name!r} "
                    f"(or its aliases {list(attribute.aliases)}); name the label explicitly"
                )
        if label is None:
            label = labels[0]
        if label not in labels:
            raise ConfigError(f"{self.directory}: no label {label!r}; labels: {labels}")
        self.label = label
        self._index = labels.index(label)
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            from safetensors.torch import load_file

            model = _mlp(int(self.config["input_dim"]), int(self.config["hidden"]), len(self.config["labels"]))
            model.load_state_dict(load_file(str(self.directory / "model.safetensors")))
            self._model = model.eval()
        return self._model

    def predict_all(self, texts: Sequence[str]) -> np.ndarray:
        """Probabilities for every label, ``(n, labels)``."""
        import torch

        if not texts:
            return np.zeros((0, len(self.config["labels"])))
        x = torch.from_numpy(embed(texts, encoder=str(self.config["encoder"])))
        with torch.no_grad():
            return torch.sigmoid(self._load()(x)).numpy().astype(float)

    def reference_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.predict_all(texts)[:, self._index] if texts else np.zeros(0)

    def info(self) -> JSONObject:
        from .io import file_sha256

        return {
            "detector": "mlp",
            "path": str(self.directory),
            "label": self.label,
            "sha256": file_sha256(self.directory / "model.safetensors"),
            "encoder": self.config["encoder"],
        }


# --------------------------------------------------------------------------------------------- LLM

_ANSWER = re.compile(r"\b(explicit(?:ly)?|implicit(?:ly)?|no(?:t)?\s+reference|none|not\s+at\s+all)\b", re.IGNORECASE)


def parse_reference_answer(raw: str) -> str | None:
    """``explicit``, ``implicit`` or ``none`` from an LLM's answer, or ``None`` if it gives no clear answer."""
    found = [m.group(1).lower() for m in _ANSWER.finditer(raw)]
    kinds = {
        "explicit" if f.startswith("explicit") else "implicit" if f.startswith("implicit") else "none" for f in found
    }
    return kinds.pop() if len(kinds) == 1 else None


class LLMDetector:
    """Asks an instruction LLM App. C's question about the attribute (greedy decoding, retried when unclear)."""

    name = "llm"

    def __init__(self, llm: Any, attribute: Attribute, *, retries: int = 2) -> None:
        self.llm = llm
        self.attribute = attribute
        self.retries = retries
        self.raw: list[str] = []

    def question(self, text: str) -> list[dict[str, str]]:
        subject = self.attribute.subject
        return [
            {"role": "system", "content": "You rate texts for a fairness study. Answer with one word."},
            {
                "role": "user",
                "content": (
                    f"Does the text below reference {subject}? Answer 'explicit' if it names them or their religion, "
                    f"identity or group directly; 'implicit' if it alludes to them without naming them (for example "
                    f"through a symbol, practice or law commonly tied to them); 'none' otherwise. References to other "
                    f"groups do not count.\n\nText: {text}\n\nAnswer (explicit, implicit or none):"
                ),
            },
        ]

    def classify(self, texts: Sequence[str]) -> list[str | None]:
        from .llm.base import ask_until_parsed

        answers = ask_until_parsed(
            self.llm, [self.question(t) for t in texts], parse_reference_answer, retries=self.retries, max_tokens=8
        )
        for _, raw in answers:
            self.raw.extend(raw)
        return [verdict for verdict, _ in answers]

    def reference_proba(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([math.nan if a is None else (0.0 if a == "none" else 1.0) for a in self.classify(texts)])

    def info(self) -> JSONObject:
        return {"detector": "llm", "attribute": self.attribute.name, "llm": self.llm.info()}


# ------------------------------------------------------------------------------------- keyword + LLM

ALLUSION_QUESTION = (
    "Is the text below about {subject}, either by naming them or by alluding to them (a custom, holiday, practice, "
    "place, relationship or experience that is tied to them)? Answer yes or no.\n\nText: {text}"
)
# one worked pair about a group no built-in attribute is about, so the example leans towards none of them
ALLUSION_EXAMPLES = (
    ("Hindus", "They lit rows of clay lamps for Diwali.", "yes"),
    ("Hindus", "They lit rows of candles for the dinner party.", "no"),
)


@dataclass(frozen=True)
class AllusionControls:
    """Questions whose answers any usable LLM gets right: texts about nothing in particular must get P(yes) below
    ``max_unrelated``, a text that says it is about the subject at least ``min_named``. Qwen2.5-Coder-1.5B gives
    0.02–0.04 and 0.9+; the 0.5B gives ~0.4 to everything, so every rewrite would be judged by a coin."""

    unrelated: tuple[str, ...] = ("The train left the station on time.", "She bought a new pair of running shoes.")
    named: str = "This text is about {subject}."
    max_unrelated: float = 0.2
    min_named: float = 0.5


def allusion_task(subject: str) -> Any:
    """The labelling task of ``keyword+llm`` for ``subject`` ("Muslims")."""
    from .classifiers.llm import LabellingTask

    def ask(about: str, text: str) -> str:
        return ALLUSION_QUESTION.replace("{subject}", about).replace("{text}", text)

    question = ask(subject.replace("{", "{{").replace("}", "}}"), "{text}")
    examples = tuple((ask(about, text), answer) for about, text, answer in ALLUSION_EXAMPLES)
    return LabellingTask(("no reference", "reference"), question, examples=examples)


class KeywordLLMDetector:
    """``keyword+llm``: 1 where the attribute's word list matches, else an LLM's probability of "yes" to the allusion
    question (see the module docstring). Each distinct text is asked once per call."""

    name = "keyword+llm"

    def __init__(self, llm: Any, attribute: Attribute, *, controls: AllusionControls = AllusionControls()) -> None:
        from .classifiers.llm import LLMClassifier

        self.attribute = attribute
        self.keyword = KeywordDetector(attribute)
        self.classifier = LLMClassifier(llm, task=allusion_task(attribute.subject))
        self.controls = controls
        self.control_answers: dict[str, float] | None = None
        self.asked = 0  # distinct texts put to the LLM (control questions aside)

    def _yes(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.classifier.predict_proba(list(texts)), dtype=float)[:, 1]

    def check(self) -> dict[str, float]:
        """Ask the control questions once; a :class:`ConfigError` naming the failed answers if the LLM cannot tell
        them apart."""
        if self.control_answers is None:
            c = self.controls
            named = c.named.replace("{subject}", self.attribute.subject)
            probs = self._yes([*c.unrelated, named])
            answers = dict(zip([*c.unrelated, named], (round(float(p), 4) for p in probs), strict=True))

            def shown(text: str) -> str:
                return f"{text!r}: " + ("no yes/no answer" if math.isnan(answers[text]) else f"{answers[text]:.2f}")

            wrong = [shown(t) for t in c.unrelated if not answers[t] < c.max_unrelated]
            if not answers[named] >= c.min_named:
                wrong.append(shown(named))
            if wrong:
                raise ConfigError(
                    f"the keyword+llm detector's LLM ({self.classifier.llm.model_id}) fails its control questions "
                    f"(P(yes) {'; '.join(wrong)}; unrelated texts need < {c.max_unrelated:g}, the named one >= "
                    f"{c.min_named:g}): its verdicts would be noise. Use a larger LLM (the default "
                    f"qwen2.5-coder-1.5b-instruct passes) or --detector keyword"
                )
            self.control_answers = answers
        return self.control_answers

    def reference_proba(self, texts: Sequence[str]) -> np.ndarray:
        out = self.keyword.reference_proba(texts)
        unseen = list(dict.fromkeys(t for t, p in zip(texts, out, strict=True) if p == 0.0 and t.strip()))
        if unseen:
            self.check()
            self.asked += len(unseen)
            found = dict(zip(unseen, self._yes(unseen), strict=True))
            out = np.array([found.get(t, p) for t, p in zip(texts, out, strict=True)])
        return out

    def info(self) -> JSONObject:
        """The detector's signature, with its control answers and scoring mode: asked here if no text was yet, so a
        resumed run whose LLM work was all done before records what an uninterrupted one does."""
        controls = self.check()
        return {
            "detector": "keyword+llm",
            "attribute": self.attribute.name,
            "terms": list(self.attribute.terms),
            "classifier": self.classifier.signature(),
            "mode": self.classifier.mode,
            "controls": controls,
        }


DETECTORS_WITH_LLM = ("llm", "keyword+llm")


def load_detector(spec: str, attribute: Attribute, *, llm: Any = None) -> AttributeDetector:
    """``keyword``, ``mlp:DIR[#LABEL]``, ``llm`` or ``keyword+llm`` (the last two use ``llm``)."""
    kind, _, rest = spec.partition(":")
    if spec == "keyword":
        return KeywordDetector(attribute)
    if kind == "mlp" and rest:
        directory, _, label = rest.partition("#")
        return MLPDetector(directory, label=label or None, attribute=None if label else attribute)
    if spec in DETECTORS_WITH_LLM:
        if llm is None:
            raise ConfigError(f"the {spec} detector needs an LLM (--llm)")
        return LLMDetector(llm, attribute) if spec == "llm" else KeywordLLMDetector(llm, attribute)
    raise ConfigError(f"unknown detector {spec!r}; use keyword, keyword+llm, mlp:DIR[#LABEL] or llm")
