"""The games of a self-play study's pooled rating, played round by round and kept.

Every finished game is appended to ``DIR/rating/results.jsonl`` as the
arena's tournaments do (:func:`harness.arena.games.append_result`, one JSON
line, fsynced) with its SGF under ``DIR/rating/games/``, so a killed study
loses only the games in flight and a rerun goes on from the rating the games
on disk give. A game is named by its two players and its number within the
pair (``A~B~003``), not by player indices, so the games of a study whose
player list grew (a larger ``max_flops``, another model) stay valid; the
players of games whose names the study no longer has are left out of the
rating. Colours alternate within a pair and games ``2m`` and ``2m + 1``
share their random opening, so each pair's games are balanced by colour.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.arena.games import (
    GameRow,
    GameSession,
    GameTask,
    append_result,
    latest_rows,
    outcomes_of,
    random_opening,
    read_results,
)
from harness.arena.settings import MatchSettings
from harness.arena.tournament import NamedPlayer, TournamentConfig
from harness.config_io import values_of
from harness.distributed import BackendSettings
from harness.frontier.config import FrontierConfig, RatingSettings
from harness.frontier.rating import PoolRating, Round, next_round, pool_rating
from harness.game.settings import GameSettings
from harness.metrics import MetricsLog

# Random moves before each rating game, the same for both colours of a pair's
# two games: a deterministic search (no noise at evaluation) would otherwise
# replay one game over and over.
RATING_OPENING_MOVES = 2


@dataclass(frozen=True)
class PoolResult:
    rating: PoolRating
    rows: list[GameRow]  # every game of the study's players, error games too
    status: str  # why play stopped (harness.frontier.rating.STOP_REASONS)
    rounds: int  # rounds played in this session


def play_pool(config: FrontierConfig, players: Sequence[NamedPlayer], out: Path, *,
              progress: bool = True, log: Callable[[str], None] = print,
              metrics: MetricsLog | None = None) -> PoolResult:
    """Play rounds of near-rated pairs until the rating is as narrow as
    ``config.rating`` asks or its games cap is reached; the rating. Each
    rating between rounds goes to ``metrics`` at the step of the games played:
    ``rating/games``, ``rating/pairs`` (of the next round; 0 at the end) and
    each player's ``elo/NAME`` and ``halfwidth/NAME``."""
    from harness.console import progress as tqdm

    rating_settings = config.rating
    names = [p.name for p in players]
    anchor = names[0]
    session_config = game_config(config, players, out)
    out.mkdir(parents=True, exist_ok=True)
    rows = study_rows(out, names)
    rounds = 0
    bar = tqdm(total=rating_settings.max_rating_games, initial=len(rows), desc="rating games",
               unit="game", disable=not progress)
    with GameSession(session_config, size=rating_settings.parallel) as session:
        while True:
            rating = pool_rating(outcomes_of(rows), names, anchor, rating_settings.anchor_elo)
            plan = next_round(rating, rating_settings.target_halfwidth, len(rows),
                              rating_settings.max_rating_games, rating_settings.round_pair_games)
            if metrics is not None:
                metrics.write(len(rows), rating_metrics(rating, len(rows), len(plan.pairs)))
            if not plan.pairs:
                break
            rounds += 1
            tasks = round_tasks(plan, players, rows, rating_settings, config)
            log(f"rating round {rounds}: {len(plan.pairs)} pairs, {len(tasks)} games "
                f"({len(rows)} played so far)")
            for row in session.play(tasks):
                append_result(out, row)
                rows.append(row)
                bar.update(1)
    bar.close()
    return PoolResult(rating, rows, plan.status, rounds)


def rating_metrics(rating: PoolRating, games: int, pairs: int) -> dict[str, float]:
    """The pooled rating's live figures (player names with ``/`` written ``|``)."""
    values = {"rating/games": float(games), "rating/pairs": float(pairs)}
    for name, elo, half in zip(rating.players, rating.ratings.elo, rating.half_widths(),
                               strict=True):
        tag = name.replace("/", "|")
        values[f"elo/{tag}"] = float(elo)
        values[f"halfwidth/{tag}"] = float(half)
    return values


def game_config(config: FrontierConfig, players: Sequence[NamedPlayer],
                out: Path) -> TournamentConfig:
    """What the arena's game workers read: the board of the study's self-play,
    its backend, the rating's match settings, the seed and the folder."""
    return TournamentConfig(players=list(players), out=str(out), seed=config.seed,
                            **values_of(config.rl, GameSettings),
                            **values_of(config.rl, BackendSettings),
                            **values_of(config.rating, MatchSettings))


def study_rows(out: Path, names: Sequence[str]) -> list[GameRow]:
    """The games on disk between two of ``names`` (one row per game id)."""
    known = set(names)
    return [r for r in latest_rows(read_results(out)) if r.black in known and r.white in known]


def round_tasks(plan: Round, players: Sequence[NamedPlayer], rows: Sequence[GameRow],
                settings: RatingSettings, config: FrontierConfig) -> list[GameTask]:
    """``settings.round_pair_games`` more games of each pair of ``plan``,
    numbered on from the pair's games so far."""
    by_name = {p.name: p for p in players}
    counts: dict[frozenset[str], int] = {}
    for row in rows:
        key = frozenset((row.black, row.white))
        counts[key] = counts.get(key, 0) + 1
    tasks = []
    for a, b in plan.pairs:
        first, second = sorted((a, b))
        start = counts.get(frozenset((a, b)), 0)
        for k in range(start, start + settings.round_pair_games):
            tasks.append(pair_game(by_name[first], by_name[second], k, config))
    return tasks


def pair_game(first: NamedPlayer, second: NamedPlayer, k: int,
              config: FrontierConfig) -> GameTask:
    """Game ``k`` of a pair: ``first`` is Black in even games; games ``2m`` and
    ``2m + 1`` share their opening, drawn from the seed and the pair's names."""
    pair_seed = zlib.crc32(f"{config.seed}~{first.name}~{second.name}~{k // 2}".encode())
    opening = random_opening(config.rl.board_size, RATING_OPENING_MOVES, pair_seed)
    black, white = (first, second) if k % 2 == 0 else (second, first)
    return GameTask(game_id=f"{first.name}~{second.name}~{k:03d}", black=black.name,
                    white=white.name, black_spec=black.spec, white_spec=white.spec,
                    opening=opening, seed=pair_seed * 2 + k % 2)
