"""``counterfair ctf``'s result: the pairs, the CTF gap per source term and direction."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...results import TableResult, frame_of
from ...summaries import CTFSummary

if TYPE_CHECKING:
    pass


class CTFResult(TableResult[CTFSummary]):
    """Counterfactual token fairness: ``pairs`` (every swap with both scores), ``ctf_gap``, ``by_group`` (per source
    term), ``by_direction`` (per source → target), ``summary``."""

    def _saved(self, target: Path) -> None:
        from ...views.page import write_summary_page
        from .page import ctf_page

        write_summary_page(target, ctf_page)

    def _console(self) -> Any:
        from ...views.page import to_console
        from .page import ctf_page

        return to_console(ctf_page(self.summary))

    _summary_type = CTFSummary

    def __init__(
        self,
        pairs: pd.DataFrame | None,
        summary: Mapping[str, Any] | CTFSummary,
        *,
        run_dir: str | Path | None = None,
    ) -> None:
        """``pairs`` None: read from ``run_dir``'s ``pairs.csv`` when first asked for (as :func:`~counterfair.run_ctf`
        returns it: the columns the file keeps)."""
        self._pairs = pairs
        self._keep_summary(summary)  # the record the core made, or a summary read
        self.run_dir = None if run_dir is None else Path(run_dir)
        if pairs is None and run_dir is None:
            raise ValueError("CTFResult: give the pairs or the run directory that holds them")

    @property
    def pairs(self) -> pd.DataFrame:
        if self._pairs is None:
            self._pairs = pd.read_csv(Path(str(self.run_dir)) / "pairs.csv", dtype={"input_id": str})
        return self._pairs

    @property
    def ctf_gap(self) -> float | None:
        value = self.typed_summary.value
        return None if value is None else float(value)

    @property
    def by_group(self) -> pd.DataFrame:
        return frame_of(self.typed_summary.by_source_term or {}, "source_term")

    @property
    def by_direction(self) -> pd.DataFrame:
        return pd.DataFrame([d.to_dict() for d in self.typed_summary.by_direction or ()])

    def _table(self) -> pd.DataFrame:
        return self.pairs

    def _repr_html_(self) -> str:
        """The notebook view: the report page's verdict and the first rows of its tables."""
        from ...views.page import to_notebook_html
        from .page import ctf_page

        return to_notebook_html(ctf_page(self.summary))

    def __repr__(self) -> str:
        return f"CTFResult(ctf_gap={self.ctf_gap}, {len(self.pairs)} pairs)"
