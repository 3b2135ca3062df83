"""Plots of an audit (the only module that imports matplotlib). Each figure is saved as PNG and SVG."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ...editors.registry import method_color
from ...writing import note_written


class Panel(Protocol):
    """What a method's panel gives the plots (:class:`~counterfair.views.report.tally.Panel` tallies it): its pair
    count, its changes' histogram over :data:`CHANGE_BINS`, and its points or, past :data:`DENSE_POINTS`, its
    hexagonal cells' counts and centres. Declared here, so the plots need nothing of the tally."""

    n: int
    changes: np.ndarray
    cells: np.ndarray | None
    centres: np.ndarray | None

    def points(self) -> tuple[np.ndarray, np.ndarray]: ...


DPI = 110


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False, "svg.hashsalt": "cf"})
    return plt


def _save(fig: Any, out: Path, name: str) -> dict[str, str]:
    """The figure as PNG and SVG, cropped to what it draws: the tight box is worked out once, at the PNG's
    resolution, and given to both (``bbox_inches="tight"`` would lay the figure out again for each format)."""
    out.mkdir(parents=True, exist_ok=True)
    note_written(out)
    fig.set_dpi(DPI)
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(_plt().rcParams["savefig.pad_inches"])
    paths = {}
    for ext in ("png", "svg"):
        path = out / f"{name}.{ext}"
        fig.savefig(path, dpi=DPI, bbox_inches=box, metadata={"Date": None} if ext == "svg" else None)
        paths[ext] = str(path)
    _plt().close(fig)
    return paths


def score_change_histogram(panels: Mapping[str, Panel], out: Path) -> dict[str, str] | None:
    """Distribution of score changes, original -> counterfactual, per method (paper 000 Fig. 2), from each method's
    counts of changes in :data:`CHANGE_BINS`."""
    if not panels:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    bins = CHANGE_BINS
    for method, panel in panels.items():  # in order of appearance
        ax.hist(
            (bins[:-1] + bins[1:]) / 2,  # each bin's centre weighted by its count: the histogram of the changes
            bins=bins,
            weights=panel.changes,
            histtype="step",
            linewidth=1.6,
            label=f"{method} (n={panel.n})",
            color=method_color(method),
            density=True,
        )
    ax.axvline(0, color="#888", linewidth=0.8)
    ax.set_xlabel("change in score (counterfactual - original)")
    ax.set_ylabel("density")
    ax.set_title("Score changes by method")
    ax.legend(frameon=False)
    return _save(fig, out, "score_change_histogram")


#: above this many pairs a method's panel is a hexagonal density (log counts) instead of dots
DENSE_POINTS = 2000
#: the score-change histogram's bins (changes lie in [-1, 1])
CHANGE_BINS = np.linspace(-1, 1, 41)


def score_scatter(panels: Mapping[str, Panel], out: Path, threshold: float) -> dict[str, str] | None:
    """Original vs counterfactual score per method (paper 000 Figs. 3-4); points below y = x lost score. A panel of
    more than :data:`DENSE_POINTS` pairs shows their density in hexagonal cells (log scale), readable at 100k pairs."""
    if not panels:
        return None
    fig, axes = _panels(len(panels))
    for ax, (method, panel) in zip(axes, panels.items(), strict=True):
        if panel.cells is not None and panel.centres is not None:  # thousands of dots are solid ink: log counts
            seen = panel.cells > 0
            cells = ax.hexbin(panel.centres[seen, 0], panel.centres[seen, 1], C=panel.cells[seen],
                              reduce_C_function=np.sum, bins="log", mincnt=1, cmap="viridis", linewidths=0,
                              **_HEX)  # fmt: skip
            fig.colorbar(cells, ax=ax, label="pairs (log scale)", fraction=0.05, pad=0.02)
        else:
            x, y = panel.points()
            ax.scatter(x, y, s=8, alpha=0.45, color=method_color(method), linewidths=0)
        dense = ", pairs per cell" if panel.cells is not None else ""
        _diagonal_panel(ax, threshold, f"{method} (n={panel.n:,}{dense})")
    return _finish_panels(fig, axes, "Original vs counterfactual scores", out, "score_scatter")


_HEX = {"gridsize": 36, "extent": (0, 1, 0, 1)}


