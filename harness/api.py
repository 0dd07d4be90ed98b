"""The harness from Python: one import for a notebook or a script.

Every function here is the one the command line runs, with the command's
defaults, taking and returning values (paths, players, dataclasses) rather
than command-line text. ``docs/api.md`` shows them in a runnable example.

=====================  ==================================================
``make_player(spec)``  any player: ``random``, ``uct:1000``, ``mcts:M@200``,
                       ``policy:M``, ``gnugo:10``, ``gtp:"CMD ARGS"``
``play_game(b, w)``    one refereed game (players or specs), optional SGF
``tournament(specs)``  a round robin with results, tables and Elo ratings
``rate(outcomes)``     Bradley-Terry Elo with intervals
``ingest(sources)``    SGF files/archives -> an HDF5 positions file
``open_dataset(path)`` read positions back
``build_model(name)``  a zoo network (``a0.6.64``, ``mobile...``) or a plugin's
                       (``my_nets:tiny_net``); ``save_model``
``load_plugins(mods)`` plugin modules or ``.py`` files (docs/plugins.md)
``load_model(path)``   a ``.keras`` file, loaded with ``safe_mode=True``
``evaluate(m, data)``  accuracy, MSE and losses of a checkpoint on a split
=====================  ==================================================

Heavy modules (TensorFlow) load only when a function that needs them runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.arena.games import GameRow
from harness.arena.ratings import Outcome, Ratings, bradley_terry
from harness.arena.referee import PlayedGame
from harness.arena.tournament import TournamentConfig
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.game.settings import GameSettings
from harness.players.base import Player

__all__ = [
    "Game", "GameRow", "Outcome", "PlayedGame", "Player", "Ratings", "TournamentResult",
    "build_model", "evaluate", "ingest", "load_model", "load_plugins", "make_player",
    "open_dataset",
    "play_game", "rate", "save_model", "tournament",
]


def make_player(spec: str, *, seed: int | None = None, name: str | None = None) -> Player:
    """A player from a spec string (the strings ``harness tournament`` takes)."""
    from harness.players.spec import make_player as make

    return make(spec, seed=seed, name=name)


def play_game(
    black: Player | str,
    white: Player | str,
    *,
    size: int = GameSettings.board_size,
    komi: float = GameSettings.komi,
    rules: str = GameSettings.rules,
    seed: int | None = None,
    sgf_path: str | os.PathLike | None = None,
    max_moves: int | None = None,
) -> PlayedGame:
    """Play one game under the referee; players given as specs are made here
    and closed afterwards, player objects are left open for the caller."""
    from harness.arena.referee import play_game as referee_game
    from harness.arena.referee import write_played_sgf

    made = [make_player(p, seed=seed) for p in (black, white) if isinstance(p, str)]
    players = iter(made)
    b = next(players) if isinstance(black, str) else black
    w = next(players) if isinstance(white, str) else white
    try:
        played = referee_game(
            b, w, size=size, komi=komi, rules=rules, seed=seed, max_moves=max_moves
        )
    finally:
        for player in made:
            player.close()
    if sgf_path is not None:
        played.sgf_path = write_played_sgf(played, sgf_path)
    return played


@dataclass(frozen=True)
class TournamentResult:
    """Every game's row (``results.jsonl``) and the Elo ratings they give."""

    rows: list[GameRow]
    ratings: Ratings
    out: Path


def tournament(
    players: Sequence[str],
    *,
    out: str | os.PathLike = TournamentConfig.out,
    progress: bool = False,
    **options,
) -> TournamentResult:
    """A round robin between player specs (``name=spec`` names them), with
    SGFs, tables and ``results.jsonl`` under ``out``; resumes like the
    command. ``options`` are further :class:`TournamentConfig` fields
    (``board_size``, ``komi``, ``games_per_pair``, ``parallel``, ``playouts``,
    ``anchor``, ...), with its defaults."""
    from harness.arena.games import outcomes_of
    from harness.arena.tournament import run_tournament, write_tournament_tables

    config = TournamentConfig(players=list(players), out=str(out), **options)
    rows = run_tournament(config, progress=progress)
    write_tournament_tables(config, rows)
    names = [name for name, _ in config.named_players()]
    ratings = bradley_terry(outcomes_of(rows), names, anchor=config.anchor)
    return TournamentResult(rows, ratings, Path(out))


