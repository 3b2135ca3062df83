"""A toy plugin: an editor and a classifier kind, registered in this one file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from counterfair.classifiers import ClassifierKind, register_classifier_kind
from counterfair.editors.base import EditorBase
from counterfair.editors.registry import EditorSpec, register_editor


class ShoutEditor(EditorBase):
    """Every text that mentions the attribute, in capitals."""

    name = "shout"

    def __init__(self, attribute: Any) -> None:
        from counterfair.lexicons.attributes import load_attribute

        self.attribute = load_attribute(attribute) if isinstance(attribute, str) else attribute
        self._matcher = self.attribute.matcher()

    def params(self) -> dict[str, Any]:
        return {"attribute": self.attribute.name}

    def edit(self, texts: Sequence[str], *, progress: Any = None) -> list[list[Any]]:
        return [[self.candidate(t.upper())] if self._matcher.contains(t) else [] for t in texts]


class LengthClassifier:
    """P(toxic) = the text's length over ``scale``, at most 1."""

    labels: ClassVar[list[str]] = ["non-toxic", "toxic"]

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        p = np.array([min(1.0, len(t) / self.scale) for t in texts])
        return np.stack([1 - p, p], axis=1)


register_editor(
    EditorSpec("shout", lambda ctx, arg: ShoutEditor(ctx.attribute), "the text in capitals", seconds_per_text=0.5)
)
register_classifier_kind(
    ClassifierKind(
        "length",
        lambda arg, spec: (LengthClassifier(float(arg)), {"type": "length", "scale": float(arg)}),
        "length:SCALE",
        "text length over SCALE",
    )
)
