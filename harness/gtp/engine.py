"""A GTP version 2 engine around any player, so GUIs and servers can use the harness.

:class:`GTPEngine` is pure logic: one command line in, one response out
(:meth:`GTPEngine.handle`), which is how the tests drive it. :func:`serve`
wires it to stdin/stdout. Bad input never stops the engine: every malformed,
unknown or failing command is answered ``? message`` and the next line is read.

Input follows the GTP 2 preprocessing rules: control characters other than
tab and newline are dropped (so ``\\r\\n`` works), tabs become spaces, ``#``
starts a comment, blank lines are ignored, and an optional numeric id is
echoed in the answer (``=id`` or ``?id``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from harness import __version__
from harness.game import board as K
from harness.game.geometry import BLACK, COLUMNS, EMPTY, MAX_SIZE, MIN_SIZE, WHITE, point_to_gtp
from harness.game.geometry import gtp_to_point as _gtp_to_point
from harness.game.position import Game, IllegalMove
from harness.players.base import RESIGN, Player, notify, set_limits

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_COLORS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


class GTPFailure(Exception):
    """A command that cannot be carried out; its message is the ``?`` reply."""


@dataclass
class TimeControl:
    """What the controller told us about the clock (``time_settings``/``time_left``)."""

    main_time: float = 0.0
    byo_yomi_time: float = 0.0
    byo_yomi_stones: int = 0
    left: dict[int, tuple[float, int]] | None = None  # colour -> (seconds, stones)

    @property
    def unlimited(self) -> bool:
        # GTP: byo-yomi time > 0 with 0 stones means no time limit.
        return self.byo_yomi_time > 0 and self.byo_yomi_stones == 0

    def move_budget(self, color: int, moves_played: int, points: int) -> float | None:
        """Seconds to spend on the next move, or None when the clock is no concern."""
        if self.unlimited or (self.main_time == 0 and self.byo_yomi_time == 0 and not self.left):
            return None
        seconds, stones = (self.left or {}).get(color, (self.main_time, 0))
        if stones > 0:  # in byo-yomi: share the period over its stones
            budget = seconds / stones
        else:
            # Main time: spread over the moves we still expect to play, keeping
            # the first byo-yomi period untouched as a safety net.
            expected = max(points // 2 - moves_played // 2, 10)
            budget = seconds / expected
            if self.byo_yomi_stones > 0:
                budget += self.byo_yomi_time / self.byo_yomi_stones
        return max(0.05, 0.8 * budget)


class GTPEngine:
    """Answers GTP commands for one player on one board.

    ``player`` is any :class:`~harness.players.base.Player`; one with a
    ``board_size`` attribute (a network) refuses every other ``boardsize``.
    ``name`` is what ``name`` reports (the player's own name goes in ``version``).
    """

    def __init__(
        self,
        player: Player,
        *,
        size: int = 19,
        komi: float = 7.5,
        rules: str = "superko",
        name: str = "harness",
    ):
        self.player = player
        self.name = name
        self.rules = rules
        self.komi = komi
        self.clock = TimeControl()
        self.finished = False  # set by ``quit``
        # A network plays only the board size it was trained for.
        self.fixed_size: int | None = getattr(player, "board_size", None)
        self.game = self._new_game(self.fixed_size or size)
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda a: "2",
            "name": lambda a: self.name,
            "version": lambda a: f"{__version__} ({player.name})",
            "known_command": self._known_command,
            "list_commands": lambda a: "\n".join(self.commands),
            "quit": self._quit,
            "boardsize": self._boardsize,
            "clear_board": self._clear_board,
            "komi": self._komi,
            "play": self._play,
            "genmove": self._genmove,
            "kgs-genmove_cleanup": self._genmove_cleanup,
            "reg_genmove": self._reg_genmove,
            "undo": self._undo,
            "showboard": self._showboard,
            "final_score": self._final_score,
            "final_status_list": self._final_status_list,
            "time_settings": self._time_settings,
            "time_left": self._time_left,
        }

    # --- the protocol ------------------------------------------------------
    def handle(self, line: str) -> str | None:
        """The full response to one input line (ending in a blank line), or None
        for lines GTP says to ignore (blank lines and comments)."""
        text = _CONTROL.sub("", line).replace("\t", " ")
        text = text.split("#", 1)[0].strip()
        if not text:
            return None
        words = text.split()
        ident = ""
        if words[0].isdigit():
            ident = words.pop(0)
        if not words:
            return f"?{ident} empty command\n\n"
        command, args = words[0], words[1:]
        handler = self.commands.get(command)
        if handler is None:
            return f"?{ident} unknown command\n\n"
        try:
            answer = handler(args)
        except GTPFailure as exc:
            return f"?{ident} {exc}\n\n"
        except Exception as exc:  # an engine bug must not kill the session
            message = " ".join(str(exc).split()) or type(exc).__name__
            return f"?{ident} internal error: {message}\n\n"
        return f"={ident} {answer}\n\n"

    # --- setup -------------------------------------------------------------
    def _new_game(self, size: int) -> Game:
        self.player.reset(size, self.komi, self.rules)
        self.clock.left = None
        return Game(size, self.komi, self.rules)

    def _known_command(self, args: list[str]) -> str:
        _arity(args, 1)
        return "true" if args[0] in self.commands else "false"

    def _quit(self, args: list[str]) -> str:
        self.finished = True
        return ""

    def _boardsize(self, args: list[str]) -> str:
        _arity(args, 1)
        size = _int(args[0], "board size")
        if not MIN_SIZE <= size <= MAX_SIZE or self.fixed_size not in (None, size):
            raise GTPFailure("unacceptable size")
        self.game = self._new_game(size)
        return ""

    def _clear_board(self, args: list[str]) -> str:
        self.game = self._new_game(self.game.size)
        return ""

    def _komi(self, args: list[str]) -> str:
        _arity(args, 1)
        try:
            komi = float(args[0])
        except ValueError:
            raise GTPFailure("syntax error: komi not a float") from None
        self.komi = komi
        self.game.komi = komi
        self.player.reset(self.game.size, komi, self.rules)
        return ""

    def _time_settings(self, args: list[str]) -> str:
        _arity(args, 3)
        self.clock = TimeControl(
            main_time=_float(args[0], "main time"),
            byo_yomi_time=_float(args[1], "byo-yomi time"),
            byo_yomi_stones=_int(args[2], "byo-yomi stones"),
        )
        return ""

    def _time_left(self, args: list[str]) -> str:
        _arity(args, 3)
        color = _color(args[0])
        left = dict(self.clock.left or {})
        left[color] = (_float(args[1], "time"), _int(args[2], "stones"))
        self.clock.left = left
        return ""

    # --- moves -------------------------------------------------------------
    def _play(self, args: list[str]) -> str:
        _arity(args, 2)
        color = _color(args[0])
        move = _vertex(args[1], self.game.size)
        try:
            play_on(self.game, move, color)
        except IllegalMove:
            raise GTPFailure("illegal move") from None
        notify(self.player, self.game, move)
        return ""

    def _choose(self, args: list[str], *, allow_resign: bool) -> int:
        _arity(args, 1)
        color = _color(args[0])
        if self.game.to_play != color:
            self.game.to_play = color
        if self.game.rules == "nogo" and not self.game.legal_moves().any():
            return RESIGN  # no legal move left: the game is lost
        budget = self.clock.move_budget(color, len(self.game.moves), self.game.size**2)
        if budget is not None:
            set_limits(self.player, move_time=budget)
        search = _game_for_player(self.game)
        move = int(self.player.select_move(search))
        if move == RESIGN and not allow_resign:
            move = self.game.pass_move
        if move != RESIGN:
            reason = self.game.check(move, color)
            if reason != "legal":
                raise GTPFailure(
                    f"player {self.player.name} chose an illegal move "
                    f"{_vertex_text(move, self.game.size)} ({reason})"
                )
        return move

    def _commit(self, move: int) -> str:
        if move == RESIGN:
            return "resign"
        play_on(self.game, move, self.game.to_play)
        notify(self.player, self.game, move)
        return point_to_gtp(move, self.game.size)

    def _genmove(self, args: list[str]) -> str:
        return self._commit(self._choose(args, allow_resign=True))

    def _genmove_cleanup(self, args: list[str]) -> str:
        # Tromp-Taylor players already capture dead stones before passing, so
        # cleanup is an ordinary move that never resigns.
        return self._commit(self._choose(args, allow_resign=False))

    def _reg_genmove(self, args: list[str]) -> str:
        move = self._choose(args, allow_resign=True)
        return "resign" if move == RESIGN else point_to_gtp(move, self.game.size)

    def _undo(self, args: list[str]) -> str:
        if not self.game.moves:
            raise GTPFailure("cannot undo")
        moves = self.game.moves[:-1]
        self.game = replay(self.game.size, self.komi, self.rules, moves)
        self.player.reset(self.game.size, self.komi, self.rules)
        return ""

    # --- reports -----------------------------------------------------------
    def _showboard(self, args: list[str]) -> str:
        return "\n" + board_diagram(self.game)

    def _final_score(self, args: list[str]) -> str:
        if self.game.rules == "nogo":
            raise GTPFailure("cannot score NoGo")
        return self.game.result().to_sgf()

    def _final_status_list(self, args: list[str]) -> str:
        _arity(args, 1)
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GTPFailure("syntax error: status must be alive, dead or seki")
        if status != "alive":
            return ""  # Tromp-Taylor: every stone on the board counts as alive
        stones = [p for p in range(self.game.size**2) if self.game.stones[p] != EMPTY]
        return " ".join(point_to_gtp(p, self.game.size) for p in stones)


# --- helpers ------------------------------------------------------------------


def play_on(game: Game, move: int, color: int) -> None:
    """Play ``move`` even after two passes: GTP controllers continue a passed-out
    game for dead-stone cleanup (KGS), which :class:`Game` would refuse."""
    if game.rules != "nogo" and game.passes >= 2 and not game.resigned:
        game.boards.meta[0, K.PASSES] = 0
    game.play(move, color)


def replay(size: int, komi: float, rules: str, moves: list[tuple[int, int]]) -> Game:
    """A fresh game with ``moves`` played (two passes in the middle allowed)."""
    game = Game(size, komi, rules)
    for color, move in moves:
        play_on(game, move, color)
    return game


def _game_for_player(game: Game) -> Game:
    """The game as a player may see it: a passed-out game has its pass count
    reset so that the player searches on instead of treating it as over."""
    if game.rules != "nogo" and game.passes >= 2:
        twin = game.copy()
        twin.boards.meta[0, K.PASSES] = 0
        return twin
    return game


def board_diagram(game: Game) -> str:
    """A text board like GNU Go's: columns A-T without I, row 1 at the bottom."""
    size = game.size
    letters = "   " + " ".join(COLUMNS[:size])
    chars = {EMPTY: ".", BLACK: "X", WHITE: "O"}
    lines = [letters]
    for row in range(size):
        number = size - row
        cells = " ".join(chars[int(v)] for v in game.board[row])
        lines.append(f"{number:2d} {cells} {number}")
    lines.append(letters)
    black_caps, white_caps = game.captures
    lines.append(f"Black (X) captured {black_caps}, White (O) captured {white_caps}")
    return "\n".join(lines)


def _arity(args: list[str], n: int) -> None:
    if len(args) < n:
        raise GTPFailure(f"syntax error: expected {n} argument{'s' if n > 1 else ''}")


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise GTPFailure(f"syntax error: {what} not an integer") from None


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise GTPFailure(f"syntax error: {what} not a number") from None


def _color(text: str) -> int:
    color = _COLORS.get(text.lower())
    if color is None:
        raise GTPFailure("syntax error: invalid color")
    return color


def _vertex(text: str, size: int) -> int:
    try:
        return _gtp_to_point(text, size)
    except ValueError:
        raise GTPFailure("syntax error: invalid vertex") from None


def _vertex_text(move: int, size: int) -> str:
    return point_to_gtp(move, size) if 0 <= move <= size * size else str(move)


def serve(engine: GTPEngine, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Read commands until ``quit`` or end of input, answering each at once."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    for line in stdin:
        response = engine.handle(line)
        if response is None:
            continue
        stdout.write(response)
        stdout.flush()
        if engine.finished:
            break
    return 0
