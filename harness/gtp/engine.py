"""A GTP version 2 engine around any player, so GUIs and servers can use the harness.

:class:`GTPEngine` is pure logic: one command line in, one response out
(:meth:`GTPEngine.handle`), which is how the tests drive it. :func:`serve`
wires it to stdin/stdout. Bad input never stops the engine: every malformed,
unknown or failing command is answered ``? message`` and the next line is read.

Input follows the GTP 2 preprocessing rules: control characters other than
tab and newline are dropped (so ``\\r\\n`` works), tabs become spaces, ``#``
starts a comment, blank lines are ignored, and an optional numeric id is
echoed in the answer (``=id`` or ``?id``).

Beyond GTP 2: ``loadsgf``, the handicap commands (``handicap.py``), KGS
time settings (``timecontrol.py``) and, for players with a tree search, the
analysis commands GUIs use (``extensions.py``). Those stream: :func:`serve`
reads input on a thread (``channel.py``) so that ``lz-analyze`` stops when
the next command arrives.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import TextIO

from harness import __version__
from harness.files import read_regular_file
from harness.game import board as K
from harness.game.geometry import BLACK, COLUMNS, EMPTY, MAX_SIZE, MIN_SIZE, WHITE, point_to_gtp
from harness.game.geometry import gtp_to_point as _gtp_to_point
from harness.game.position import DEFAULT_KOMI, Game, IllegalMove
from harness.gtp.analyzer import can_analyze, game_for_player
from harness.gtp.channel import InputChannel
from harness.gtp.extensions import AnalysisCommands, Collected, Live, Output
from harness.gtp.handicap import fixed_handicap_points, max_fixed_handicap
from harness.gtp.timecontrol import (
    TimeControl,
    TimeSettingsError,
    parse_kgs_time_settings,
    parse_time_settings,
)
from harness.players.base import RESIGN, Player, notify, set_limits

__all__ = ["GTPEngine", "GTPFailure", "TimeControl", "serve"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_COLORS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


class GTPFailure(Exception):
    """A command that cannot be carried out; its message is the ``?`` reply."""


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
        komi: float = DEFAULT_KOMI,
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
            "kgs-time_settings": self._kgs_time_settings,
            "loadsgf": self._loadsgf,
            "fixed_handicap": self._fixed_handicap,
            "place_free_handicap": self._fixed_handicap,
            "set_free_handicap": self._set_free_handicap,
        }
        # Streaming commands write their own answer (``=``, lines, blank line).
        self.streaming: dict[str, Callable[[list[str], str, Output], None]] = {}
        if can_analyze(player):
            extensions = AnalysisCommands(self)
            self.streaming = extensions.streaming()
            self.commands.update(extensions.plain())
            self.commands.update(dict.fromkeys(self.streaming, self._streaming_only))

    failure = GTPFailure  # what extension handlers raise for a ``?`` answer

    # --- the protocol ------------------------------------------------------
    def handle(self, line: str, output: Output | None = None) -> str | None:
        """The full response to one input line (ending in a blank line), or None
        for lines GTP says to ignore (blank lines and comments).

        A streaming command (``lz-analyze``) writes its answer to ``output``
        as it goes and returns ""; without ``output`` it runs one interval
        and its whole answer is returned."""
        text = _CONTROL.sub("", line).replace("\t", " ")
        text = text.split("#", 1)[0].strip()
        if not text:
            return None
        words = text.split()
        ident = ""
        if ascii_digits(words[0]):
            ident = words.pop(0)
        if not words:
            return f"?{ident} empty command\n\n"
        command, args = words[0], words[1:]
        handler = self.commands.get(command)
        if handler is None:
            return f"?{ident} unknown command\n\n"
        try:
            if command in self.streaming:
                sink = output or Collected()
                self.streaming[command](args, ident, sink)
                return sink.text if isinstance(sink, Collected) else ""
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
        self.clock = replace(self.clock, left=())
        return Game(size, self.komi, self.rules)

    def _streaming_only(self, args: list[str]) -> str:
        raise GTPFailure("internal error: streaming command without a handler")

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
        if not math.isfinite(komi):
            raise GTPFailure("syntax error: komi must be a finite number")
        self.komi = komi
        self.game.komi = komi
        self.player.reset(self.game.size, komi, self.rules)
        return ""

    def _time_settings(self, args: list[str]) -> str:
        try:
            self.clock = parse_time_settings(args)
        except TimeSettingsError as exc:
            raise GTPFailure(str(exc)) from None
        return ""

    def _kgs_time_settings(self, args: list[str]) -> str:
        try:
            self.clock = parse_kgs_time_settings(args)
        except TimeSettingsError as exc:
            raise GTPFailure(str(exc)) from None
        return ""

    def _time_left(self, args: list[str]) -> str:
        _arity(args, 3)
        color = _color(args[0])
        secs = _float(args[1], "time")
        if not math.isfinite(secs):
            raise GTPFailure("syntax error: time must be a finite number")
        stones = _int(args[2], "stones")
        if stones < 0:
            raise GTPFailure("syntax error: stones must not be negative")
        # A controller may report a clock already overrun; that is no time left.
        self.clock = self.clock.with_time_left(color, max(secs, 0.0), stones)
        return ""

    # --- positions: files and handicap -----------------------------------------
    def _loadsgf(self, args: list[str]) -> str:
        """``loadsgf FILE [MOVE]``: the game of FILE before its move number MOVE
        (all of it without MOVE), with its board size and komi."""
        from harness.sgf.record import parse_sgf_bytes
        from harness.sgf.replay import ReplayError
        from harness.sgf.replay import replay as replay_record
        from harness.sgf.sources import DEFAULT_MAX_GAME_BYTES

        _arity(args, 1)
        upto = _int(args[1], "move number") if len(args) > 1 else None
        try:
            data = read_regular_file(args[0], DEFAULT_MAX_GAME_BYTES)
        except OSError:
            raise GTPFailure("cannot load file") from None
        except ValueError as exc:
            raise GTPFailure(f"cannot load file: {exc}") from None
        record = parse_sgf_bytes(data, args[0])[0]
        if record.reject is not None:
            raise GTPFailure(f"cannot load file: {record.reject}")
        if self.fixed_size not in (None, record.size):
            raise GTPFailure("unacceptable size")
        if upto is not None:
            kept = max(upto - 1, 0)
            events = [e for e in record.setup_events if e.before_move <= kept]
            record = replace(record, moves=record.moves[:kept], setup_events=events)
        try:
            game = replay_record(record, self.rules)
        except ReplayError as exc:
            raise GTPFailure(f"cannot load file: {exc}") from None
        game.resigned = 0
        self.komi = record.komi
        self.player.reset(game.size, self.komi, self.rules)
        self.game = game
        return ""

    def _require_empty_board(self) -> None:
        if self.game.moves or (self.game.stones != EMPTY).any():
            raise GTPFailure("board not empty")

    def _place_handicap(self, points: list[int]) -> str:
        self.game.setup(black=points)
        self.game.to_play = WHITE
        self.player.reset(self.game.size, self.komi, self.rules)
        return " ".join(point_to_gtp(p, self.game.size) for p in points)

    def _fixed_handicap(self, args: list[str]) -> str:
        """``fixed_handicap N`` and ``place_free_handicap N`` (which may choose
        any points; the fixed ones are a good choice)."""
        _arity(args, 1)
        stones = _int(args[0], "number of stones")
        self._require_empty_board()
        if not 2 <= stones <= max_fixed_handicap(self.game.size):
            raise GTPFailure("invalid number of stones")
        return self._place_handicap(fixed_handicap_points(self.game.size, stones))

    def _set_free_handicap(self, args: list[str]) -> str:
        self._require_empty_board()
        size = self.game.size
        try:
            points = [_gtp_to_point(v, size) for v in args]
        except ValueError:
            raise GTPFailure("bad vertex list") from None
        if len(points) < 2 or len(set(points)) != len(points) or size * size in points:
            raise GTPFailure("bad vertex list")
        if len(points) >= size * size:
            raise GTPFailure("bad vertex list")
        self._place_handicap(points)
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
        return self.choose(_color(args[0]), allow_resign=allow_resign)

    def choose(self, color: int, *, allow_resign: bool) -> int:
        """The player's move for ``color`` under the clock (not yet played)."""
        if self.game.to_play != color:
            self.game.to_play = color
        if self.game.rules == "nogo" and not self.game.legal_moves().any():
            return RESIGN  # no legal move left: the game is lost
        budget = self.clock.move_budget(color, len(self.game.moves), self.game.size**2)
        if budget is not None:
            set_limits(self.player, move_time=budget)
        search = game_for_player(self.game)
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

    def commit(self, move: int) -> str:
        """Play the chosen ``move`` for the side to move; its GTP text."""
        if move == RESIGN:
            return "resign"
        play_on(self.game, move, self.game.to_play)
        notify(self.player, self.game, move)
        return point_to_gtp(move, self.game.size)

    def _genmove(self, args: list[str]) -> str:
        return self.commit(self._choose(args, allow_resign=True))

    def _genmove_cleanup(self, args: list[str]) -> str:
        # Tromp-Taylor players already capture dead stones before passing, so
        # cleanup is an ordinary move that never resigns.
        return self.commit(self._choose(args, allow_resign=False))

    def _reg_genmove(self, args: list[str]) -> str:
        move = self._choose(args, allow_resign=True)
        return "resign" if move == RESIGN else point_to_gtp(move, self.game.size)

    def _undo(self, args: list[str]) -> str:
        if not self.game.moves:
            raise GTPFailure("cannot undo")
        self.game.undo()  # exact: setup stones (handicap, loadsgf) stay
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


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is a GTP id or unsigned integer: ASCII digits only.

    ``str.isdigit`` and ``int`` also take other scripts' digits (``٣``, ``²``),
    which GTP does not: ``٣ name`` was answered ``=٣ harness``.
    """
    return text.isascii() and text.isdigit()


def _int(text: str, what: str) -> int:
    if not ascii_digits(text.removeprefix("-")):  # int() takes "٣", " 3", "+3" and "1_0"
        raise GTPFailure(f"syntax error: {what} not an integer")
    try:
        return int(text)
    except ValueError:  # over 4,300 digits
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
    """Read commands until ``quit`` or end of input, answering each at once;
    input is read on a thread so streaming answers see the next command."""
    channel = InputChannel(stdin or sys.stdin, stdout or sys.stdout)
    output = Live(channel)
    while (line := channel.next_line()) is not None:
        response = engine.handle(line, output)
        if response:
            channel.write(response)
        if engine.finished:
            break
    return 0
