"""Crash-safe progress of an ingest: a directory of closed, immutable shards.

An HDF5 file being written is not crash-safe (a SIGKILL mid-write can leave
its metadata inconsistent), so committed work never lives in an open file.
Every few thousand games the writer closes a *shard* (a small HDF5 file with
the same groups as the final file) under a temporary name and renames it:
a shard either exists whole or not at all. The set of shards *is* the
journal: each records which input records it covers, so ``--resume`` skips
that many records and continues, and the final file is assembled from the
shards in order (see :mod:`harness.data.assemble`). The result cannot depend
on where a run was interrupted.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from harness.data.ingest_report import IngestCounts, reason_category
from harness.data.layout import (
    GAME_COLUMNS,
    OPTIONAL_POSITION_COLUMNS,
    POSITION_COLUMNS,
    REJECT_COLUMNS,
    SOFT_INDEX,
    SOFT_OFFSETS,
    SOFT_PROB,
)
from harness.data.rows import GameInfo, GamePositions, RecordOutcome
from harness.data.tables import read_columns, write_columns
from harness.files import atomic_json, atomic_path, remove_temporaries

CONFIG_NAME = "config.json"
DONE_NAME = "done"
SHARD_COMPRESSION = {"compression": "lzf"}  # temporary files: speed over size


def journal_dir(output: Path) -> Path:
    return output.with_name(output.name + ".journal")


def partial_path(output: Path) -> Path:
    return output.with_name(output.name + ".partial")


@dataclass
class ShardBuilder:
    """The games and rejects since the last commit, in input order."""

    points: int
    records_start: int
    games_start: int
    positions_start: int
    records: int = 0
    infos: list[GameInfo] = field(default_factory=list)
    positions: list[GamePositions] = field(default_factory=list)
    rejects: list[tuple[str, int, str, str]] = field(default_factory=list)
    counts: IngestCounts = field(default_factory=IngestCounts)
    n_positions: int = 0

    def add(self, top: str, outcome: RecordOutcome, duplicate_of: str | None) -> str:
        """Account for one record; returns ``kept``, ``duplicate`` or ``rejected``."""
        self.records += 1
        counts = self.counts.of(top)
        counts.seen += 1
        if outcome.kind != "kept":
            counts.rejected[reason_category(outcome.reason)] += 1
            self.rejects.append((outcome.source, outcome.index, "rejected", outcome.reason))
            return "rejected"
        if duplicate_of is not None:
            counts.duplicates += 1
            reason = f"duplicate of {duplicate_of}"
            self.rejects.append((outcome.source, outcome.index, "duplicate", reason))
            return "duplicate"
        assert outcome.info is not None and outcome.positions is not None
        counts.kept += 1
        counts.positions += len(outcome.positions)
        self.infos.append(outcome.info)
        self.positions.append(outcome.positions)
        self.n_positions += len(outcome.positions)
        return "kept"

    @property
    def games(self) -> int:
        return len(self.infos)

    def write(self, path: Path) -> None:
        """Write the shard under a temporary name, then rename it into place."""
        with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
            f.attrs["records_start"] = self.records_start
            f.attrs["records_end"] = self.records_start + self.records
            f.attrs["games_start"] = self.games_start
            f.attrs["positions_start"] = self.positions_start
            f.attrs["counts"] = json.dumps(self.counts.to_json(), ensure_ascii=False)
            self._write_positions(f.create_group("positions"))
            self._write_soft(f)
            self._write_games(f.create_group("games"))
            rejects = list(zip(*self.rejects, strict=True)) or [[], [], [], []]
            data = {c.name: rejects[i] for i, c in enumerate(REJECT_COLUMNS)}
            write_columns(f.create_group("rejects"), REJECT_COLUMNS, data, chunk=4096)

    def _write_positions(self, group: h5py.Group) -> None:
        rows = self.positions
        data: dict[str, np.ndarray] = {}
        if rows:
            data["stones"] = np.concatenate([p.stones for p in rows])
            data["to_play"] = np.concatenate([p.to_play for p in rows])
            data["move"] = np.concatenate([p.move for p in rows])
            data["value"] = np.concatenate([p.value for p in rows])
            data["value_known"] = np.concatenate(
                [np.full(len(p), p.value_known, np.uint8) for p in rows]
            )
            data["game_id"] = np.concatenate(
                [np.full(len(p), self.games_start + i, np.int32) for i, p in enumerate(rows)]
            )
            data["move_number"] = np.concatenate([np.arange(len(p), dtype=np.int16) for p in rows])
            for column in OPTIONAL_POSITION_COLUMNS:
                present = [getattr(p, column.name) is not None for p in rows]
                if any(present) and not all(present):
                    raise ValueError(f"{column.name} given for some games of a batch, not all")
                if all(present):
                    data[column.name] = np.concatenate([getattr(p, column.name) for p in rows])
        else:
            data = {
                c.name: np.zeros((0, self.points) if c.per_point else 0) for c in POSITION_COLUMNS
            }
        write_columns(
            group,
            POSITION_COLUMNS + OPTIONAL_POSITION_COLUMNS,
            data,
            points=self.points,
            chunk=4096,
            compression=SHARD_COMPRESSION,
        )

    def _write_soft(self, f: h5py.File) -> None:
        if not any(p.soft_policy is not None for p in self.positions):
            return
        offsets, index, prob, base = [np.zeros(1, np.int64)], [], [], 0
        for p in self.positions:
            if p.soft_policy is None:
                offsets.append(np.full(len(p), base, np.int64))
                continue
            off, idx, pr = p.soft_policy
            offsets.append(base + np.asarray(off[1:], np.int64))
            index.append(np.asarray(idx, np.int16))
            prob.append(np.asarray(pr, np.float16))
            base += len(idx)
        group = f.create_group("soft_policy")
        group.create_dataset(SOFT_OFFSETS, data=np.concatenate(offsets))
        group.create_dataset(
            SOFT_INDEX, data=np.concatenate(index) if index else np.zeros(0, np.int16)
        )
        group.create_dataset(
            SOFT_PROB, data=np.concatenate(prob) if prob else np.zeros(0, np.float16)
        )

    def _write_games(self, group: h5py.Group) -> None:
        data: dict[str, list] = {c.name: [] for c in GAME_COLUMNS}
        first = self.positions_start
        for info, rows in zip(self.infos, self.positions, strict=True):
            for column in GAME_COLUMNS:
                if hasattr(info, column.name):
                    data[column.name].append(getattr(info, column.name))
            data["first"].append(first)
            data["positions"].append(len(rows))
            data["split"].append(0)
            data["cazenave_row"].append(-1)
            first += len(rows)
        data["digest"] = [d.encode("ascii") for d in data["digest"]]
        write_columns(group, GAME_COLUMNS, data, chunk=4096)



@dataclass
class JournalState:
    """Everything committed so far, rebuilt from the shards."""

    records: int = 0
    games: int = 0
    positions: int = 0
    shards: list[Path] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)  # digest -> "source#index"
    counts: IngestCounts = field(default_factory=IngestCounts)


class JournalWriter:
    """Decides kept / duplicate / rejected in arrival order and commits shards.

    Identical games (same :func:`~harness.data.rows.game_digest`) are stored
    once: the first one seen is kept, later ones are counted as duplicates.
    """

    def __init__(
        self,
        journal: Journal,
        state: JournalState,
        points: int,
        commit_records: int = 5000,
        commit_positions: int = 200_000,
    ):
        self.journal, self.state, self.points = journal, state, points
        self.commit_records, self.commit_positions = commit_records, commit_positions
        self.builder = self._new_builder()

    def _new_builder(self) -> ShardBuilder:
        s = self.state
        return ShardBuilder(self.points, s.records, s.games, s.positions)

    @property
    def positions(self) -> int:
        return self.state.positions + self.builder.n_positions

    @property
    def records(self) -> int:
        """Records accounted for, committed or not."""
        return self.state.records + self.builder.records

    def add(self, top: str, outcome: RecordOutcome) -> str:
        """Account for one record (``top``: the input source it came from)."""
        duplicate_of = None
        if outcome.kind == "kept":
            duplicate_of = self.state.digests.get(outcome.info.digest)
        verdict = self.builder.add(top, outcome, duplicate_of)
        if verdict == "kept":
            self.state.digests[outcome.info.digest] = f"{outcome.source}#{outcome.index}"
        b = self.builder
        if b.records >= self.commit_records or b.n_positions >= self.commit_positions:
            self.commit()
        return verdict

    def commit(self) -> None:
        """Write what has been added since the last commit as one shard."""
        b, s = self.builder, self.state
        if b.records == 0 and s.shards:
            return
        path = self.journal.shard_path(len(s.shards))
        b.write(path)
        s.shards.append(path)
        s.records += b.records
        s.games += b.games
        s.positions += b.n_positions
        s.counts.add(b.counts)
        self.builder = self._new_builder()


class Journal:
    """The ``NAME.h5.journal/`` directory of an ingest in progress."""

    def __init__(self, output: Path):
        self.output = output
        self.path = journal_dir(output)

    def exists(self) -> bool:
        return (self.path / CONFIG_NAME).exists()

    def start(self, config: dict) -> None:
        """A fresh journal; any leftover from an earlier run is removed first."""
        self.remove()
        self.path.mkdir(parents=True)
        atomic_json(self.path / CONFIG_NAME, config, indent=1)

    def config(self) -> dict:
        return json.loads((self.path / CONFIG_NAME).read_text())

    def shard_path(self, number: int) -> Path:
        return self.path / f"shard-{number:06d}.h5"

    def committed_shards(self) -> list[Path]:
        """Whole shards in order; stray temporaries from a killed run are deleted."""
        remove_temporaries(self.path)
        return sorted(self.path.glob("shard-*.h5"))

    def load_state(self) -> JournalState:
        state = JournalState()
        for number, shard in enumerate(self.committed_shards()):
            if shard != self.shard_path(number):
                raise ValueError(f"{self.path}: shard {number} missing (journal damaged)")
            with h5py.File(shard, "r") as f:
                if int(f.attrs["records_start"]) != state.records:
                    raise ValueError(f"{shard}: does not continue the previous shard")
                state.records = int(f.attrs["records_end"])
                state.counts.add(IngestCounts.from_json(json.loads(f.attrs["counts"])))
                games = read_columns(f["games"], ["digest", "source", "index", "positions"])
            for digest, source, index in zip(
                games["digest"], games["source"], games["index"], strict=True
            ):
                state.digests.setdefault(str(digest), f"{source}#{index}")
            state.games += len(games["digest"])
            state.positions += int(np.sum(games["positions"], dtype=np.int64))
            state.shards.append(shard)
        return state

    def mark_done(self) -> None:
        (self.path / DONE_NAME).write_text("all records processed\n")

    def is_done(self) -> bool:
        return (self.path / DONE_NAME).exists()

    def remove(self) -> None:
        if self.path.exists():
            shutil.rmtree(self.path)
