"""The confusion heatmap: counts and row-normalised shares side by side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

# The Agg canvas is used directly rather than through pyplot: it needs no display and no
# global backend switch, so reports can be drawn from worker threads (the service) too.
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["plot_confusion"]


def _short(label: str, width: int = 18) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _panel(
    ax, values: np.ndarray, text: list[list[str]], labels: list[str], title: str, vmax: float
) -> None:
    k = len(labels)
    image = ax.imshow(values, cmap="Blues", vmin=0, vmax=vmax)
    ax.set_title(title)
    ax.set_xticks(range(k), labels, rotation=30 if max(map(len, labels)) > 4 else 0, ha="right")
    ax.set_yticks(range(k), labels)
    ax.set_xlabel("judge label")
    ax.set_ylabel("human label")
    size = 12 if k <= 4 else max(6, 14 - k)
    threshold = vmax / 2
    for i in range(k):
        for j in range(k):
            colour = "white" if values[i, j] > threshold else "black"
            ax.text(j, i, text[i][j], ha="center", va="center", color=colour, fontsize=size)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)


def plot_confusion(
    labels: Sequence[object], matrix: Sequence[Sequence[int]], path: str | Path
) -> Path:
    """Save a two-panel heatmap (rows human, columns judge) to ``path`` as PNG.

    Left: case counts. Right: each row divided by its total, i.e. the share of each human
    class the judge put in each column; the diagonal is per-class recall.
    """
    names = [_short(str(label)) for label in labels]
    counts = np.asarray(matrix, dtype=float)
    rows = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0)
    side = 3.2 + 0.55 * len(names)
    figure = Figure(figsize=(2 * side + 1.2, side), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    count_text = [[f"{int(v)}" for v in row] for row in counts]
    share_text = [[f"{v:.0%}" for v in row] for row in shares]
    _panel(left, counts, count_text, names, "counts", max(float(counts.max()), 1.0))
    _panel(right, shares, share_text, names, "share of each human row", 1.0)
    figure.suptitle(f"Judge vs human labels (n = {int(counts.sum())})")
    target = Path(path)
    figure.savefig(target, format="png")
    return target
