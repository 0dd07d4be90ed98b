"""The replay buffer: self-play positions on disk as HDF5 chunks, one per generation.

Why not the supervised positions format (``harness.data``)? Its per-position
fields are the same and named the same here, but a replay buffer needs two
things that format does not hold and one it must not do: the root value of
the search (for the value mix), a per-row "is a training target" flag (fast
searches under playout-cap randomisation are kept for the history planes but
never trained on), and no dedupe or split assignment (two identical self-play
games are two samples). So the buffer is a simpler chunk store:

- while a generation plays, every finished game is committed at once as its
  own small file ``gen-NNNN.parts/game-NNNNNN.h5`` (written under a temporary
  name, then renamed): a killed run loses only the games in flight;
- when the generation's self-play is done, its parts are merged into
  ``gen-NNNN.h5`` (atomically) and the parts directory removed. A merge
  interrupted before the rename is simply redone; one interrupted after it
  leaves a stale parts directory that is deleted.

The window is read into memory (only the columns training needs) and kept
there between generations, so each generation reads only its new chunk.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from harness.files import atomic_path, remove_temporaries
from harness.rl.game_rows import GameRows

COMPRESSION = {"compression": "gzip", "compression_opts": 4}
# Per-position columns: the rows of all games, concatenated in game order.
POSITION_COLUMNS = (
    "stones", "to_play", "move", "policy", "target", "value", "root_value",
    "ownership", "score", "move_number",
)
# Per-game columns.
GAME_COLUMNS = (
    "first", "positions", "winner", "ownership_known", "score_known",
    "resign_enabled", "would_resign", "resigned", "truncated",
)
_PART = re.compile(r"game-(\d{6})\.h5$")
_CHUNK = re.compile(r"gen-(\d{4})\.h5$")


@dataclass
class GameMeta:
    """What the buffer records about a game besides its rows."""

    resign_enabled: bool = False
    would_resign: int = 0  # colour whose search wanted to resign in a no-resign game
    resigned: int = 0  # colour that resigned
    truncated: bool = False


def _write_h5(path: Path, positions: dict[str, np.ndarray], games: dict[str, np.ndarray],
              attrs: dict) -> None:
    """Write a chunk under a temporary name, fsync, rename: never half a file."""
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        for key, value in attrs.items():
            f.attrs[key] = value
        group = f.create_group("positions")
        for name in POSITION_COLUMNS:
            data = positions[name]
            extra = COMPRESSION if data.ndim == 2 and len(data) else {}
            group.create_dataset(name, data=data, **extra)
        group = f.create_group("games")
        for name in GAME_COLUMNS:
            group.create_dataset(name, data=games[name])


def _game_columns(rows: GameRows, meta: GameMeta, first: int) -> dict[str, np.ndarray]:
    return {
        "first": np.array([first], np.int64),
        "positions": np.array([len(rows)], np.int32),
        "winner": np.array([rows.winner], np.int8),
        "ownership_known": np.array([rows.ownership_known], np.uint8),
        "score_known": np.array([rows.score_known], np.uint8),
        "resign_enabled": np.array([meta.resign_enabled], np.uint8),
        "would_resign": np.array([meta.would_resign], np.int8),
        "resigned": np.array([meta.resigned], np.int8),
        "truncated": np.array([meta.truncated], np.uint8),
    }


def _read_h5(path: Path, columns: tuple[str, ...]) -> tuple[dict, dict, dict]:
    with h5py.File(path, "r") as f:
        positions = {name: f["positions"][name][...] for name in columns}
        games = {name: f["games"][name][...] for name in GAME_COLUMNS}
        attrs = dict(f.attrs)
    return positions, games, attrs


def _concat(parts: list[dict[str, np.ndarray]], names) -> dict[str, np.ndarray]:
    return {name: np.concatenate([p[name] for p in parts]) for name in names}


@dataclass
class Window:
    """The training window in memory: rows of consecutive whole games."""

    columns: dict[str, np.ndarray]  # per position
    game_of_row: np.ndarray  # int64 per position: index into ``games``
    games: dict[str, np.ndarray]  # per game, ``first`` relative to ``columns``
    n_games: int

    @property
    def n_positions(self) -> int:
        return len(self.game_of_row)

    def target_rows(self) -> np.ndarray:
        return np.flatnonzero(self.columns["target"])


class ReplayBuffer:
    """``RUN/buffer/``: committed self-play games of every generation."""

    def __init__(self, path: str | Path, board_size: int):
        self.path = Path(path)
        self.size = board_size
        self.points = board_size * board_size
        self._cache: dict[int, tuple[dict, dict]] = {}  # generation -> (positions, games)
        self._cached_columns: tuple[str, ...] = ()

    # --- writing --------------------------------------------------------
    def parts_dir(self, generation: int) -> Path:
        return self.path / f"gen-{generation:04d}.parts"

    def chunk_path(self, generation: int) -> Path:
        return self.path / f"gen-{generation:04d}.h5"

    def committed_parts(self, generation: int) -> list[Path]:
        """Whole per-game files of a generation still playing, in game order.

        Numbers must run 0, 1, 2...: each is written only after the previous
        one was renamed into place, so a gap means damage, not a kill.
        """
        folder = self.parts_dir(generation)
        if not folder.is_dir():
            return []
        remove_temporaries(folder)
        parts = sorted(p for p in folder.iterdir() if _PART.fullmatch(p.name))
        for number, part in enumerate(parts):
            if int(_PART.fullmatch(part.name).group(1)) != number:
                raise ValueError(f"{folder}: game {number} missing (buffer damaged)")
        return parts

    def games_committed(self, generation: int) -> int:
        """Finished games of ``generation`` already on disk (merged or not)."""
        chunk = self.chunk_path(generation)
        if chunk.exists():
            with h5py.File(chunk, "r") as f:
                return int(f["games/first"].shape[0])
        return len(self.committed_parts(generation))

    def add_game(self, generation: int, number: int, rows: GameRows, meta: GameMeta) -> Path:
        """Commit one finished game (game ``number`` of the generation)."""
        positions = {name: getattr(rows, name) for name in POSITION_COLUMNS}
        path = self.parts_dir(generation) / f"game-{number:06d}.h5"
        _write_h5(path, positions, _game_columns(rows, meta, 0),
                  {"generation": generation, "board_size": self.size})
        return path

    def merge(self, generation: int) -> Path:
        """Turn a generation's per-game parts into its chunk file (idempotent)."""
        chunk = self.chunk_path(generation)
        folder = self.parts_dir(generation)
        if chunk.exists():
            if folder.exists():
                shutil.rmtree(folder)
            return chunk
        parts = self.committed_parts(generation)
        positions, games = [], []
        first = 0
        for part in parts:
            p, g, _ = _read_h5(part, POSITION_COLUMNS)
            g["first"] = g["first"] + first
            first += int(g["positions"].sum())
            positions.append(p)
            games.append(g)
        if parts:
            all_positions = _concat(positions, POSITION_COLUMNS)
            all_games = _concat(games, GAME_COLUMNS)
        else:
            all_positions = _empty_positions(self.points)
            all_games = {name: np.zeros(0, np.int64) for name in GAME_COLUMNS}
        _write_h5(chunk, all_positions, all_games,
                  {"generation": generation, "board_size": self.size})
        if folder.exists():
            shutil.rmtree(folder)
        return chunk

    # --- reading --------------------------------------------------------
    def generations(self) -> list[int]:
        """Generations with a merged chunk, oldest first."""
        if not self.path.is_dir():
            return []
        found = (_CHUNK.fullmatch(p.name) for p in self.path.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def game_counts(self) -> dict[int, tuple[int, int]]:
        """(games, positions) of every merged generation."""
        counts = {}
        for g in self.generations():
            with h5py.File(self.chunk_path(g), "r") as f:
                counts[g] = (int(f["games/first"].shape[0]), int(f["positions/move"].shape[0]))
        return counts

    def read_generation(self, generation: int, columns: tuple[str, ...] = POSITION_COLUMNS
                        ) -> tuple[dict, dict]:
        p, g, _ = _read_h5(self.chunk_path(generation), columns)
        return p, g

    def window(self, size: int, unit: str, columns: tuple[str, ...]) -> Window:
        """The newest ``size`` games (or the newest whole games holding at least
        ``size`` positions) across merged generations."""
        if columns != self._cached_columns:
            self._cache, self._cached_columns = {}, columns
        chosen: list[tuple[dict, dict, int]] = []  # (positions, games, first game kept)
        taken = 0
        for gen in reversed(self.generations()):
            if gen not in self._cache:
                self._cache[gen] = self.read_generation(gen, columns)
            positions, games = self._cache[gen]
            counts = games["positions"].astype(np.int64)
            n = len(counts)
            if unit == "games":
                keep = min(n, size - taken)
                taken += keep
            else:
                cum = np.cumsum(counts[::-1])
                need = size - taken
                keep = n if cum.size == 0 or cum[-1] < need else int(np.searchsorted(cum, need)) + 1
                taken += int(cum[keep - 1]) if keep else 0
            chosen.append((positions, games, n - keep))
            if taken >= size:
                break
        wanted = {g for g in self.generations()[-len(chosen):]} if chosen else set()
        self._cache = {g: v for g, v in self._cache.items() if g in wanted}
        return _assemble(list(reversed(chosen)), columns, self.points)


def _empty_positions(points: int) -> dict[str, np.ndarray]:
    shapes = {"stones": (0, points), "policy": (0, points + 1), "ownership": (0, points)}
    dtypes = {"stones": np.int8, "to_play": np.int8, "move": np.int16, "policy": np.float16,
              "target": np.uint8, "value": np.int8, "root_value": np.float16,
              "ownership": np.int8, "score": np.float32, "move_number": np.int16}
    return {name: np.zeros(shapes.get(name, (0,)), dtypes[name]) for name in POSITION_COLUMNS}


def _assemble(chosen: list[tuple[dict, dict, int]], columns: tuple[str, ...],
              points: int) -> Window:
    pos_parts, game_parts, owners = [], [], []
    offset = 0
    game_offset = 0
    for positions, games, first_game in chosen:
        if first_game >= len(games["first"]):
            continue
        lo = int(games["first"][first_game])
        pos_parts.append({name: positions[name][lo:] for name in columns})
        kept = {name: games[name][first_game:] for name in GAME_COLUMNS}
        kept["first"] = kept["first"].astype(np.int64) - lo + offset
        game_parts.append(kept)
        counts = kept["positions"].astype(np.int64)
        owners.append(np.repeat(np.arange(len(counts)) + game_offset, counts))
        offset += int(counts.sum())
        game_offset += len(counts)
    if not pos_parts:
        empty = _empty_positions(points)
        return Window({n: empty[n] for n in columns}, np.zeros(0, np.int64),
                      {n: np.zeros(0, np.int64) for n in GAME_COLUMNS}, 0)
    return Window(_concat(pos_parts, columns), np.concatenate(owners),
                  _concat(game_parts, GAME_COLUMNS), game_offset)
