"""Resumable round-robin tournaments between any players, fixed or adaptive.

A fixed tournament plays ``games_per_pair`` games in every pair. An adaptive
one (``until_separated``, or ``sprt`` for a two-player match) plays that
round robin as its first round and then further rounds chosen by
:mod:`harness.arena.adaptive` until the ranking is resolved, the SPRT
decides, or a cap is reached.

Every finished game is appended at once to ``results.jsonl`` (one JSON
object a line, flushed and fsynced) and its SGF saved, so a killed tournament loses
at most the games in flight; rerunning the same command plays only the games
whose ids are missing. Games run on :class:`GameWorker` processes (local, or
Ray actors with ``backend = "ray"``) through :mod:`harness.distributed`; only
the parent writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import pandas as pd

from harness.arena.ratings import Outcome, bradley_terry
from harness.arena.settings import PlaySettings, RoundSettings
from harness.arena.tables import (
    READABLE_CLOCK,
    READABLE_COLOURS,
    READABLE_UNRESOLVED,
    clock_table,
    colour_table,
    games_matrix,
    ranking_table,
    readable,
    readable_matrix,
    readable_ranking,
    win_matrix,
    write_table,
)
from harness.config_io import setting
from harness.console import progress as tqdm
from harness.files import atomic_json
from harness.game.geometry import BLACK, WHITE
from harness.players.spec import PlayerSpec, parse_player

RESULTS_FILE = "results.jsonl"



@dataclass(frozen=True)
class NamedPlayer:
    """A player of a tournament: its spec, and its name ("" names it by its label)."""

    name: str
    spec: PlayerSpec


@dataclass(frozen=True, kw_only=True)
class TournamentConfig(PlaySettings, RoundSettings):
    """What to play. ``players`` are spec strings, optionally ``name=spec``, as
    the user wrote them, or :class:`NamedPlayer` values; strings are parsed
    once, here, so the config holds only parsed players.

    ``playouts``, when set, is the budget of every player that searches (uct,
    mcts): it replaces a player's own ``@N``, and the player's default name
    (its label) says so, e.g. ``uct:40`` plays, and is ranked, as ``uct:800``
    under ``playouts = 800``. A player given a name keeps it.
    """

    players: list[str | NamedPlayer] = setting(cli=False)
    out: str = setting("results/tournament", "output directory", aliases=("-o",))
    retry_errors: bool = setting(False, "replay games that errored")
    # A two-player match under an SPRT: {elo0, elo1, alpha, beta} (harness.arena.sprt).
    sprt: dict[str, float] = setting({}, cli=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.players) < 2:
            raise ValueError("a tournament needs at least two players")
        object.__setattr__(self, "players", [
            p if isinstance(p, NamedPlayer) else NamedPlayer(*parse_entry(p))
            for p in self.players])
        names = [name for name, _ in self.named_players()]
        if len(set(names)) != len(names):
            raise ValueError(f"player names must be unique, got {names}")
        if self.games_per_pair < 1:
            raise ValueError("games_per_pair must be at least 1")
        if self.anchor is not None and self.anchor not in names:
            raise ValueError(f"anchor {self.anchor!r} is not one of the players {names}")
        if not 0.5 < self.los < 1.0:
            raise ValueError(f"los must be in (0.5, 1), got {self.los}")
        if self.round_games < 1 or self.max_games < 0:
            raise ValueError("round_games must be at least 1 and max_games at least 0")
        if self.adaptive and self.max_games_per_pair < self.games_per_pair:
            raise ValueError("max_games_per_pair must be at least games_per_pair")
        if self.sprt:
            from harness.arena.sprt import sprt_from_mapping

            sprt_from_mapping(self.sprt)  # refuses bad hypotheses and unknown keys
            if len(names) != 2:
                raise ValueError(f"sprt is for a match of two players, got {len(names)}")
            if self.until_separated:
                raise ValueError("choose one of sprt and until_separated")

    @property
    def adaptive(self) -> bool:
        """Whether rounds after the first are chosen from the results."""
        return self.until_separated or bool(self.sprt)

    def named_players(self) -> list[tuple[str, PlayerSpec]]:
        """(display name, spec) for each player, with ``playouts`` applied; the
        name defaults to the spec's label, which states the budget played."""
        out = []
        for player in self.players:
            spec = player.spec.with_playouts(self.playouts)
            out.append((player.name or spec.label, spec))
        return out

    def record(self) -> dict:
        """The config as plain values for ``config.json``, players as the text
        that names them."""
        values = asdict(self)
        values["players"] = [f"{p.name}={p.spec.label}" if p.name else p.spec.label
                             for p in self.players]
        return values


