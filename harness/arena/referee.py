"""The referee: two players, one game, the rules enforced and the result written down.

Players are untrusted, and one rule decides what a failure costs:

- a *move* that is not a legal move -- forbidden by the rules (an occupied
  point, suicide, superko) or naming no point at all (a GTP ``Z99``, raised
  as :class:`~harness.players.base.NotAMove`) -- is the player's own choice:
  a forfeit loss, rated like any loss, reason "played an illegal move";
- *no move* -- a crash, a timeout, an exception -- is a failure of the
  process, not of play: the game is lost by forfeit but marked ``crashed``,
  an error game that tournaments record and never rate (and can replay).

Neither ever stops a tournament.
The harness's own Tromp-Taylor count decides scored games; engines that keep
their own count (GNU Go and other GTP programs) are asked for ``final_score``
and their answer is kept beside ours when the two disagree, so a
disagreement about the dead stones is visible in the results, not silent.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game, IllegalMove, move_cap
from harness.game.result import GameResult, parse_result, result_from_score
from harness.players.base import RESIGN, NotAMove, Player, notify, reseed, set_limits

COLOR_NAMES = {BLACK: "Black", WHITE: "White"}


@dataclass
class PlayedGame:
    """A finished game as the referee saw it (the fields of an SGF game record)."""

    black: str
    white: str
    size: int
    komi: float
    rules: str
    result: GameResult
    reason: str  # how it ended, e.g. "two passes", "White resigned", "illegal move ..."
    moves: list[tuple[int, int]]  # (colour, point); pass = size*size
    game: Game = field(repr=False)
    date: str = ""
    seed: int | None = None
    harness_score: float | None = None  # Black - White - komi by our count, if counted
    engine_scores: dict[str, str] = field(default_factory=dict)  # engine -> its final_score
    seconds: float = 0.0
    # Each colour's own thinking: seconds inside select_move and the moves it chose
    # (openings excluded), so a player's pace can be set against its opponent's.
    clock: dict[int, float] = field(default_factory=lambda: {BLACK: 0.0, WHITE: 0.0})
    turns: dict[int, int] = field(default_factory=lambda: {BLACK: 0, WHITE: 0})
    sgf_path: Path | None = None
    crashed: bool = False  # a player failed (crash, timeout): an error game, not a loss

    @property
    def winner(self) -> int:
        return self.result.winner

    @property
    def scores_disagree(self) -> bool:
        """Whether some engine counted a different winner or margin than we did."""
        return any(_differs(text, self.result) for text in self.engine_scores.values())

    def summary(self) -> str:
        return f"{self.black} (B) vs {self.white} (W): {self.result.to_sgf()} ({self.reason})"


def play_game(
    black: Player,
    white: Player,
    *,
    size: int,
    komi: float,
    rules: str = "superko",
    max_moves: int | None = None,
    seed: int | None = None,
    scorer: Callable[[Game], float] | None = None,
    sgf_path: str | os.PathLike | None = None,
    move_time: float | None = None,
    playouts: int | None = None,
    opening: Sequence[int] = (),
) -> PlayedGame:
    """Play one game to the end and return what happened.

    ``max_moves`` (default twice the points,
    :func:`~harness.game.position.move_cap`) stops endless games, which are
    then scored as they stand. ``seed`` reseeds players that accept it
    (``reseed(seed)``), so a tournament game can be replayed. ``scorer``
    replaces the Tromp-Taylor count (returns Black - White - komi).
    ``move_time`` and ``playouts`` are handed to players that have a budget.
    ``opening`` moves (Black first, alternating) are played for the players
    before they take over, so that a tournament pair can start from varied
    positions; they are part of the record like any other move.
    """
    cap = move_cap(size, max_moves)
    started = time.perf_counter()
    game = Game(size, komi, rules)
    players = {BLACK: black, WHITE: white}
    listeners = list({id(p): p for p in (black, white)}.values())  # self-play: one object
    for offset, color in enumerate((BLACK, WHITE)):
        player = players[color]
        player.reset(size, komi, rules)
        set_limits(player, move_time=move_time, playouts=playouts)
        if seed is not None:
            reseed(player, 2 * seed + offset)

    for move in opening:
        game.play(int(move))  # an illegal opening is the caller's bug: IllegalMove
        for listener in listeners:
            notify(listener, game, int(move))

    result, reason, crashed = None, "", False
    clock, turns = {BLACK: 0.0, WHITE: 0.0}, {BLACK: 0, WHITE: 0}
    while result is None:
        if game.is_over:
            result, reason = _natural_end(game, scorer)
            break
        if len(game.moves) >= cap:
            result, reason = _score(game, scorer), f"move cap ({cap} moves) reached"
            break
        color = game.to_play
        player = players[color]
        thinking = time.perf_counter()
        try:
            # A copy: a player that scribbles on its argument cannot change the record.
            move = int(player.select_move(game.copy()))
        except NotAMove as exc:  # an answer, but no point: an illegal move
            result, reason = _illegal(color, player, exc)
            break
        except Exception as exc:  # no answer at all: an error game
            result = GameResult(3 - color, "forfeit")
            reason = f"{COLOR_NAMES[color]} ({player.name}) failed: {_one_line(exc)}"
            crashed = True
            break
        finally:
            clock[color] += time.perf_counter() - thinking
            turns[color] += 1
        if move == RESIGN:
            game.resign(color)
            result, reason = game.result(), f"{COLOR_NAMES[color]} resigned"
            break
        try:
            game.play(move)
        except IllegalMove as exc:
            result, reason = _illegal(color, player, exc)
            break
        for listener in listeners:
            try:
                notify(listener, game, move)
            except Exception as exc:
                loser = BLACK if listener is black else WHITE
                result = GameResult(3 - loser, "forfeit")
                reason = f"{COLOR_NAMES[loser]} ({listener.name}) failed: {_one_line(exc)}"
                crashed = True
                break

    played = PlayedGame(
        black=black.name,
        white=white.name,
        size=size,
        komi=komi,
        rules=rules,
        result=result,
        reason=reason,
        moves=list(game.moves),
        game=game,
        date=_dt.date.today().isoformat(),
        seed=seed,
        seconds=time.perf_counter() - started,
        clock=clock,
        turns=turns,
        crashed=crashed,
    )
    if result.kind in ("score", "draw") and rules != "nogo":
        played.harness_score = scorer(game) if scorer else game.score()
        played.engine_scores = _engine_scores(players, game)
    if sgf_path is not None:
        played.sgf_path = Path(sgf_path)
        write_played_sgf(played, played.sgf_path)
    return played


def _illegal(color: int, player: Player, exc: Exception) -> tuple[GameResult, str]:
    """The one outcome of an illegal move, whichever way it was illegal (module doc)."""
    reason = f"{COLOR_NAMES[color]} ({player.name}) played an illegal move: {_one_line(exc)}"
    return GameResult(3 - color, "forfeit"), reason


def _natural_end(game: Game, scorer: Callable[[Game], float] | None) -> tuple[GameResult, str]:
    if game.rules == "nogo":
        loser = game.to_play
        return game.result(), f"{COLOR_NAMES[loser]} has no legal move"
    return _score(game, scorer), "two passes"


def _score(game: Game, scorer: Callable[[Game], float] | None) -> GameResult:
    if game.rules == "nogo":
        # Cut short: nobody has lost yet, so nobody has won.
        return GameResult(0, "void")
    if scorer is None:
        return game.result()
    return result_from_score(scorer(game))


def _engine_scores(players: dict[int, Player], game: Game) -> dict[str, str]:
    """Each engine's own count of the final position (engines that have one)."""
    scores: dict[str, str] = {}
    for player in {id(p): p for p in players.values()}.values():
        ask = getattr(player, "final_score", None)
        if ask is None:
            continue
        try:
            text = ask(game)
        except Exception as exc:  # a count we cannot get is no forfeit
            text = f"? {_one_line(exc)}"
        if text:
            scores[player.name] = text
    return scores


def _differs(engine_text: str, ours: GameResult) -> bool:
    theirs = parse_result(engine_text)
    if not theirs.known:
        return True
    if theirs.winner != ours.winner:
        return True
    if theirs.margin is None or ours.margin is None:
        return False
    return abs(theirs.margin - ours.margin) > 1e-6


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


# --- SGF ---------------------------------------------------------------------


def game_comment(played: PlayedGame) -> str:
    """How the game ended, and both counts when an engine disagreed with ours."""
    parts = [played.reason]
    if played.harness_score is not None and played.scores_disagree:
        ours = result_from_score(played.harness_score).to_sgf()
        theirs = ", ".join(f"{k}: {v}" for k, v in played.engine_scores.items())
        parts.append(f"Tromp-Taylor count {ours}; engine counts {theirs}")
    return "; ".join(parts)


def write_played_sgf(played: PlayedGame, path: str | os.PathLike) -> Path:
    """The game as SGF (names, komi, rules, date, result, how it ended), written atomically."""
    from harness.sgf import write_sgf

    return write_sgf(
        played.game,
        path,
        result=played.result,
        black=played.black,
        white=played.white,
        date=played.date,
        properties={"GC": game_comment(played)},
    )
