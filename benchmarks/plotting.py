"""Shared matplotlib helpers for the paper reproductions and the CLI (headless, Agg backend; PNG out).

Every figure function takes plain numpy data and writes one PNG atomically; none of them touch the env.

Colours: the papers' agents keep fixed colours so figures of different benchmarks read alike; any other
name (a model path, a plug-in agent) gets a colour picked by a SHA-256 of the name from a 60-colour
palette (matplotlib's tab20, tab20b, tab20c without the fixed ones) — the same in every run and process
(Python's ``hash`` is salted per process, so it is not used). :func:`agent_colors` gives the agents of one
figure distinct colours: a name whose colour is taken moves to the next free palette entry. The lower and
upper bounds (``random``, ``oracle``) are drawn dashed, and legends sit outside the axes, never over data.
"""
from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl._io import atomic_write_bytes

__all__ = ["BOUNDS", "agent_color", "agent_colors", "bars_figure", "curves_figure", "learning_curves_figure",
           "line_figure", "pyplot", "save_png", "summed_curves"]

_COLORS = {
    "lfa-sync": "#1f77b4", "lfa-async": "#ff7f0e", "lfa-moderated": "#2ca02c", "thesis-lfa": "#9467bd",
    "td-lambda": "#8c564b", "best-first": "#d62728", "bfs": "#7f7f7f", "random": "#bcbd22",
    "oracle": "#17becf", "basic": "#d62728",
}

#: Agents drawn dashed: the no-skill lower bound and the hidden-information upper bound.
BOUNDS = ("oracle", "random")


def _palette() -> list[str]:
    import matplotlib
    from matplotlib.colors import to_hex

    fixed = set(_COLORS.values())
    out: list[str] = []
    for cmap in ("tab20", "tab20b", "tab20c"):
        for c in matplotlib.colormaps[cmap].colors:  # type: ignore[attr-defined]
            h = to_hex(c)
            if h not in fixed and h not in out:
                out.append(h)
    return out


def _base(name: str) -> str:
    """The agent name a label stands for (``"lfa-async ep 2"`` → ``"lfa-async"``)."""
    return name.split(" ep ", 1)[0].split(" (", 1)[0]


def agent_color(name: str) -> str:
    """The colour of ``name`` alone: fixed for the papers' agents, else SHA-256-picked from the palette (the
    same in every run). Use :func:`agent_colors` for several agents in one figure (no repeats)."""
    return agent_colors([name])[name]


def agent_colors(names: Iterable[str]) -> dict[str, str]:
    """Distinct, run-stable colours for the agents of one figure (see module docstring)."""
    pal = _palette()
    out: dict[str, str] = {}
    taken: set[str] = set()
    names = list(dict.fromkeys(names))
    for n in names:  # fixed colours first, so a hashed name never takes one
        if _base(n) in _COLORS and _COLORS[_base(n)] not in taken:
            out[n] = _COLORS[_base(n)]
            taken.add(out[n])
    for n in names:
        if n in out:
            continue
        i = int.from_bytes(hashlib.sha256(_base(n).encode("utf-8")).digest()[:8], "big") % len(pal)
        for j in range(len(pal)):
            c = pal[(i + j) % len(pal)]
            if c not in taken:
                break
        else:
            c = pal[i]  # more agents than colours: repeats are unavoidable
        out[n] = c
        taken.add(c)
    return out


def _legend_outside(ax, fontsize: int = 8) -> None:
    """The legend to the right of the axes (never over the data)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the headless Agg backend (unless a backend was chosen already)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: str | Path) -> Path:
    """Write a figure as PNG atomically and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    atomic_write_bytes(Path(path), buf.getvalue())
    return Path(path)