def rate(
    outcomes: Iterable[Outcome | GameRow | PlayedGame], *, anchor: str | None = None
) -> Ratings:
    """Bradley-Terry Elo of finished games (outcomes, tournament rows or
    played games; error games and unfinished ones are left out)."""
    games = []
    for game in outcomes:
        if isinstance(game, Outcome):
            games.append(game)
        elif isinstance(game, GameRow):
            if game.score is not None:
                games.append(Outcome(game.black, game.white, game.score))
        elif not game.crashed and game.result.known:
            score = {BLACK: 1.0, WHITE: 0.0}.get(game.result.winner, 0.5)
            games.append(Outcome(game.black, game.white, score))
    return bradley_terry(games, anchor=anchor)


def ingest(
    sources: Sequence[str | os.PathLike],
    output: str | os.PathLike,
    *,
    board_size: int = 19,
    encoder: str = "cazenave21",
    progress: bool = False,
    **options,
):
    """Convert SGF files, folders or archives into a positions file (``.h5``);
    ``options`` are further :class:`harness.data.ingest.IngestConfig` fields
    (``val_games``, ``workers``, ``overwrite``, ...). Returns its
    :class:`~harness.data.ingest.IngestResult`."""
    from harness.data.ingest import IngestConfig
    from harness.data.ingest import ingest as run

    config = IngestConfig(
        sources=[str(s) for s in sources], output=Path(output), board_size=board_size,
        encoder=encoder, progress=progress, **options,
    )
    return run(config)


def open_dataset(path: str | os.PathLike):
    """A positions file for reading (a context manager): ``n_positions``,
    ``split_rows(split)``, ``positions(rows)``, ``describe()``."""
    from harness.data.dataset import open_dataset as open_

    return open_(path)


def build_model(name: str, board_size: int, *, encoder: str = "cazenave21",
                seed: int | None = None, heads: Iterable[str] | None = None):
    """A zoo network by name, or a plugin's by reference, for ``encoder``'s
    input planes (a Keras model).
    It remembers ``encoder``, so files it is saved to say which planes feed it."""
    from harness.features import get_encoder
    from harness.nets import build_model as build
    from harness.nets import model_info

    model = build(name, board_size, get_encoder(encoder).planes, heads=heads, seed=seed)
    model.model_info = model_info(model, encoder=encoder)
    return model


def load_plugins(plugins: Iterable[str]) -> None:
    """Import plugin modules (names or ``.py`` files): their registered
    networks and layers are then known to every function here and to the
    worker processes the harness starts."""
    from harness.nets.plugins import load_plugins as load

    load(plugins)


def save_model(model, path: str | os.PathLike, info=None, *, half_weights: bool = False) -> Path:
    """Write a ``.keras`` file atomically, with its encoder and conventions
    inside (``info``, a ``harness.nets.ModelInfo``; default the model's own);
    ``half_weights`` stores the weights as float16, half the bytes."""
    from harness.nets import save_model as save

    return save(model, path, info, half_weights=half_weights)


def load_model(path: str | os.PathLike):
    """Load a ``.keras`` file safely (``safe_mode=True``)."""
    from harness.nets import load_model as load

    return load(path)


def evaluate(
    model_path: str | os.PathLike,
    data: str | os.PathLike,
    *,
    split: str = "val",
    encoder: str = "",
    batch_size: int = 256,
    max_samples: int = 0,
) -> dict[str, float | str | int]:
    """``harness evaluate``: policy accuracy, value MSE and losses of a
    checkpoint on a dataset split, each with a 95% interval over games."""
    from harness.train.checkpoint_eval import evaluate_checkpoint

    return evaluate_checkpoint(
        model_path, data, split, encoder=encoder, batch_size=batch_size,
        max_samples=max_samples,
    )