def hex_counts(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every hexagonal cell's count of the points with both scores (zeros too, in matplotlib's fixed order) and the
    cells' centres, binned by matplotlib's own ``hexbin`` on a scratch axes. Counts of blocks of points add up to
    one call's over them all (a panel drawn from the occupied cells' centres weighted by their counts is that call's
    panel, in memory that does not grow with the points: one hexbin holds ~100 bytes a point while binning)."""
    plt = _plt()
    fig, scratch = plt.subplots()
    try:
        known = ~np.isnan(x) & ~np.isnan(y)
        cells = scratch.hexbin(x[known], y[known], mincnt=0, **_HEX)
        return np.asarray(cells.get_array(), dtype=float), np.asarray(cells.get_offsets())
    finally:
        plt.close(fig)


def _panels(count: int) -> tuple[Any, list[Any]]:
    """A row of ``count`` square-ish panels (one per method or topic)."""
    fig, axes = _plt().subplots(1, count, figsize=(3.0 * count + 0.4, 3.2), squeeze=False)
    return fig, list(axes[0])


def _finish_panels(fig: Any, axes: list[Any], title: str, out: Path, name: str) -> dict[str, str]:
    axes[0].set_ylabel("counterfactual score")
    fig.suptitle(title, y=1.02)
    return _save(fig, out, name)


def _diagonal_panel(ax: Any, threshold: float, title: str) -> None:
    ax.plot([0, 1], [0, 1], color="#888", linewidth=0.8)
    ax.axhline(threshold, color="#ccc", linewidth=0.6, linestyle="--")
    ax.axvline(threshold, color="#ccc", linewidth=0.6, linestyle="--")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.set_xlabel("original score")


def score_scatter_by_rating(rated: pd.DataFrame, out: Path, threshold: float) -> dict[str, str] | None:
    """Original vs counterfactual score per method, the pairs the raters judged good apart from the poor ones (paper
    000 Fig. 3: a method whose poor pairs stay on the diagonal failed to remove the reference; one whose poor pairs
    still lose score failed on fluency). ``rated``: the pairs rated good or poor; only when both ratings occur."""
    if rated.empty or rated["rating"].nunique() < 2:
        return None
    methods = list(dict.fromkeys(rated["method"]))
    fig, axes = _panels(len(methods))
    for ax, method in zip(axes, methods, strict=True):
        part = rated[rated["method"] == method]
        good, poor = part[part["rating"] == "good"], part[part["rating"] == "poor"]
        ax.scatter(poor["score_orig"], poor["score_cf"], s=14, marker="x", color="#999", linewidths=0.9,
                   label=f"poor (n={len(poor)})")  # fmt: skip
        ax.scatter(good["score_orig"], good["score_cf"], s=12, alpha=0.7, color=method_color(method),
                   linewidths=0, label=f"good (n={len(good)})")  # fmt: skip
        _diagonal_panel(ax, threshold, str(method))
        ax.legend(frameon=False, loc="upper left", fontsize=8)
    title = "Original vs counterfactual scores, by human rating"
    return _finish_panels(fig, axes, title, out, "score_scatter_rating")


def score_scatter_by_topic(edits: pd.DataFrame, out: Path, threshold: float) -> dict[str, str] | None:
    """Original vs counterfactual score per attribute (topic), the methods' pairs in their colours (paper 000 Fig. 4:
    which topic swings towards a flip). ``edits``: the word-list and LLM edits with both scores (``method``,
    ``attribute``, ``score_orig``, ``score_cf``); only when two or more topics have pairs."""
    topics = list(dict.fromkeys(edits["attribute"])) if "attribute" in edits else []
    if len(topics) < 2:
        return None
    fig, axes = _panels(len(topics))
    for ax, topic in zip(axes, topics, strict=True):
        part = edits[edits["attribute"] == topic]
        for method, dots in part.groupby("method", sort=False):
            ax.scatter(dots["score_orig"], dots["score_cf"], s=10, alpha=0.6, color=method_color(method),
                       linewidths=0, label=f"{method} (n={len(dots)})")  # fmt: skip
        _diagonal_panel(ax, threshold, f"{topic} (n={len(part):,})")
        ax.legend(frameon=False, loc="upper left", fontsize=8)
    return _finish_panels(fig, axes, "Original vs counterfactual scores, by topic", out, "score_scatter_topic")


def swap_heatmap(cells: pd.DataFrame, out: Path, order: list[str]) -> dict[str, str] | None:
    """Mean score change for each (source term -> target term) swap; rows are sources. ``cells``: one row per swap
    direction with pairs (``source_term``, ``target_term``, ``mean``)."""
    if cells.empty:
        return None
    matrix = cells.pivot(index="source_term", columns="target_term", values="mean")
    rows = [t for t in order if t in matrix.index]
    cols = [t for t in order if t in matrix.columns]
    matrix = matrix.reindex(index=rows, columns=cols)
    plt = _plt()
    height = max(2.2, 0.16 * len(rows) + 1.2)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.16 * len(cols) + 2.0), height))
    limit = float(np.nanmax(np.abs(matrix.to_numpy()))) if matrix.size else 1.0
    image = ax.imshow(matrix.to_numpy(), cmap="RdBu_r", vmin=-max(limit, 1e-3), vmax=max(limit, 1e-3), aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=6)
    ax.set_yticks(range(len(rows)), rows, fontsize=6)
    ax.set_xlabel("target term (swapped in)")
    ax.set_ylabel("source term (in the text)")
    ax.set_title("Mean score change per identity swap (red: the swap raised the score)")
    fig.colorbar(image, ax=ax, shrink=0.8, label="mean change")
    return _save(fig, out, "swap_heatmap")


def ctf_group_bars(ctf: dict[str, Any] | None, out: Path) -> dict[str, str] | None:
    """CTF gap per identity group with its 95 % bootstrap interval."""
    if not ctf or not ctf.get("by_group"):
        return None
    groups = sorted(ctf["by_group"].items(), key=lambda kv: -(kv[1]["ctf_gap"] or 0))
    names = [g for g, _ in groups]
    values = np.array([e["ctf_gap"] or 0 for _, e in groups])
    low = np.array([e["ci_low"] if e["ci_low"] is not None else v for (_, e), v in zip(groups, values, strict=True)])
    high = np.array([e["ci_high"] if e["ci_high"] is not None else v for (_, e), v in zip(groups, values, strict=True)])
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 0.35 * len(names) + 1.2))
    ax.barh(names, values, xerr=np.vstack([values - low, high - values]), color="#7570b3", alpha=0.8, capsize=3)
    ax.invert_yaxis()
    ax.set_xlabel("CTF gap (mean |score change| over swaps)")
    ax.set_title("CTF gap by the group of the original word")
    return _save(fig, out, "ctf_groups")


#: a finding's colour in the forest plot (material red, detected orange, small and none green, inconclusive grey)
FINDING_COLORS = {"material": "#b00", "detected": "#d97a00", "small": "#1a6d1a", "not detected": "#1a6d1a"}


def forest_plot(
    rows: list[tuple[str, float, float | None, float | None, str]], limit: float, out: Path, unit: str = "P(1)"
) -> dict[str, str] | None:
    """A forest plot of identity effects: per row (a group's name in words, its effect, the simultaneous 95 % interval's
    bounds, its finding) the point and the interval, in probability points, beside the band of ±``limit`` within
    which an effect is not material; largest first as the verdict lists them."""
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.0, 0.3 * len(rows) + 1.3))
    ax.axvspan(-100 * limit, 100 * limit, color="#1a6d1a", alpha=0.08, lw=0)
    ax.axvline(0.0, color="#555", lw=0.8)
    for i, (_, value, low, high, finding) in enumerate(rows):
        color = FINDING_COLORS.get(finding, "#888")
        if low is not None and high is not None:
            ax.plot([100 * low, 100 * high], [i, i], color=color, lw=1.6, solid_capstyle="butt")
        ax.plot([100 * value], [i], "o", color=color, ms=5)
    from matplotlib.lines import Line2D

    shown = {"material": "material (the group, a term or a form)", "detected": "detected, size unresolved",
             "not detected": "no material effect", "inconclusive": "inconclusive"}  # fmt: skip
    found = [f for f in shown if any(r[4] == f or (f == "not detected" and r[4] == "small") for r in rows)]
    handles = [Line2D([], [], color=FINDING_COLORS.get(f, "#888"), marker="o", label=shown[f]) for f in found]
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=False)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(f"identity effect on {unit}, probability points (simultaneous 95 % interval)")
    ax.set_title(f"Identity effects: the shaded band (±{100 * limit:.0f} points) is no material effect")
    return _save(fig, out, "forest")


def contrast_histograms(probabilities: dict[str, np.ndarray], out: Path) -> dict[str, str] | None:
    """Histogram of the contrast label's probability, one panel per text source (the originals, then each method's
    counterfactuals): CEval's Fig. 1. Two narrow peaks at 0 and 1 point to an overconfident classifier."""
    shown = {name: v[np.isfinite(v)] for name, v in probabilities.items()}
    shown = {name: v for name, v in shown.items() if v.size}
    if not shown:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, len(shown), figsize=(2.3 * len(shown) + 0.6, 2.6), squeeze=False, sharey=True)
    bins = np.linspace(0, 1, 21)
    for ax, (name, values) in zip(axes[0], shown.items(), strict=True):
        weights = np.full(values.size, 100.0 / values.size)
        ax.hist(values, bins=bins, weights=weights, color="#7570b3" if name != "original" else "#888", alpha=0.85)
        ax.axvline(0.5, color="#ccc", linewidth=0.6, linestyle="--")
        ax.set_title(f"{name} (n={values.size})", fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_xlabel("P(contrast label)")
    axes[0][0].set_ylabel("% of texts")
    fig.suptitle("Probability of the contrast label, before (original) and after each method", y=1.03)
    return _save(fig, out, "contrast_histograms")


def distance_heatmap(matrix: pd.DataFrame, out: Path) -> dict[str, str] | None:
    """Mean token distance between the texts of every two methods (and the original): CEval's Fig. 2."""
    if matrix.empty or len(matrix) < 2:
        return None
    plt = _plt()
    size = 0.7 * len(matrix) + 1.6
    fig, ax = plt.subplots(figsize=(size + 1.0, size))
    values = matrix.to_numpy(dtype=float)
    image = ax.imshow(values, cmap="viridis_r")
    names = [str(n) for n in matrix.index]
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    high = np.nanmax(values) if np.isfinite(values).any() else 1.0
    for i in range(len(names)):
        for j in range(len(names)):
            if np.isfinite(values[i, j]):
                colour = "white" if values[i, j] > 0.5 * high else "black"
                ax.text(j, i, f"{values[i, j]:.1f}", ha="center", va="center", fontsize=7, color=colour)
    ax.set_title("Mean token distance between methods' texts")
    fig.colorbar(image, ax=ax, shrink=0.8, label="word-level Levenshtein distance")
    return _save(fig, out, "distance_matrix")


FEEDBACK_PANELS = (
    ("distance", "words changed from the previous step"),
    ("ppl_base", "perplexity (base LM)"),
    ("ppl_fine", "perplexity (fine-tuned LM)"),
)


def feedback_step_values(steps: pd.DataFrame) -> dict[str, dict[int, list[float]]]:
    """Per panel column of :data:`FEEDBACK_PANELS` with any value: the values of each step (status ok only)."""
    if "step" not in steps or steps.empty:
        return {}
    ok = steps[steps["status"] == "ok"] if "status" in steps else steps
    columns = ["step", *(c for c, _ in FEEDBACK_PANELS if c in ok)]
    ok = ok[columns].apply(pd.to_numeric, errors="coerce")  # as read from steps.csv: text cells
    order = sorted(int(k) for k in ok["step"].dropna().unique())
    return {
        column: {k: ok.loc[ok["step"] == k, column].dropna().tolist() for k in order}
        for column, _ in FEEDBACK_PANELS
        if column in ok and ok[column].notna().any()
    }


def feedback_step_boxes(steps: pd.DataFrame, out: Path) -> dict[str, str] | None:
    """Paper 002's per-step box plots: minimality (words changed from the previous step) and perplexity, per step."""
    values = feedback_step_values(steps)
    if not values:
        return None
    labels = dict(FEEDBACK_PANELS)
    plt = _plt()
    fig, axes = plt.subplots(1, len(values), figsize=(3.6 * len(values) + 0.6, 3.0), squeeze=False)
    for ax, (column, by_step) in zip(axes[0], values.items(), strict=True):
        ax.boxplot(list(by_step.values()), showfliers=True, flierprops={"markersize": 2})
        ax.set_xticks(range(1, len(by_step) + 1), [str(k) for k in by_step])
        ax.set_xlabel("step (application of the editor)")
        ax.set_title(labels[column])
        if column.startswith("ppl"):
            ax.set_yscale("log")
    return _save(fig, out, "feedback_steps")
