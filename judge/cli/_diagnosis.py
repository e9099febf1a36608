"""The two-by-two diagnosis on the terminal: the table, the cells per slice, what each cell
means and the ids in it (`judge.engine.diagnosis` computes it; `GRID` lays its cells out as
that module's `CELLS` places them, which a test checks)."""

from __future__ import annotations

import shutil
import sys
from typing import Any

MAX_IDS = 10  # ids shown per cell on the terminal; --summary FILE.json has them all
SHORT = {
    "retriever_broken": "retriever broken",
    "generator_broken": "generator broken",
    "both_broken": "both low",
    "healthy": "healthy",
}
# the table's rows (retrieval high, low) and columns (generation high, low)
GRID = {
    "high": ("healthy", "generator_broken"),
    "low": ("retriever_broken", "both_broken"),
}


def print_diagnosis(diagnosis: dict[str, Any] | None) -> None:
    """Print the two-by-two of a pass; nothing when the pass lacks either signal."""
    if diagnosis is None:
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(file=sys.stdout, width=max(110, shutil.get_terminal_size().columns))
    console.print(f"two-by-two diagnosis ({diagnosis['rule']}):")
    for signal, sources in diagnosis["signals"].items():
        used = ", ".join(
            f"{s['rubric']} (high at >= {s['threshold']:g}; {s['cases']} cases)" for s in sources
        )
        console.print(f"  {signal} signal: {used}")
    cells = diagnosis["cells"]
    grid = Table(title_justify="left")
    grid.add_column("")
    grid.add_column("generation high", justify="right")
    grid.add_column("generation low", justify="right")
    for level, names in GRID.items():
        grid.add_row(f"retrieval {level}", *(f"{SHORT[n]}: {_count(cells[n])}" for n in names))
    console.print(grid)
    console.print(_slices_table(diagnosis))
    for cell in cells.values():
        head, _, rest = cell["meaning"].partition(": ")
        console.print(f"{head} ({cell['count']}): {rest}{_ids(cell['ids'])}")
    if diagnosis["unclassified"]:
        console.print(
            f"unclassified ({diagnosis['unclassified']}): no scored record for one of the "
            f"signals{_ids(diagnosis['unclassified_ids'])}"
        )


def _slices_table(diagnosis: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title="cells per slice", title_justify="left")
    for heading in ["slice", "classified", *SHORT.values(), "unclassified"]:
        table.add_column(heading, justify="left" if heading == "slice" else "right")
    rows = [("all", diagnosis), *diagnosis["by_slice"].items()]
    for name, group in rows:
        counts = [_count(group["cells"][cell]) for cell in SHORT]
        table.add_row(name, str(group["classified"]), *counts, str(group["unclassified"]))
    return table


def _count(cell: dict[str, Any]) -> str:
    rate = cell["rate"]
    return str(cell["count"]) + ("" if rate is None else f" ({rate:.0%})")


def _ids(ids: list[str]) -> str:
    if not ids:
        return ""
    shown = ", ".join(ids[:MAX_IDS])
    more = f" and {len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else ""
    return f"\n    ids: {shown}{more}"
