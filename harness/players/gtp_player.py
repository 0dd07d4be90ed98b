"""An external GTP engine (GNU Go, Pachi, Leela Zero, KataGo, another harness) as a player.

The engine's board is kept in step lazily: before each question the moves it
has not seen yet are sent as ``play`` commands, and if the game went
somewhere the engine cannot follow (a new game, an undo) the engine's board is
cleared and the whole game replayed. The same replay brings a crashed engine
back: it is restarted once per question, which is enough for the rare crash
and still fails fast on an engine that cannot run at all.

Engines that pass with dead stones on the board would make a Tromp-Taylor
count wrong, so after the opponent has passed the player asks for
``kgs-genmove_cleanup`` instead of ``genmove`` when the engine has it (the
engine then captures dead stones before passing back). GNU Go is also started
with ``--capture-all-dead`` by :func:`gnugo_player`.

Deadlines follow the time settings: once a game gives a per-move time, every
answer (``genmove`` and the commands that sync the board) is waited for
:func:`answer_deadline` seconds -- twice the byo-yomi sent, plus one, never
less than ``DEADLINE_FLOOR`` -- instead of the fixed default. A timeout is not
retried (an engine that hung once will hang again: one deadline, not two);
a crash is, once, on a restarted engine. An answer that names no point is a
:class:`~harness.players.base.NotAMove`, which the referee scores like an
illegal move.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.game.geometry import BLACK, gtp_to_point, point_to_gtp
from harness.game.position import Game
from harness.players.base import RESIGN, NotAMove
from harness.players.gtp_client import GTPClient, GTPEngineError, GTPTimeout, gnugo_command

CLEANUP = "kgs-genmove_cleanup"
# Seconds: the least an answer is waited for under a time limit. The first
# answer of a game also pays for starting the engine (an engine that loads a
# network takes seconds), and a loaded machine is slower than the byo-yomi.
DEADLINE_FLOOR = 10.0


def byo_yomi_seconds(move_time: float) -> int:
    """The whole seconds of byo-yomi sent to the engine for ``move_time`` per move."""
    return max(1, round(move_time))


def answer_deadline(move_time: float) -> float:
    """Seconds to wait for any answer of an engine given ``move_time`` per move."""
    return max(DEADLINE_FLOOR, 2.0 * byo_yomi_seconds(move_time) + 1.0)


class GTPPlayer:
    """A player whose moves come from an external program speaking GTP.

    ``argv`` is the command line as a list (no shell). ``timeout`` bounds every
    answer, ``move_timeout`` a ``genmove`` (default: ``timeout``), until a time
    limit (:meth:`set_limits`) replaces both by :func:`answer_deadline`. With
    ``cleanup`` (default) ``kgs-genmove_cleanup`` answers an opponent's pass.
    ``client`` replaces the process (anything with the :class:`GTPClient` methods).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str | None = None,
        timeout: float = 30.0,
        move_timeout: float | None = None,
        cleanup: bool = True,
        client: GTPClient | None = None,
    ):
        self.client = client or GTPClient(list(argv), timeout=timeout, name=name)
        self.name = name or self.client.name
        self.move_timeout = move_timeout if move_timeout is not None else timeout
        self.answer_timeout: float | None = None  # None: the client's own timeout
        self.cleanup = cleanup
        self.restarts = 0
        self._size, self._komi = 19, 7.5
        self._seen: list[tuple[int, int]] | None = None  # moves the engine has; None: board unknown
        self._move_time: float | None = None
        self._time_sent: float | None = None

    # --- Player protocol -------------------------------------------------------
    def reset(self, size: int, komi: float, rules: str) -> None:
        self._size, self._komi = size, komi
        self._seen = None

    def set_limits(self, *, move_time: float | None = None, playouts: int | None = None) -> None:
        if move_time is not None:
            self._move_time = move_time
            self.move_timeout = self.answer_timeout = answer_deadline(move_time)

    def select_move(self, game: Game) -> int:
        color = "b" if game.to_play == BLACK else "w"
        use_cleanup = self.cleanup and game.passes >= 1 and self._has(CLEANUP)
        command = f"{CLEANUP if use_cleanup else 'genmove'} {color}"
        reply = self._ask(game, command, self.move_timeout).strip().lower()
        if reply == "resign":
            return RESIGN
        try:
            move = gtp_to_point(reply, game.size)
        except ValueError:
            raise NotAMove(f"{self.name} answered {command!r} with {reply[:40]!r}") from None
        assert self._seen is not None
        self._seen.append((game.to_play, move))
        return move

    def final_score(self, game: Game) -> str | None:
        """The engine's own count of ``game`` (e.g. ``B+3.5``), or None if it has none."""
        if not self._has("final_score"):
            return None
        return self._ask(game, "final_score", self.move_timeout).strip()

    def close(self) -> None:
        self.client.close()

    # --- keeping the engine in step ----------------------------------------------
    def _has(self, command: str) -> bool:
        try:
            return self.client.known_command(command)
        except GTPEngineError:
            self._restart()
            return self.client.known_command(command)

    def _ask(self, game: Game, command: str, timeout: float) -> str:
        """Sync the engine with ``game``, then send ``command``; one restart on a crash."""
        try:
            self._sync(game)
            return self.client.send(command, timeout=timeout)
        except GTPTimeout:
            raise  # the engine was stopped; the next question restarts it
        except GTPEngineError:
            self._restart()
            self._sync(game)
            return self.client.send(command, timeout=timeout)

    def _restart(self) -> None:
        self.restarts += 1
        self.client.restart()
        self._seen = None
        self._time_sent = None

    def _sync(self, game: Game) -> None:
        seen = self._seen
        commands: list[str] = []
        if seen is None or game.moves[: len(seen)] != seen:
            commands += [f"boardsize {game.size}", "clear_board", f"komi {game.komi:g}"]
            seen = []
        if self._move_time is not None and self._move_time != self._time_sent:
            # Byo-yomi of move_time seconds for every single move.
            commands.append(f"time_settings 0 {byo_yomi_seconds(self._move_time)} 1")
            self._time_sent = self._move_time
        for color, move in game.moves[len(seen) :]:
            letter = "b" if color == BLACK else "w"
            commands.append(f"play {letter} {point_to_gtp(move, game.size)}")
        if commands:
            self._seen = None  # unknown until every command went through
            self.client.send_many(commands, self.answer_timeout)
        self._seen = list(game.moves)


def gnugo_player(level: int = 10, *, seed: int | None = None, name: str | None = None,
                 timeout: float = 60.0) -> GTPPlayer:
    """GNU Go with area (Chinese) rules, positional superko and dead stones captured
    before it passes, so that its games can be counted by Tromp-Taylor area."""
    argv = gnugo_command(
        level, seed=seed, chinese_rules=True, capture_all_dead=True, positional_superko=True
    )
    return GTPPlayer(argv, name=name or f"gnugo:{level}", timeout=timeout)
