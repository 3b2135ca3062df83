"""Progress reporting for long work: a tiny hook protocol, a rich implementation and a silent one."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol


class ProgressHook(Protocol):
    """What long-running scorers call: ``start`` once with the total, ``advance`` as work finishes."""

    def start(self, description: str, total: int) -> None: ...

    def advance(self, amount: int) -> None: ...


def answered(hook: Any, index: int, samples: list[Any]) -> None:
    """Tell ``hook`` that input ``index`` of the current call has all its samples, when the hook listens
    (``hook.answered(index, samples)``: an audit's checkpoint takes each input as it is answered, not per call)."""
    listener = getattr(hook, "answered", None)
    if listener is not None:
        listener(index, samples)


class NullProgress:
    """Reports nothing."""

    def start(self, description: str, total: int) -> None:
        return None

    def advance(self, amount: int) -> None:
        return None

    def grow(self, amount: int) -> None:
        return None


FORETELL_AFTER = 10.0  # seconds of a stage before its length is foretold


class Foretold:
    """A progress hook that passes every call on to ``inner`` and, once per stage, when the stage has run ``after``
    seconds, says (``say``) how long it will take, measured on its own work so far: where no figure could be known
    before the work (a server's or a model's speed), the first answers give one. Work a stage counts as done at its
    start (its first count, within half a second: a resumed run's) is not taken for speed."""

    def __init__(
        self,
        inner: Any,
        say: Callable[[str], None],
        *,
        after: float | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        import time

        self._inner, self._say = inner, say
        self._after = FORETELL_AFTER if after is None else after
        self._clock = clock or time.monotonic
        self._stage: dict[str, Any] = {}

    def start(self, description: str, total: int) -> None:
        self._inner.start(description, total)
        self._stage = {"what": description, "total": total, "began": self._clock(), "done": 0, "resumed": 0}

    def advance(self, amount: int) -> None:
        self._inner.advance(amount)
        stage = self._stage
        if not stage or stage.get("said"):
            return
        elapsed = self._clock() - stage["began"]
        first, stage["calls"] = not stage.get("calls"), True
        if first and elapsed < 0.5:
            stage["resumed"] += amount  # counted done at once: answered before (a resumed run)
            return
        stage["done"] += amount
        if elapsed >= self._after and stage["done"]:
            stage["said"] = True
            left = max(0, stage["total"] - stage["resumed"] - stage["done"]) * elapsed / stage["done"]
            self._say(
                f"{stage['what']}: {stage['resumed'] + stage['done']:,} of {stage['total']:,} in {_duration(elapsed)}; "
                f"about {_duration(left)} more at this speed"
            )

    def grow(self, amount: int) -> None:
        if self._stage:
            self._stage["total"] += amount
        grow = getattr(self._inner, "grow", None)
        if grow is not None:
            grow(amount)

    def __getattr__(self, name: str) -> Any:  # answered(), close(): the inner hook's
        return getattr(self._inner, name)


def _duration(seconds: float) -> str:
    """``seconds`` in the unit a reader takes in at once (s under two minutes, min under two hours, else h)."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


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
        from .redact import redact

        self._task = self._progress.add_task(redact(description), total=total)  # a classifier's URL: no secret

    def advance(self, amount: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, amount)

    def grow(self, amount: int) -> None:
        """More work than the stage started with (LLM reruns): the total grows by ``amount``."""
        if self._task is not None:
            total = next((t.total for t in self._progress.tasks if t.id == self._task), None)
            self._progress.update(self._task, total=(total or 0) + amount)


class TqdmProgress:
    """Progress bars for notebooks and terminals (``tqdm``: a widget in Jupyter when ipywidgets is installed, text
    otherwise); one bar per stage, each named by what it counts."""

    def __init__(self) -> None:
        self._bar: Any = None

    @staticmethod
    def _tqdm() -> Any:
        from importlib.util import find_spec

        if _in_notebook() and find_spec("ipywidgets") is not None:
            from tqdm.notebook import tqdm
        else:  # tqdm.auto would warn (in red) that ipywidgets is missing: plain text bars instead
            from tqdm.std import tqdm
        return tqdm

    def start(self, description: str, total: int) -> None:
        self.close()
        # in a notebook a finished bar goes (leave=False): a dozen stages' bars stood above the verdict (#49 item 7)
        self._bar = self._tqdm()(total=total, desc=description, leave=not _in_notebook(), mininterval=0.5)

    def advance(self, amount: int) -> None:
        if self._bar is not None:
            self._bar.update(amount)
            if self._bar.total and self._bar.n >= self._bar.total:  # drawn complete, however fast the stage ran
                self._bar.refresh()

    def grow(self, amount: int) -> None:
        if self._bar is not None:
            self._bar.total = (self._bar.total or 0) + amount
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _in_notebook() -> bool:
    import sys

    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return get is not None and get() is not None and "IPKernelApp" in getattr(get(), "config", {})


def resolve_progress(progress: Any) -> Any:
    """The hook a Python verb reports to: ``None`` (the default) shows bars when someone watches (a notebook, or a
    terminal on stderr), ``False`` none, ``True`` always; a hook object is used as it is."""
    import sys

    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)  # a replaced stderr may lack it
        progress = _in_notebook() or bool(isatty is not None and isatty())
    if progress is True:
        return TqdmProgress()
    if progress is False:
        return NullProgress()
    return progress
