"""A self-play frontier study: runs to the largest savepoint, one pooled rating, the report.

Layout of ``DIR``: ``runs/MODEL/`` (one ``harness rl`` run per model),
``rating/`` (``results.jsonl`` and the SGF of every rating game),
``config.json``, ``ratings.csv`` (every rated player: Elo and its interval),
``points.csv`` (every model at every savepoint: the generation that stands
for it and its rating), ``test_time.csv`` (each model's last savepoint at
each playout budget) and what
:func:`harness.report.frontier.write_frontier_report` writes, with metric
``elo``: ``frontier.csv``, ``fits.csv``, ``frontier-elo.png`` and
``report.md``, here with the rating's description, the test-time table and
the exchange rate; the pooled rating between rounds goes to the live metrics
(``metrics.jsonl`` and TensorBoard events, :mod:`harness.metrics`). Each step
skips what is done: a rerun finishes a killed
study, and a finished one plays no game and only redraws.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.arena.tournament import NamedPlayer
from harness.files import atomic_json, atomic_write, csv_text
from harness.frontier.config import ELO, FrontierConfig, family_of, savepoint_flops
from harness.frontier.plan import Network, flops_label
from harness.frontier.rating import STOP_REASONS
from harness.frontier.result import StudyResult
from harness.frontier.selfplay_runs import Generation, ensure_run, select_generations
from harness.metrics import MetricsLog
from harness.nets.plugins import directory_name
from harness.players.spec import PlayerSpec
from harness.stats import FrontierPoint
from harness.stats.exchange import ExchangeRate, Observation, exchange_rate

if TYPE_CHECKING:
    from harness.frontier.rating import PoolRating
    from harness.frontier.rating_games import PoolResult

RATINGS_COLUMNS = ("player", "family", "model", "generation", "playouts", "flops", "elo",
                   "low", "high", "games")
POINTS_COLUMNS = ("family", "model", "params", "forward_flops", "savepoint_flops", "generation",
                  "player", "flops", "metric", "value", "low", "high", "games")
TEST_TIME_COLUMNS = ("family", "model", "generation", "flops", "playouts", "player", "elo",
                     "low", "high", "games")


@dataclass(frozen=True)
class Run:
    """One model of the study, what it costs, and its run's generations."""

    network: Network
    generations: list[Generation]


@dataclass(frozen=True)
class Rated:
    """A network player of the pooled rating: a generation at a search budget."""

    name: str
    network: Network
    generation: Generation
    playouts: int


def player_name(model: str, generation: int, playouts: int) -> str:
    """``a0.tiny-g0012-p16``: the model, the generation and the playouts per move."""
    return f"{directory_name(model)}-g{generation:04d}-p{playouts}"


def run_selfplay_frontier(config: FrontierConfig, out: Path, *, progress: bool,
                          log: Callable[[str], None]) -> StudyResult:
    """Run, rate and report the self-play study ``config`` in ``out``."""
    from harness.frontier.rating_games import play_pool
    from harness.report.frontier import write_frontier_report

    flops = savepoint_flops(config)
    log(f"frontier: {len(config.models)} models x {len(flops)} savepoints from "
        f"{flops_label(flops[0])} to {flops_label(flops[-1])} training and self-play FLOPs "
        f"(self-play on {config.rl.board_size}x{config.rl.board_size}) in {out}")
    out.mkdir(parents=True, exist_ok=True)
    atomic_json(out / "config.json", dataclasses.asdict(config))
    anchors, left_out = available_anchors(config, log)  # before any run: the first must play
    runs = [measured_run(config, model, ensure_run(config, model, out / "runs", flops[-1],
                                                   log=log), log) for model in config.models]
    savepoints = {r.network.model: [r.generations[i] for i in
                                    select_generations([g.flops for g in r.generations], flops)]
                  for r in runs}
    nets = [r.network for r in runs]
    rated = network_players(config, nets, savepoints)
    players = [anchors[0], *(NamedPlayer(r.name, _mcts(r)) for r in rated), *anchors[1:]]
    pool = play_pool(config, players, out / "rating", progress=progress, log=log,
                     metrics=MetricsLog.of(out, config))
    test_time = [r for r in rated if r.generation is savepoints[r.network.model][-1]
                 and r.playouts in config.rating.test_playouts]
    points = write_tables(config, out, flops, savepoints, players, rated, test_time, pool)
    rate = _exchange(config, pool.rating, rated, test_time)
    sections = _sections(config, pool, anchors, left_out, test_time, rate)
    findings = write_frontier_report(points, out, seed=config.seed, sections=sections,
                                     compute="training + self-play compute (FLOPs)")
    return StudyResult(out / "report.md", findings)


