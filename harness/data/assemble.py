"""Build the final positions file from the journal's shards.

The file is written as ``NAME.h5.partial``; the ``complete`` attribute is set
last and the file is renamed only after it is closed and synced, so a file
named ``NAME.h5`` is always whole. Splits are assigned here, once every game
is known, so exact split counts are possible and do not depend on the order
the games arrived in.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import h5py
import numpy as np

import harness
from harness.data.journal import Journal, partial_path
from harness.data.layout import (
    COMPRESSION,
    FORMAT,
    FORMAT_VERSION,
    GAME_CHUNK,
    GAME_COLUMNS,
    OPTIONAL_POSITION_COLUMNS,
    POSITION_CHUNK,
    POSITION_COLUMNS,
    REJECT_COLUMNS,
    SOFT_INDEX,
    SOFT_OFFSETS,
    SOFT_PROB,
    SOURCE_COLUMNS,
    SPLITS,
    VAL,
)
from harness.data.splits import assign_splits, cazenave_rows, source_mask, split_count
from harness.data.tables import column_array, create_columns, read_columns, write_columns


@dataclass
class DatasetAttributes:
    """Root attributes describing how a dataset was made."""

    board_size: int
    encoder: str
    rules: str = "any"  # rules filter the games passed
    replay_rules: str = "superko"  # rules the moves were checked with
    val_games: float | int = 0
    test_games: float | int = 0
    seed: int = 0
    cazenave_val: bool = False
    no_result: str = "policy-only"
    min_moves: int = 0
    sources: list[dict] = field(default_factory=list)  # {"path", "bytes", "sha256"}
    test_sources: tuple[str, ...] = ()  # games from matching sources are the test split
    extra: dict = field(default_factory=dict)


class _AlignedWriter:
    """Writes rows into fixed-size datasets in whole chunks (no chunk rewritten)."""

    def __init__(self, group: h5py.Group, names: list[str], chunk: int):
        self.group, self.names, self.chunk = group, names, chunk
        self.pending: dict[str, list[np.ndarray]] = {n: [] for n in names}
        self.pending_rows = 0
        self.written = 0

    def add(self, data: dict[str, np.ndarray]) -> None:
        rows = len(data[self.names[0]])
        for name in self.names:
            self.pending[name].append(data[name])
        self.pending_rows += rows
        if self.pending_rows >= self.chunk:
            self._flush(self.pending_rows - self.pending_rows % self.chunk)

    def close(self) -> None:
        if self.pending_rows:
            self._flush(self.pending_rows)

    def _flush(self, rows: int) -> None:
        for name in self.names:
            block = np.concatenate(self.pending[name]) if self.pending[name] else None
            self.group[name][self.written : self.written + rows] = block[:rows]
            self.pending[name] = [block[rows:]]
        self.pending_rows -= rows
        self.written += rows


def _source_digest(sources: list[dict]) -> str:
    h = hashlib.sha256()
    for s in sources:
        h.update(f"{s['path']}\0{s['bytes']}\0{s['sha256']}\n".encode())
    return h.hexdigest()


def assemble(journal: Journal, attrs: DatasetAttributes, counts_json: dict) -> dict:
    """Write ``NAME.h5`` from the shards; returns the summary stored in its attributes."""
    output = journal.output
    shards = journal.committed_shards()
    games = _game_keys(shards, tuple(attrs.test_sources))
    held_out = games.pop("held_out")
    rejects = _concat_tables(shards, "rejects", REJECT_COLUMNS)
    n_games = len(games["digest"])
    n_positions = int(np.sum(games["positions"], dtype=np.int64))
    games["first"] = np.cumsum(games["positions"], dtype=np.int64) - games["positions"]
    n_free = n_games - int(held_out.sum())
    n_val = split_count(attrs.val_games, n_free)
    n_test = min(split_count(attrs.test_games, n_free), n_free - n_val)
    games["split"] = assign_splits(games["digest"], attrs.seed, n_val, n_test, held_out)
    if attrs.cazenave_val:
        games["cazenave_row"] = cazenave_rows(
            games["digest"], games["first"], games["positions"], games["split"], attrs.seed
        )
    split_games = {name: int(np.sum(games["split"] == i)) for i, name in enumerate(SPLITS)}
    split_positions = {
        name: int(np.sum(games["positions"][games["split"] == i], dtype=np.int64))
        for i, name in enumerate(SPLITS)
    }
    if attrs.cazenave_val:
        split_positions["val"] = int(np.sum(games["cazenave_row"] >= 0))
    size = attrs.board_size
    summary = {
        "games": n_games,
        "positions": n_positions,
        "split_games": split_games,
        "split_positions": split_positions,
    }

    tmp = partial_path(output)
    tmp.unlink(missing_ok=True)
    with h5py.File(tmp, "w") as f:
        f.attrs["format"] = FORMAT
        f.attrs["format_version"] = FORMAT_VERSION
        f.attrs["complete"] = False
        positions = f.create_group("positions")
        optional = _optional_columns(shards)
        columns = [*POSITION_COLUMNS, *optional]
        create_columns(positions, columns, n_positions, size * size, POSITION_CHUNK, COMPRESSION)
        writer = _AlignedWriter(positions, [c.name for c in columns], POSITION_CHUNK)
        soft_parts = []
        for shard in shards:
            with h5py.File(shard, "r") as s:
                writer.add(read_columns(s["positions"], writer.names))
                soft_parts.append(read_columns(s["soft_policy"]) if "soft_policy" in s else None)
        writer.close()
        if writer.written != n_positions:
            raise ValueError(
                f"{journal.path}: shards hold {writer.written} positions, games say {n_positions}"
            )
        if any(p is not None for p in soft_parts):
            _write_soft(f.create_group("soft_policy"), shards, soft_parts)
        _write_games(f.create_group("games"), shards, games)
        write_columns(
            f.create_group("rejects"),
            REJECT_COLUMNS,
            rejects,
            chunk=GAME_CHUNK,
            compression=COMPRESSION,
        )
        src = {c.name: [s[c.name] for s in attrs.sources] for c in SOURCE_COLUMNS}
        src["sha256"] = [s.encode("ascii") for s in src["sha256"]]
        write_columns(
            f.create_group("sources"),
            SOURCE_COLUMNS,
            src,
            chunk=GAME_CHUNK,
            compression=COMPRESSION,
        )
        root = {
            "board_size": size,
            "encoder": attrs.encoder,
            "rules": attrs.rules,
            "replay_rules": attrs.replay_rules,
            "harness_version": harness.__version__,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "sources_sha256": _source_digest(attrs.sources),
            "split_seed": attrs.seed,
            "split_games": json.dumps(split_games),
            "split_positions": json.dumps(split_positions),
            "val_games_requested": str(attrs.val_games),
            "test_games_requested": str(attrs.test_games),
            "test_sources": json.dumps(list(attrs.test_sources)),
            "cazenave_val": attrs.cazenave_val,
            "no_result": attrs.no_result,
            "min_moves": attrs.min_moves,
            "games": n_games,
            "positions": n_positions,
            "rejected": int(np.sum(rejects["kind"] == "rejected")) if len(rejects["kind"]) else 0,
            "duplicates": int(np.sum(rejects["kind"] == "duplicate"))
            if len(rejects["kind"])
            else 0,
            "counts": json.dumps(counts_json, ensure_ascii=False),
            **attrs.extra,
        }
        for key, value in root.items():
            f.attrs[key] = value
        f.flush()
        f.attrs["complete"] = True  # last: a file without it never reads as complete
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    summary["rejects"] = rejects
    summary["bytes"] = tmp.stat().st_size
    os.replace(tmp, output)
    return summary


def _game_keys(shards: list[Path], test_sources: tuple[str, ...]) -> dict[str, np.ndarray]:
    """What the splits need of every game: digest, positions, held-out flag (~40 bytes a game).

    The other game columns (names, dates, sources: most of a row) are copied
    shard by shard by :func:`_write_games`, so memory does not grow with them.
    """
    parts = []
    for shard in shards:
        with h5py.File(shard, "r") as s:
            part = read_columns(s["games"], ["digest", "positions", "source"])
        part["held_out"] = source_mask(part.pop("source"), test_sources)
        parts.append(part)
    names = {"digest": "S32", "positions": np.int32, "held_out": bool}
    return {
        name: np.concatenate([p[name] for p in parts]) if parts else np.zeros(0, dtype)
        for name, dtype in names.items()
    }


def _write_games(group: h5py.Group, shards: list[Path], games: dict[str, np.ndarray]) -> None:
    """``/games`` from the shards' rows plus the columns assembly decided (split, first, ...)."""
    decided = [name for name in ("first", "split", "cazenave_row") if name in games]
    create_columns(group, GAME_COLUMNS, len(games["digest"]), chunk=GAME_CHUNK,
                   compression=COMPRESSION)
    writer = _AlignedWriter(group, [c.name for c in GAME_COLUMNS], GAME_CHUNK)
    start = 0
    for shard in shards:
        with h5py.File(shard, "r") as s:
            rows = read_columns(s["games"], [c.name for c in GAME_COLUMNS])
        count = len(rows["digest"])
        for name in decided:
            rows[name] = games[name][start : start + count]
        start += count
        writer.add({c.name: column_array(c, rows[c.name]) for c in GAME_COLUMNS})
    writer.close()