def summed_curves(curves: Sequence[np.ndarray]) -> np.ndarray:
    """The sum of cumulative curves of different lengths, each held at its last value past its end (a crawl that
    stopped early keeps what it found); as long as the longest."""
    n = max((len(c) for c in curves), default=0)
    tot = np.zeros(n)
    for c in curves:
        if len(c):
            tot[: len(c)] += c
            tot[len(c):] += c[-1]
    return tot


def _grid(n: int) -> tuple[int, int]:
    cols = min(3, max(1, n))
    return (n + cols - 1) // cols, cols


def curves_figure(panels: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]], path: str | Path, *,
                  title: str, xlabel: str = "step", ylabel: str = "relevant pages (accumulated)",
                  dashed: Sequence[str] = BOUNDS) -> Path:
    """One subplot per panel (topic); per agent a mean curve with a ±1 std band.

    ``panels[panel][agent] = (mean (T,), std (T,))``.
    """
    plt = pyplot()
    r, c = _grid(len(panels))
    fig, axes = plt.subplots(r, c, figsize=(5.2 * c, 3.8 * r), squeeze=False)
    colors = agent_colors(n for agents in panels.values() for n in agents)
    for ax, (panel, agents) in zip(axes.flat, panels.items()):
        for name, (mean, std) in agents.items():
            x = np.arange(1, len(mean) + 1)
            col = colors[name]
            ax.plot(x, mean, color=col, lw=1.6, ls="--" if name in dashed else "-", label=name)
            if np.any(std > 0):
                ax.fill_between(x, mean - std, mean + std, color=col, alpha=0.15, lw=0)
        ax.set_title(panel)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    _legend_outside(list(axes.flat)[min(len(panels), c) - 1])
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_png(fig, path)


def bars_figure(panels: Mapping[str, Mapping[str, np.ndarray]], path: str | Path, *, title: str,
                labels: Sequence[str], xlabel: str, ylabel: str) -> Path:
    """Grouped bars: one subplot per panel, one bar group per label, one bar per agent."""
    plt = pyplot()
    r, c = _grid(len(panels))
    fig, axes = plt.subplots(r, c, figsize=(5.6 * c, 3.6 * r), squeeze=False)
    colors = agent_colors(n for agents in panels.values() for n in agents)
    for ax, (panel, agents) in zip(axes.flat, panels.items()):
        k = max(1, len(agents))
        width = 0.8 / k
        x = np.arange(len(labels))
        for i, (name, vals) in enumerate(agents.items()):
            ax.bar(x + (i - (k - 1) / 2) * width, vals, width, color=colors[name], label=name)
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
    plt = pyplot()
    r, c = _grid(len(panels))
    fig, axes = plt.subplots(r, c, figsize=(5.2 * c, 3.6 * r), squeeze=False)
    colors = agent_colors(n for agents in panels.values() for n in agents)
    for ax, (panel, agents) in zip(axes.flat, panels.items()):
        for name, vals in agents.items():
            vals = np.asarray(vals, float)
            ax.plot(np.arange(1, len(vals) + 1), vals, marker="o", ms=3, color=colors[name],
                    ls="--" if _base(name) in BOUNDS else "-", label=name)
        ax.set_title(panel)
        ax.set_xlabel("task (weights kept)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    return _finish_panels(fig, axes, len(panels), title, path)


def line_figure(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], path: str | Path, *, title: str,
                xlabel: str, ylabel: str, logy: bool = False) -> Path:
    """Simple x/y lines, one per named series."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    colors = agent_colors(series)
    for name, (x, y) in series.items():
        ax.plot(x, y, marker="o", color=colors[name], ls="--" if _base(name) in BOUNDS else "-", label=name)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return save_png(fig, path)


def _finish_panels(fig, axes, n_panels: int, title: str, path: str | Path) -> Path:
    """Hide unused subplots, add the legend and title, save the PNG."""
    for ax in list(axes.flat)[n_panels:]:
        ax.axis("off")
    _legend_outside(list(axes.flat)[min(n_panels, axes.shape[1]) - 1], fontsize=7)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_png(fig, path)
