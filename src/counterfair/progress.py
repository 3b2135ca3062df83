"""Progress reporting for long work: a tiny hook protocol, a rich implementation and a silent one."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Protocol


class ProgressHook(Protocol):
    """What long-running scorers call: ``start`` once with the total, ``advance`` as work finishes."""

    def start(self, description: str, total: int) -> None: ...

    def advance(self, amount: int) -> None: ...


class NullProgress:
    """Reports nothing."""

    def start(self, description: str, total: int) -> None:
        return None

    def advance(self, amount: int) -> None:
        return None

    def grow(self, amount: int) -> None:
        return None


class RichProgress:
    """Progress bars on stderr (one per stage, with rate and time remaining); a context manager."""

    def __init__(self, *, enabled: bool = True) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            disable=not enabled,
            transient=False,
        )
        self._task: Any = None

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def start(self, description: str, total: int) -> None:
        self._task = self._progress.add_task(description, total=total)

    def advance(self, amount: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, amount)

    def grow(self, amount: int) -> None:
        """More work than the stage started with (LLM reruns): the total grows by ``amount``."""
        if self._task is not None:
            total = next((t.total for t in self._progress.tasks if t.id == self._task), None)
            self._progress.update(self._task, total=(total or 0) + amount)
