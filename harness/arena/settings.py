"""The settings of played games and of tournament rounds, declared once.

A tournament, datagen and a suite's ``[tournament]`` and ``[data]`` sections
all say how games are played (clock, move cap, games at once) and a
tournament and a suite both say how many games are played in what rounds;
each inherits these classes instead of declaring the fields again, so their
defaults cannot drift apart. Light on imports: a suite reads its config with
no game machinery loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.config_io import setting
from harness.distributed import BackendSettings
from harness.game.settings import GameSettings


@dataclass(frozen=True)
class MatchSettings:
    """How each game is played, and how many at once."""

    max_moves: int | None = setting(None, "stop a game after this many moves "
                                    "(default: twice the points, harness.game.position.move_cap)")
    move_time: float | None = setting(None, "seconds per move, for players with a clock")
    parallel: int = setting(1, "games played at once")


@dataclass(frozen=True)
class PlaySettings(GameSettings, BackendSettings, MatchSettings):
    """How the games of a tournament or of datagen are played and spread over workers."""

    playouts: int | None = setting(None, "the budget of every player that searches (uct, "
                                   "mcts): replaces each spec's own @N")
    seed: int = setting(0, "random seed (openings and players)")


@dataclass(frozen=True)
class RoundSettings:
    """How many games a tournament plays, and in what rounds."""

    games_per_pair: int = setting(2, "games in every pair (adaptive: the first round)")
    opening_moves: int = setting(0, "random opening moves, the same for both colour "
                                 "assignments")
    anchor: str | None = setting(None, "the player whose Elo is 0")
    # Adaptive rounds (harness.arena.adaptive); games_per_pair is the first round.
    until_separated: bool = setting(
        False, "play rounds until every neighbour pair has LOS >= --los or "
        "--max-games-per-pair / --max-games is reached")
    los: float = setting(0.95, "likelihood of superiority that separates two neighbours")
    round_games: int = setting(2, "games per chosen pair in each later round "
                               "(colours alternate)")
    max_games_per_pair: int = setting(100, "cap of an adaptive tournament, per pair")
    max_games: int = setting(0, "cap of an adaptive tournament over all pairs (0: none)")


@dataclass(frozen=True)
class GenerateSettings:
    """What datagen generates: games of one player against itself."""

    player: str = setting("uct:200", cli=False)
    games: int = setting(100, "games to play")
    opening_moves: int = setting(4, "random opening moves")
