"""Played games: what to play (:class:`GameTask`), what happened (:class:`GameRow`,
one line of ``results.jsonl``), and the workers that play them.

A tournament and datagen both schedule games and keep their results here:
each row is appended and fsynced as its game ends, so a killed run loses at
most the games in flight, and the worker processes (local, or Ray actors)
keep their players (a loaded network, a GTP engine) between games. ``config``
below is either one's config: its game settings, ``out`` and backend.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from harness.arena.ratings import Outcome
from harness.arena.settings import PlaySettings
from harness.game.geometry import BLACK, WHITE
from harness.players.spec import PlayerSpec

RESULTS_FILE = "results.jsonl"


@dataclass(frozen=True)
class GameTask:
    game_id: str
    black: str  # display names
    white: str
    black_spec: PlayerSpec
    white_spec: PlayerSpec
    opening: tuple[int, ...]
    seed: int


# The fields of a result row that a replay of the same game changes (wall-clock times).
TIMING_FIELDS = frozenset({"seconds", "black_seconds", "white_seconds"})


@dataclass
class GameRow:
    """One line of ``results.jsonl``."""

    game_id: str
    black: str
    white: str
    winner: str | None  # name of the winner, None for a draw or an error
    score: float | None  # Black's score: 1, 0.5, 0; None for an error game
    result: str  # SGF RE value
    reason: str
    moves: int
    seconds: float
    sgf: str | None = None
    error: str | None = None
    harness_score: float | None = None
    engine_scores: dict[str, str] = field(default_factory=dict)
    # Each side's thinking time and moves chosen (opening moves excluded).
    black_seconds: float = 0.0
    white_seconds: float = 0.0
    black_turns: int = 0
    white_turns: int = 0

    @classmethod
    def failed(cls, task: GameTask, message: str) -> GameRow:
        """An error game: recorded with its reason, never rated."""
        first_line = message.splitlines()[0] if message else "unknown error"
        return cls(
            task.game_id, task.black, task.white, None, None, "?", "error", 0, 0.0, error=first_line
        )


def random_opening(size: int, count: int, seed: int) -> tuple[int, ...]:
    """``count`` random legal moves (no pass), reproducible from the seed."""
    if count <= 0:
        return ()
    from harness.game.position import Game

    game = Game(size, 0.0)
    rng = random.Random(seed)
    moves = []
    for _ in range(count):
        legal = [p for p in range(size * size) if game.is_legal(p)]
        move = rng.choice(legal)
        game.play(move)
        moves.append(move)
    return tuple(moves)


def read_results(out: str | Path) -> list[GameRow]:
    """Rows already on disk; a torn last line (killed mid-write) is ignored."""
    path = Path(out) / RESULTS_FILE
    rows = []
    if not path.exists():
        return rows
    for line in path.read_text().splitlines():
        try:
            rows.append(GameRow(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue
    return rows


def append_result(out: str | Path, row: GameRow) -> None:
    path = Path(out) / RESULTS_FILE
    with open(path, "a+b") as f:
        # A run killed mid-write leaves a torn last line: end it so that it
        # stays one unreadable line instead of swallowing this row.
        torn = False
        if f.seek(0, os.SEEK_END) > 0:
            f.seek(-1, os.SEEK_END)
            torn = f.read(1) != b"\n"
        f.write((("\n" if torn else "") + json.dumps(asdict(row)) + "\n").encode())
        f.flush()
        os.fsync(f.fileno())


_PLAYERS: dict[str, object] = {}


def _player(spec: PlayerSpec, name: str):
    """Players are built once per worker process and reused across games."""
    if name not in _PLAYERS:
        _PLAYERS[name] = spec.build(name=name)
    return _PLAYERS[name]


def play_task(task: GameTask, config: PlaySettings) -> GameRow:
    """Play one scheduled game; any failure becomes an error row, never an exception."""
    from harness.arena.referee import play_game

    sgf = Path(config.out) / "games" / f"{task.game_id}.sgf"
    try:
        black = _player(task.black_spec, task.black)
        white = _player(task.white_spec, task.white)
        played = play_game(
            black,
            white,
            size=config.board_size,
            komi=config.komi,
            rules=config.rules,
            max_moves=config.max_moves,
            seed=task.seed,
            sgf_path=sgf,
            move_time=config.move_time,
            opening=task.opening,  # playouts: already in the specs (named_players)
        )
    except Exception as exc:  # an engine that cannot even start
        for name in (task.black, task.white):  # rebuilt (restarted) for the next game
            if name in _PLAYERS:
                _close_quietly(_PLAYERS.pop(name))
        return GameRow.failed(task, f"{type(exc).__name__}: {exc}")
    result = played.result
    error = played.reason if played.crashed else None  # crash or timeout: not a loss
    score = None if error else {BLACK: 1.0, WHITE: 0.0}.get(result.winner, 0.5)
    winner = {BLACK: task.black, WHITE: task.white}.get(result.winner) if not error else None
    return GameRow(
        game_id=task.game_id,
        black=task.black,
        white=task.white,
        winner=winner,
        score=score,
        result=result.to_sgf(),
        reason=played.reason,
        moves=len(played.moves),
        seconds=round(played.seconds, 3),
        sgf=str(sgf.relative_to(config.out)),
        error=error,
        harness_score=played.harness_score,
        engine_scores=played.engine_scores,
        black_seconds=round(played.clock[BLACK], 3),
        white_seconds=round(played.clock[WHITE], 3),
        black_turns=played.turns[BLACK],
        white_turns=played.turns[WHITE],
    )


def _close_quietly(player) -> None:
    with contextlib.suppress(Exception):
        player.close()


class GameSession:
    """Workers that outlive one batch of games.

    An adaptive tournament plays round after round on the same workers, so a
    network is loaded (and Ray started) once per tournament, not per round.
    The backend starts at the first batch that has games.
    """

    def __init__(self, config, size: int):
        self.config = config  # a TournamentConfig or a DatagenConfig
        self.size = size  # games the workers should be able to run at once
        self._stack = contextlib.ExitStack()
        self._play = None

    def play(self, tasks: Sequence[GameTask]) -> Iterator[GameRow]:
        """Rows of ``tasks`` as they finish, each game once."""
        if not tasks:
            return
        if self._play is None:
            self._play = self._stack.enter_context(_backend(self.config, max(self.size,
                                                                              len(tasks))))
        yield from self._play(tasks)

    def __enter__(self) -> GameSession:
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()


class GameWorker:
    """A worker process (local or a Ray actor): plays games of one tournament or
    datagen config, keeping its players (a loaded network, a GTP engine) between
    games. Every game carries its own seed, so its moves do not depend on which
    worker plays it; the driver alone appends rows to ``results.jsonl``."""

    def __init__(self, config):
        self.config = config

    def play(self, task: GameTask) -> GameRow:
        return play_task(task, self.config)

    def close(self) -> bool:
        close_players()
        return True


def close_players() -> None:
    """End this process's cached players (GTP engines exit, networks are dropped)."""
    for player in _PLAYERS.values():
        _close_quietly(player)
    _PLAYERS.clear()