def parse_entry(entry: str) -> tuple[str, PlayerSpec]:
    """A ``players`` entry as (its name, or "" when unnamed, and its spec)."""
    name, sep, text = entry.partition("=")
    named = sep and name.strip() and not any(c in name for c in ':",')
    return (name.strip(), parse_player(text)) if named else ("", parse_player(entry))


class OtherPlayersResults(ValueError):
    """The output directory holds results of players this tournament does not have."""


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


def schedule(config: TournamentConfig) -> list[GameTask]:
    """Every game of the round robin (an adaptive tournament's first round)."""
    n = len(config.players)
    return pair_games(config, {(i, j): (0, config.games_per_pair)
                               for i in range(n) for j in range(i + 1, n)})


def pair_games(config: TournamentConfig, ranges: dict[tuple[int, int], tuple[int, int]]
               ) -> list[GameTask]:
    """Games ``k`` in ``range(*ranges[i, j])`` of each pair of player indices.

    Game ``k`` of a pair is always the same game, whichever round asks for it:
    colours alternate with ``k`` (the first player is Black in even games) and
    games ``2m`` and ``2m + 1`` share their random opening.
    """
    players = config.named_players()
    tasks = []
    for (i, j), (start, stop) in ranges.items():
        (name_a, spec_a), (name_b, spec_b) = players[i], players[j]
        for k in range(start, stop):
            pair_seed = config.seed * 1_000_003 + i * 1009 + j * 101 + k // 2
            opening = random_opening(config.board_size, config.opening_moves, pair_seed)
            a_black = k % 2 == 0
            black, white = ((name_a, spec_a), (name_b, spec_b))[:: 1 if a_black else -1]
            tasks.append(
                GameTask(
                    game_id=f"{i:02d}-{j:02d}-{k:03d}",
                    black=black[0],
                    white=white[0],
                    black_spec=black[1],
                    white_spec=white[1],
                    opening=opening,
                    seed=pair_seed * 2 + k % 2,
                )
            )
    return tasks


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


# --- worker side ----------------------------------------------------------
_PLAYERS: dict[str, object] = {}


def _player(spec: PlayerSpec, name: str):
    """Players are built once per worker process and reused across games."""
    if name not in _PLAYERS:
        _PLAYERS[name] = spec.build(name=name)
    return _PLAYERS[name]


def play_task(task: GameTask, config: TournamentConfig) -> GameRow:
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


# --- parent side ----------------------------------------------------------
def pending(config: TournamentConfig, tasks: Sequence[GameTask] | None = None) -> list[GameTask]:
    """The games of ``tasks`` (default: the round robin) without a result on disk."""
    done = {
        row.game_id
        for row in read_results(config.out)
        if row.error is None or not config.retry_errors
    }
    return [t for t in (schedule(config) if tasks is None else tasks) if t.game_id not in done]


def run_tournament(config: TournamentConfig, *, progress: bool = True) -> list[GameRow]:
    """Play every missing game, round after round if adaptive, then write the tables.

    Returns all rows. An adaptive tournament replays its decisions from the
    results on disk, so a resumed one plays exactly the rounds a run that was
    never killed would have played.
    """
    out = Path(config.out)
    (out / "games").mkdir(parents=True, exist_ok=True)
    atomic_json(out / "config.json", config.record())
    tasks = schedule(config)
    scheduled: list[GameTask] = []
    bar = tqdm(total=0, desc="games", unit="game", disable=not progress)
    points = {name: 0.0 for name, _ in config.named_players()}
    done = latest_rows(read_results(out))
    _refuse_strangers(config, done)
    for outcome in outcomes_of(done):
        _add_points(points, outcome)
    with GameSession(config, size=len(tasks)) as session:
        while tasks:
            scheduled += tasks
            todo = pending(config, tasks)
            bar.total = len(scheduled)
            bar.update(len(tasks) - len(todo))
            for row in session.play(todo):
                append_result(out, row)
                for outcome in outcomes_of([row]):
                    _add_points(points, outcome)
                bar.update(1)
                leaders = sorted(points.items(), key=lambda kv: -kv[1])[:3]
                bar.set_postfix_str(" ".join(f"{name}:{pts:g}" for name, pts in leaders))
            tasks = next_round_games(config, scheduled) if config.adaptive else []
    bar.close()
    rows = latest_rows(read_results(out))
    write_tournament_tables(config, rows)
    return rows


def _refuse_strangers(config: TournamentConfig, rows: Sequence[GameRow]) -> None:
    """Resuming is only for the same players: games on disk by a name this config
    does not have (a player changed, or ``playouts`` did, which renames every
    searching player) would be rated beside games they did not play."""
    names = {name for name, _ in config.named_players()}
    strangers = sorted({n for row in rows for n in (row.black, row.white)} - names)
    if strangers:
        raise OtherPlayersResults(
            f"{Path(config.out) / RESULTS_FILE} has games of players not in this tournament "
            f"({', '.join(strangers)}); play it in another output directory"
        )