def write_tables(config: FrontierConfig, out: Path, flops: tuple[float, ...],
                 savepoints: dict[str, list[Generation]], players: list[NamedPlayer],
                 rated: list[Rated], test_time: list[Rated],
                 pool: PoolResult) -> list[FrontierPoint]:
    """``ratings.csv``, ``points.csv`` and ``test_time.csv``; the frontier's
    points (one per savepoint player: savepoints that share a generation share
    its point)."""
    games = _games_per_player(pool.rows)
    by_name = {r.name: r for r in rated}
    row_of = pool.rating.of
    atomic_write(out / "ratings.csv", csv_text(RATINGS_COLUMNS, [
        [p.name, *_player_columns(by_name.get(p.name)), *row_of(p.name), games.get(p.name, 0)]
        for p in players]))
    point_rows, frontier_points = [], {}
    for model, chosen in savepoints.items():
        for s, g in zip(flops, chosen, strict=True):
            r = by_name[player_name(model, g.generation, config.rating.eval_playouts)]
            n = r.network
            value, low, high = row_of(r.name)
            point_rows.append([n.family, n.model, n.params, n.forward_flops, s, g.generation,
                               r.name, g.flops, ELO, value, low, high, games.get(r.name, 0)])
            frontier_points[r.name] = FrontierPoint(n.family, n.model, n.params,
                                                    float(g.flops), ELO, value, low, high)
    atomic_write(out / "points.csv", csv_text(POINTS_COLUMNS, point_rows))
    atomic_write(out / "test_time.csv", csv_text(TEST_TIME_COLUMNS, [
        [r.network.family, r.network.model, r.generation.generation, r.generation.flops,
         r.playouts, r.name, *row_of(r.name), games.get(r.name, 0)] for r in test_time]))
    return list(frontier_points.values())


def measured_run(config: FrontierConfig, model: str, generations: list[Generation],
                 log: Callable[[str], None]) -> Run:
    """``model``'s run with the network's cost, read from its generation 0."""
    from harness.nets import load_model
    from harness.nets.summary import flops_per_position

    net = load_model(generations[0].checkpoint)
    forward, params = flops_per_position(net), int(net.count_params())
    log(f"{model}: {forward:,} FLOPs per position forward, {params:,} parameters, "
        f"{len(generations) - 1} generations to {generations[-1].flops:.3g} FLOPs")
    return Run(Network(model, family_of(config, model), forward, params), generations)


def available_anchors(config: FrontierConfig, log: Callable[[str], None]
                      ) -> tuple[list[NamedPlayer], list[str]]:
    """The anchors that can play here, and a note for each that cannot; the
    first anchor fixes the scale, so it must be available."""
    from harness.config_io import ConfigError
    from harness.players.base import PlayerSpecError
    from harness.players.spec import check_available, parse_player

    kept, left_out = [], []
    for i, text in enumerate(config.rating.anchors):
        spec = parse_player(text)
        try:
            check_available(spec)
        except PlayerSpecError as e:
            if i == 0:
                raise ConfigError(f"rating: the first anchor fixes the scale, and {e}") from None
            left_out.append(f"`{text}` ({e})")
            log(f"rating: anchor {text} left out: {e}")
            continue
        kept.append(NamedPlayer(spec.label, spec))
    return kept, left_out


def network_players(config: FrontierConfig, nets: list[Network],
                    savepoints: dict[str, list[Generation]]) -> list[Rated]:
    """Every savepoint at the evaluation search and each model's last at every
    test-time budget, one player per (generation, playouts), by compute then
    playouts: the order the first round pairs neighbours in."""
    rated: dict[str, Rated] = {}
    for n in nets:
        wanted = [(g, config.rating.eval_playouts) for g in savepoints[n.model]]
        wanted += [(savepoints[n.model][-1], p) for p in config.rating.test_playouts]
        for g, p in wanted:
            name = player_name(n.model, g.generation, p)
            rated.setdefault(name, Rated(name, n, g, p))
    return sorted(rated.values(), key=lambda r: (r.generation.flops, r.playouts, r.name))


def _mcts(r: Rated) -> PlayerSpec:
    return PlayerSpec("mcts", model=r.generation.checkpoint, playouts=r.playouts)


def _player_columns(r: Rated | None) -> list[object]:
    if r is None:  # an anchor
        return ["", "", "", "", ""]
    return [r.network.family, r.network.model, r.generation.generation, r.playouts,
            r.generation.flops]


def _games_per_player(rows: list) -> dict[str, int]:
    """Rated games (not error games) of each player."""
    games: dict[str, int] = {}
    for row in rows:
        if row.error is None:
            for name in (row.black, row.white):
                games[name] = games.get(name, 0) + 1
    return games


def _exchange(config: FrontierConfig, rating: PoolRating, rated: list[Rated],
              test_time: list[Rated]) -> ExchangeRate:
    """Elo per decade of compute (savepoints at the evaluation search) against
    Elo per decade of playouts (the last savepoints)."""
    index = {name: i for i, name in enumerate(rating.players)}
    train = [Observation(index[r.name], r.network.model, math.log10(r.generation.flops))
             for r in rated if r.playouts == config.rating.eval_playouts]
    search = [Observation(index[r.name], r.network.model, math.log10(r.playouts))
              for r in test_time]
    return exchange_rate(rating.ratings.elo, rating.ratings.covariance, train, search,
                         seed=config.seed)


def _sections(config: FrontierConfig, pool: PoolResult, anchors: list[NamedPlayer],
              left_out: list[str], test_time: list[Rated], rate: ExchangeRate) -> list[str]:
    from harness.report.search_table import PlayoutCell, rating_lines, search_lines

    lines = rating_lines(
        eval_playouts=config.rating.eval_playouts, anchor=anchors[0].name,
        anchor_elo=config.rating.anchor_elo, anchors=[a.name for a in anchors],
        left_out=left_out, games=len(pool.rows), rounds=pool.rounds,
        target=config.rating.target_halfwidth, stopped=STOP_REASONS[pool.status])
    cells = [PlayoutCell(f"{r.network.model} gen {r.generation.generation}",
                         float(r.generation.flops), r.playouts, *pool.rating.of(r.name))
             for r in test_time]
    return lines + search_lines(cells, rate)