def _concat_tables(shards: list[Path], group: str, columns) -> dict[str, np.ndarray]:
    parts = []
    for shard in shards:
        with h5py.File(shard, "r") as s:
            parts.append(read_columns(s[group], [c.name for c in columns]))
    out = {}
    for column in columns:
        arrays = [p[column.name] for p in parts if column.name in p]
        out[column.name] = np.concatenate(arrays) if arrays else np.zeros(0, _empty_dtype(column))
    return out


def _empty_dtype(column) -> object:
    return object if column.dtype == "str" else column.dtype


def _optional_columns(shards: list[Path]) -> list:
    """Optional columns present in every shard that has positions."""
    found = []
    for column in OPTIONAL_POSITION_COLUMNS:
        present = []
        for shard in shards:
            with h5py.File(shard, "r") as s:
                if len(s["positions/move"]):
                    present.append(column.name in s["positions"])
        if present and all(present):
            found.append(column)
        elif any(present):
            raise ValueError(f"{column.name} present in some shards only")
    return found


def _write_soft(group: h5py.Group, shards: list[Path], parts: list[dict | None]) -> None:
    offsets, index, prob, base = [np.zeros(1, np.int64)], [], [], 0
    for shard, part in zip(shards, parts, strict=True):
        if part is None:
            with h5py.File(shard, "r") as s:
                rows = len(s["positions/move"])
            offsets.append(np.full(rows, base, np.int64))
            continue
        offsets.append(base + part[SOFT_OFFSETS][1:])
        index.append(part[SOFT_INDEX])
        prob.append(part[SOFT_PROB])
        base += len(part[SOFT_INDEX])
    data = {
        SOFT_OFFSETS: np.concatenate(offsets),
        SOFT_INDEX: np.concatenate(index),
        SOFT_PROB: np.concatenate(prob),
    }
    for name, values in data.items():
        chunks = (max(1, min(len(values), 65536)),) if len(values) else None
        kwargs = COMPRESSION if chunks else {}
        group.create_dataset(name, data=values, chunks=chunks, **kwargs)


__all__ = ["VAL", "DatasetAttributes", "assemble"]