@contextlib.contextmanager
def _backend(config, size: int):
    """A function playing a batch of tasks: on worker processes, on Ray, or here.

    Ray workers may run elsewhere (another working directory, another node):
    they write each game's SGF under an absolute ``out``, which on a cluster
    must be a filesystem every node sees. A game whose workers kept dying
    becomes an error row, never a loss.
    """
    if config.backend == "local" and (config.parallel <= 1 or size <= 1):
        try:
            yield lambda tasks: (play_task(task, config) for task in tasks)
        finally:
            close_players()
        return
    from harness.distributed.executor import worker_pool

    config = replace(config, out=str(Path(config.out).resolve()))
    local = config.backend == "local"
    workers = min(size, config.parallel) if local or config.parallel > 1 else 0
    # Spawned workers: TensorFlow and GTP subprocesses do not survive fork well.
    with worker_pool(GameWorker, (config,), workers, backend=config.backend,
                     ray_address=config.ray_address, start_method="spawn",
                     at_most=size) as pool:
        try:
            yield lambda tasks: _play_on(pool, tasks)
        finally:
            pool.close("close")


def _play_on(pool, tasks: Sequence[GameTask]) -> Iterator[GameRow]:
    by_id = {task.game_id: task for task in tasks}
    for _, row in pool.run(
        "play", ((task.game_id, (task,)) for task in tasks),
        lost=lambda key, message: GameRow.failed(by_id[key], f"worker failed: {message}"),
    ):
        yield row


def play_all(tasks: Sequence[GameTask], config: PlaySettings) -> Iterator[GameRow]:
    """Rows of ``tasks`` as they finish, each game once."""
    with GameSession(config, size=len(tasks)) as session:
        yield from session.play(tasks)


def latest_rows(rows: Sequence[GameRow]) -> list[GameRow]:
    """One row per game id (a retried error game keeps its newest row)."""
    by_id = {row.game_id: row for row in rows}
    return [by_id[k] for k in sorted(by_id)]


def outcomes_of(rows: Sequence[GameRow]) -> list[Outcome]:
    return [
        Outcome(r.black, r.white, r.score) for r in rows if r.error is None and r.score is not None
    ]
