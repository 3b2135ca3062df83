"""Exception hierarchy. Every error counterfair raises on purpose derives from :class:`CounterfairError`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class CounterfairError(Exception):
    """Root of every error raised deliberately by counterfair."""


class ConfigError(CounterfairError):
    """An option, spec string or argument is invalid."""


class InputError(CounterfairError):
    """User data cannot be read or used; the message names the file, row or column."""


class SchemaError(InputError):
    """A run directory or output file was written by an incompatible schema version."""


class ModelNotAvailable(CounterfairError):
    """A model is not installed; the message carries the exact pip line that installs it."""

    def __init__(self, message: str, *, pip: str | None = None) -> None:
        self.pip = pip
        super().__init__(f"{message}\n  install it with: {pip}" if pip else message)


class ChecksumError(CounterfairError):
    """A model file does not have the sha256 it should have."""


class OutputError(CounterfairError):
    """An output could not be written (a full disk, a read-only directory); what was there before is kept."""


class ClassifierError(CounterfairError):
    """A classifier failed or returned output of the wrong shape or range."""


class GeneratorError(CounterfairError):
    """An LLM audit's generator failed or answered in the wrong shape (what it answered before is kept)."""


class MetricError(CounterfairError):
    """A metric's compute failed or returned something other than one number per pair for each of its columns."""


class NativeLibraryError(CounterfairError):
    """A native library (llama.cpp) crashed or cannot run on this machine; the message names the setting to change."""


class LLMInputsFailed(CounterfairError):
    """Some inputs got no answer from the LLM (their requests failed after retries); ``records`` holds what was
    finished for the other inputs of the same step, which the caller saves before stopping."""

    def __init__(self, message: str, records: Sequence[Any]) -> None:
        super().__init__(message)
        self.records = list(records)