def next_round_games(config: TournamentConfig, scheduled: Sequence[GameTask]) -> list[GameTask]:
    """The games of the next adaptive round, decided on the ``scheduled`` games only."""
    from harness.arena.adaptive import next_round

    ids = {task.game_id for task in scheduled}
    rows = [row for row in latest_rows(read_results(config.out)) if row.game_id in ids]
    counts = pair_counts(config, scheduled)
    decision = next_round(config, outcomes_of(rows), counts)
    return pair_games(config, {
        pair: (counts.get(pair, 0),
               min(counts.get(pair, 0) + config.round_games, config.max_games_per_pair))
        for pair in decision.pairs
    })


def pair_counts(config: TournamentConfig, games: Sequence[GameTask | GameRow]
                ) -> dict[tuple[int, int], int]:
    """Games per pair of player indices (lower index first)."""
    index = {name: i for i, (name, _) in enumerate(config.named_players())}
    counts: dict[tuple[int, int], int] = {}
    for game in games:
        i, j = sorted((index[game.black], index[game.white]))
        counts[i, j] = counts.get((i, j), 0) + 1
    return counts


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


def play_all(tasks: Sequence[GameTask], config: TournamentConfig) -> Iterator[GameRow]:
    """Rows of ``tasks`` as they finish, each game once (``config`` may also be a DatagenConfig)."""
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


def _add_points(points: dict[str, float], outcome: Outcome) -> None:
    points[outcome.black] += outcome.score
    points[outcome.white] += 1 - outcome.score


def write_tournament_tables(config: TournamentConfig, rows: Sequence[GameRow]) -> dict[str, object]:
    """Ranking, unresolved pairs, win matrix, games matrix and colour table as
    CSV/MD/HTML, plus plots, and ``summary.json`` with why play stopped.

    The CSV files keep every digit under short column names for programs;
    the Markdown and HTML files are for people (:func:`tables.readable`).
    """
    from harness.arena.adaptive import next_round, stopping_sentences
    from harness.arena.plots import plot_elo, plot_win_matrix

    out = Path(config.out)
    names = [name for name, _ in config.named_players()]
    outcomes = outcomes_of(rows)
    ratings = bradley_terry(outcomes, names, anchor=config.anchor)
    ranking = ranking_table(outcomes, names, ratings)
    wins = win_matrix(outcomes, names)
    decision = next_round(config, outcomes, pair_counts(config, rows))
    unresolved = pd.DataFrame([asdict(u) for u in decision.unresolved],
                              columns=["higher", "lower", "los", "games"])
    colours = colour_table(outcomes, names)
    clocks = clock_table([(r.black, r.black_seconds, r.black_turns) for r in rows]
                         + [(r.white, r.white_seconds, r.white_turns) for r in rows], names)
    write_table(clocks, out / "clock", display=readable(clocks, READABLE_CLOCK))
    write_table(unresolved, out / "unresolved", display=readable(unresolved, READABLE_UNRESOLVED))
    write_table(wins, out / "win_matrix", index=True,
                display=readable_matrix(wins, "row's score against column (%)"))
    played = games_matrix(outcomes, names)
    write_table(played, out / "games_matrix", index=True,
                display=played.rename_axis("rated games between row and column"))
    write_table(colours, out / "colours", display=readable(colours, READABLE_COLOURS))
    plot_elo(ranking, out / "elo.png")
    plot_win_matrix(wins, out / "win_matrix.png")
    summary = tournament_summary(config, rows, decision)
    write_table(ranking, out / "ranking", display=readable_ranking(ranking),
                notes=stopping_sentences(summary))
    atomic_json(out / "summary.json", summary)
    return {"ranking": ranking, "win_matrix": wins, "unresolved_pairs": unresolved, **summary}


def tournament_summary(config: TournamentConfig, rows: Sequence[GameRow], decision) -> dict:
    """``summary.json``: game counts, why play stopped, the neighbours left
    unresolved and, for a match, the SPRT (``decision``: from :func:`adaptive.next_round`)."""
    summary = {
        "games": len(rows),
        "rated_games": len(outcomes_of(rows)),
        "error_games": sum(1 for r in rows if r.error is not None),
        "stopped": decision.status if not decision.pairs else "unfinished",
        "los": config.los,
        "players": {name: spec.label for name, spec in config.named_players()},
        "unresolved": [[u.higher, u.lower, round(u.los, 4), u.games]
                       for u in decision.unresolved],
    }
    if decision.sprt is not None:
        from harness.arena.sprt import sprt_from_mapping

        first, second = (name for name, _ in config.named_players())
        summary["sprt"] = {"first": first, "second": second,
                           **asdict(sprt_from_mapping(config.sprt)), **asdict(decision.sprt)}
    return summary
