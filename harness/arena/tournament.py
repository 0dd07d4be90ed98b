"""Resumable round-robin tournaments between any players, fixed or adaptive.

A fixed tournament plays ``games_per_pair`` games in every pair. An adaptive
one (``until_separated``, or ``sprt`` for a two-player match) plays that
round robin as its first round and then further rounds chosen by
:mod:`harness.arena.adaptive` until the ranking is resolved, the SPRT
decides, or a cap is reached.

Every finished game is appended at once to ``results.jsonl`` (one JSON
object a line, flushed and fsynced) and its SGF saved, and the standings so
far (games played, each player's Elo, the pair's score) go to the live
metrics (``metrics.jsonl`` and TensorBoard events, :mod:`harness.metrics`),
one step per game played, so a killed tournament loses
at most the games in flight; rerunning the same command plays only the games
whose ids are missing. Games run on :class:`~harness.arena.games.GameWorker`
processes (local, or Ray actors with ``backend = "ray"``) through
:mod:`harness.distributed`; only the parent writes (:mod:`harness.arena.games`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from harness.arena.games import (
    RESULTS_FILE,
    GameRow,
    GameSession,
    GameTask,
    append_result,
    latest_rows,
    outcomes_of,
    random_opening,
    read_results,
)
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
from harness.metrics import MetricsLog, MetricsSettings
from harness.players.spec import PlayerSpec, parse_player


@dataclass(frozen=True)
class NamedPlayer:
    """A player of a tournament: its spec, and its name ("" names it by its label)."""

    name: str
    spec: PlayerSpec


@dataclass(frozen=True, kw_only=True)
class TournamentConfig(PlaySettings, RoundSettings, MetricsSettings):
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
    standings = LiveStandings(config, read_results(out))
    with GameSession(config, size=len(tasks)) as session:
        while tasks:
            scheduled += tasks
            todo = pending(config, tasks)
            bar.total = len(scheduled)
            bar.update(len(tasks) - len(todo))
            for row in session.play(todo):
                standings.add(row)  # first: a kill between the two replays the game
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


class LiveStandings:
    """The live metrics of a tournament: one step per game played (every
    result row, errors included), with the games played, rated and errored,
    every player's Elo so far (``elo/NAME``, anchored as the ranking is) and
    the finished game's pair score (``score/A vs B``, A's points per rated game
    between them, A the player listed first)."""

    def __init__(self, config: TournamentConfig, rows: Sequence[GameRow]):
        # Every row on disk, a replaced error game's too: the step keeps counting up.
        self.config = config
        self.names = [name for name, _ in config.named_players()]
        self.rows = list(rows)
        self.log = MetricsLog.of(config.out, config)

    def add(self, row: GameRow) -> None:
        self.rows.append(row)
        if not self.log.enabled:
            return
        latest = latest_rows(self.rows)
        outcomes = outcomes_of(latest)
        values: dict[str, float] = {
            "games/played": len(latest), "games/rated": len(outcomes),
            "games/errors": sum(1 for r in latest if r.error is not None)}
        if outcomes:
            ratings = bradley_terry(outcomes, self.names, anchor=self.config.anchor)
            values.update({f"elo/{_tag_name(n)}": float(e)
                           for n, e in zip(self.names, ratings.elo, strict=True)})
        first, second = sorted((row.black, row.white), key=self.names.index)
        pair = [o for o in outcomes if {o.black, o.white} == {first, second}]
        if pair:
            points = sum(o.score if o.black == first else 1.0 - o.score for o in pair)
            values[f"score/{_tag_name(first)} vs {_tag_name(second)}"] = points / len(pair)
        self.log.write(len(self.rows), values)


def _tag_name(name: str) -> str:
    """A player's name in a metric's name: TensorBoard groups tags on ``/``."""
    return name.replace("/", "|")


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
