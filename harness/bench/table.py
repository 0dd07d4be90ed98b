"""One way to print and save every benchmark table."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, aligned for the terminal as well."""
    cells = [[str(h) for h in header]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        from harness.stats import fmt_number

        return fmt_number(value)
    return str(value)


def save_table(header: Sequence[str], rows: Sequence[Sequence[object]], stem: str | Path) -> None:
    """Write ``stem.csv`` and ``stem.md`` atomically."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    tmp = stem.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    os.replace(tmp, stem.with_suffix(".csv"))
    tmp = stem.with_suffix(".md.tmp")
    tmp.write_text(format_table(header, rows) + "\n")
    os.replace(tmp, stem.with_suffix(".md"))


def show_table(header: Sequence[str], rows: Sequence[Sequence[object]],
               save: str | Path | None) -> int:
    """Print the table, also write it to ``save`` (a stem) if given; exit status 0."""
    print(format_table(header, rows))
    if save:
        save_table(header, rows, save)
    return 0
