"""Shared matplotlib helpers for the paper reproductions (headless, Agg backend; PNG out).

Every function takes plain numpy data and writes one PNG atomically; none of them touch
the env. Colours are fixed per agent name so figures of different benchmarks read alike.
"""
from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from gym_crawl._io import atomic_write_bytes

__all__ = ["agent_color", "curves_figure", "bars_figure", "learning_curves_figure", "line_figure", "save_png"]

_COLORS = {
    "lfa-sync": "#1f77b4", "lfa-async": "#ff7f0e", "lfa-moderated": "#2ca02c", "thesis-lfa": "#9467bd",
    "td-lambda": "#8c564b", "best-first": "#d62728", "bfs": "#7f7f7f", "random": "#bcbd22",
    "oracle": "#17becf", "basic": "#d62728",
}


def agent_color(name: str) -> str:
    """A stable colour per agent name (unknown names get a hash-picked tab10 colour)."""
    if name in _COLORS:
        return _COLORS[name]
    import matplotlib

    return matplotlib.colormaps["tab10"](abs(hash(name)) % 10)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: str | Path) -> Path:
    """Write a figure as PNG atomically and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    atomic_write_bytes(Path(path), buf.getvalue())
    return Path(path)


def _grid(n: int) -> tuple[int, int]:
    cols = min(3, max(1, n))
    return (n + cols - 1) // cols, cols


def curves_figure(panels: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]], path: str | Path, *,
                  title: str, xlabel: str = "step", ylabel: str = "relevant pages (accumulated)",
                  dashed: Sequence[str] = ("oracle",)) -> Path:
    """One subplot per panel (topic); per agent a mean curve with a ±1 std band.

    ``panels[panel][agent] = (mean (T,), std (T,))``.
    """
    plt = _plt()
    r, c = _grid(len(panels))
    fig, axes = plt.subplots(r, c, figsize=(5.2 * c, 3.8 * r), squeeze=False)
    for ax, (panel, agents) in zip(axes.flat, panels.items()):
        for name, (mean, std) in agents.items():
            x = np.arange(1, len(mean) + 1)
            col = agent_color(name)
            ax.plot(x, mean, color=col, lw=1.6, ls="--" if name in dashed else "-", label=name)
            if np.any(std > 0):
                ax.fill_between(x, mean - std, mean + std, color=col, alpha=0.15, lw=0)
        ax.set_title(panel)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8, loc="upper left")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_png(fig, path)


def bars_figure(panels: Mapping[str, Mapping[str, np.ndarray]], path: str | Path, *, title: str,
                labels: Sequence[str], xlabel: str, ylabel: str) -> Path:
    """Grouped bars: one subplot per panel, one bar group per label, one bar per agent."""
    plt = _plt()
    r, c = _grid(len(panels))
    fig, axes = plt.subplots(r, c, figsize=(5.6 * c, 3.6 * r), squeeze=False)
    for ax, (panel, agents) in zip(axes.flat, panels.items()):
        k = max(1, len(agents))
        width = 0.8 / k
        x = np.arange(len(labels))
        for i, (name, vals) in enumerate(agents.items()):
            ax.bar(x + (i - (k - 1) / 2) * width, vals, width, color=agent_color(name), label=name)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=45, fontsize=7)
        ax.set_title(panel)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, axis="y")
    return _finish_panels(fig, axes, len(panels), title, path)


def learning_curves_figure(panels: Mapping[str, Mapping[str, np.ndarray]], path: str | Path, *, title: str,
                           ylabel: str = "relevant pages per task") -> Path:
    """One subplot per panel; per agent the per-task values (E,) against the task index."""
    plt = _plt()
    r, c = _grid(len(panels))
    fig, axes = plt.subplots(r, c, figsize=(5.2 * c, 3.6 * r), squeeze=False)
    for ax, (panel, agents) in zip(axes.flat, panels.items()):
        for name, vals in agents.items():
            vals = np.asarray(vals, float)
            ax.plot(np.arange(1, len(vals) + 1), vals, marker="o", ms=3, color=agent_color(name),
                    ls="--" if name == "oracle" else "-", label=name)
        ax.set_title(panel)
        ax.set_xlabel("task (weights kept)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    return _finish_panels(fig, axes, len(panels), title, path)


def line_figure(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], path: str | Path, *, title: str,
                xlabel: str, ylabel: str, logy: bool = False) -> Path:
    """Simple x/y lines, one per named series."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, (x, y) in series.items():
        ax.plot(x, y, marker="o", color=agent_color(name), label=name)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_png(fig, path)


def _finish_panels(fig, axes, n_panels: int, title: str, path: str | Path) -> Path:
    """Hide unused subplots, add the legend and title, save the PNG."""
    for ax in list(axes.flat)[n_panels:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_png(fig, path)
