"""Blindness (paper 001 §4.1.1): every identity term becomes one placeholder token.

A scikit-learn style transformer (``fit`` learns nothing, ``transform`` maps each text to one text), so it
drops into a Pipeline in front of a vectorizer. Idempotent: blinding a blinded text changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sklearn.base import BaseEstimator, TransformerMixin

from ..lexicons.attributes import IdentitySet, load_identity_set
from ..text import TermMatcher


class Blindness(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Replace identity terms with ``token``.

    ``identities``: an :class:`IdentitySet`, a list of terms, a spec for :func:`load_identity_set`, or ``None``
    for the built-in Dixon et al. set; ``split="train"`` blinds only the training terms (as in paper 001).
    """

    def __init__(
        self,
        identities: IdentitySet | Sequence[str] | str | None = None,
        *,
        token: str = "identity",
        split: str | None = None,
    ) -> None:
        self.identities = identities
        self.token = token
        self.split = split

    def _set(self) -> IdentitySet:
        identities = self.identities
        chosen = identities if isinstance(identities, IdentitySet) else load_identity_set(identities)
        return chosen.subset(self.split) if self.split else chosen

    def _matcher(self) -> TermMatcher:
        terms = self._set().terms
        if self.token.lower() in {t.lower() for t in terms}:
            raise ValueError(f"the placeholder {self.token!r} is itself an identity term")
        return TermMatcher(terms)

    def fit(self, texts: Iterable[str], y: Any = None) -> Blindness:
        self._matcher()  # validates the configuration
        return self

    def transform(self, texts: Iterable[str]) -> list[str]:
        matcher = self._matcher()
        return [matcher.replace(text, lambda match: self.token, keep_case=False)[0] for text in texts]
