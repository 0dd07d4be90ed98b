"""``harness datagen``: games between two copies of a player, as an SGF archive.

When a study has no archive, the harness makes its own training data: the
UCT baseline or any GTP engine (GNU Go) plays itself from random openings.
It is a tournament with one pairing repeated, so it reuses the tournament's
scheduling, worker processes and resumable results file; the SGFs land in
``OUT/games/`` where ``harness ingest OUT/games`` reads them.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.arena.tournament import (
    GAME_FLAGS,
    GameRow,
    GameTask,
    append_result,
    latest_rows,
    play_all,
    random_opening,
    read_results,
)
from harness.config_io import ConfigError, add_flags, from_mapping, given_flags
from harness.players.spec import PlayerSpec, parse_player

HELP = "generate training games: a player (uct:N, gnugo:N, ...) against itself, saved as SGF"


@dataclass
class DatagenConfig:
    """What to generate. ``player`` is the spec text; ``playouts``, when set,
    replaces its ``@N`` (see :attr:`spec`)."""

    player: str = "uct:200"
    games: int = 100
    out: str = "datasets/generated"
    board_size: int = 9
    komi: float = 7.0
    rules: str = "superko"
    opening_moves: int = 4
    max_moves: int | None = None
    move_time: float | None = None
    playouts: int | None = None
    parallel: int = 1
    seed: int = 0
    backend: str = "local"  # or "ray" (harness.distributed)
    ray_address: str = ""

    def __post_init__(self) -> None:
        from harness.distributed import check_backend

        check_backend(self.backend)
        if self.games < 1:
            raise ValueError("games must be at least 1")
        from harness.arena.checks import check_game_settings, check_player_specs

        check_game_settings(self)
        check_player_specs([self.spec])

    @property
    def spec(self) -> PlayerSpec:
        """The player both colours are, with ``playouts`` applied (as a tournament does)."""
        return parse_player(self.player).with_playouts(self.playouts)

    @property
    def games_dir(self) -> Path:
        return Path(self.out) / "games"


def datagen_tasks(config: DatagenConfig) -> list[GameTask]:
    # The two colours get distinct names so that stateful players (GTP
    # engines) are two processes, each following its own game.
    spec = config.spec
    return [
        GameTask(
            game_id=f"{k:06d}",
            black=f"{spec.label}#black",
            white=f"{spec.label}#white",
            black_spec=spec,
            white_spec=spec,
            opening=random_opening(config.board_size, config.opening_moves, config.seed * 7919 + k),
            seed=config.seed * 1_000_003 + k,
        )
        for k in range(config.games)
    ]


def generate(config: DatagenConfig, *, progress: bool = True) -> list[GameRow]:
    """Play the missing games; returns every row (resumable like a tournament)."""
    from harness.console import progress as tqdm

    config.games_dir.mkdir(parents=True, exist_ok=True)
    done = {row.game_id for row in read_results(config.out)}
    todo = [t for t in datagen_tasks(config) if t.game_id not in done]
    bar = tqdm(
        total=config.games,
        initial=config.games - len(todo),
        desc="datagen",
        unit="game",
        disable=not progress,
    )
    for row in play_all(todo, config):
        append_result(config.out, row)
        bar.update(1)
    bar.close()
    return latest_rows(read_results(config.out))


_FLAGS = {**GAME_FLAGS, "games": ("--games", int)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("player", help="player spec, e.g. uct:200, gnugo:1, random")
    add_flags(parser, _FLAGS)
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    values = given_flags(args, _FLAGS)
    try:
        config = from_mapping(DatagenConfig, {"player": args.player, **values}, "command line")
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from harness.distributed import BackendError

    try:
        rows = generate(config, progress=not args.no_progress)
    except BackendError as e:
        print(f"harness datagen: {e}", file=sys.stderr)
        return 2
    errors = sum(1 for r in rows if r.error)
    moves = sum(r.moves for r in rows if not r.error)
    print(f"{len(rows)} games ({errors} errors, {moves} moves) in {config.games_dir}/")
    return 0 if errors < len(rows) else 1
