"""Write a positions file from games already in memory (self-play, tests, tools).

The same journal and assembly as ``harness ingest`` are used, so a file made
here has the same layout, dedupe, splits and completeness guarantees.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.data.assemble import DatasetAttributes, assemble
from harness.data.journal import Journal, JournalState, JournalWriter
from harness.data.rows import GameInfo, GamePositions, RecordOutcome


def write_outcomes(
    output: str | Path,
    outcomes: Iterable[RecordOutcome],
    attrs: DatasetAttributes,
    source: str = "memory",
) -> dict:
    """Store the kept outcomes (rejected ones go to the rejects table); returns the summary.

    The file appears under its final name only when complete.
    """
    output = Path(output)
    journal = Journal(output)
    journal.start({"writer": "write_outcomes", "output": str(output)})
    state = JournalState()
    writer = JournalWriter(journal, state, attrs.board_size**2)
    for outcome in outcomes:
        writer.add(source, outcome)
    writer.commit()
    summary = assemble(journal, attrs, state.counts.to_json())
    journal.remove()
    summary["counts"] = state.counts
    return summary


def write_games(
    output: str | Path,
    games: Iterable[tuple[GameInfo, GamePositions]],
    attrs: DatasetAttributes,
    source: str = "selfplay",
) -> dict:
    """Store games given as (table row, position rows) pairs, e.g. from self-play."""
    outcomes = (
        RecordOutcome(info.source, info.index, "kept", info=info, positions=rows)
        for info, rows in games
    )
    return write_outcomes(output, outcomes, attrs, source)
