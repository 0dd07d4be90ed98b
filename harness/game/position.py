"""A small object API over the compiled kernels, for everything that is not hot.

``Game`` is what SGF replay, GTP, referees and tests use. It owns a one-game
:class:`~harness.game.board.Boards` batch, so any kernel can be called on
``game.boards, 0`` directly when speed matters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness.game import board as K
from harness.game.geometry import BLACK, EMPTY, WHITE, Geometry, geometry, point_to_gtp
from harness.game.result import GameResult, result_from_score

DEFAULT_KOMI = 7.5  # every config that plays games defaults to it (harness.game.settings)


def move_cap(size: int, max_moves: int | None = None) -> int:
    """The move after which a game is stopped and scored as it stands.

    ``max_moves`` when given (a positive number), else twice the points of the
    board: one rule for the referee, self-play, gating and policy-gradient games.
    """
    return max_moves if max_moves else 2 * size * size


RULE_NAMES = {"superko": K.POSITIONAL_SUPERKO, "simple-ko": K.SIMPLE_KO, "nogo": K.NOGO}


class IllegalMove(ValueError):
    """A move the rules forbid; ``reason`` is one of ``board.ILLEGAL_REASONS``."""

    def __init__(self, move: int, size: int, reason: str, move_number: int):
        self.move = move
        self.reason = reason
        self.move_number = move_number
        on_board = 0 <= move <= size * size
        vertex = point_to_gtp(move, size) if on_board else f"#{move}"
        super().__init__(f"illegal move {move_number} {vertex} ({reason})")


@dataclass(frozen=True)
class _Checkpoint:
    """The exact state after an edit that is not a move (setup, side to move).

    ``undo`` restores the latest checkpoint and replays the moves after it, so
    edits between moves survive an undo and the hash comes back bit for bit.
    """

    moves: int  # len(Game.moves) when taken
    history: int  # len(Game.history) when taken
    setup: int  # len(Game._setup) when taken
    boards: K.Boards  # private one-game copy, never written


@dataclass
class Game:
    """One game: rules, komi, setup, the moves so far and how it ended."""

    size: int = 19
    komi: float = DEFAULT_KOMI
    rules: str = "superko"  # "superko", "simple-ko" or "nogo"
    moves: list[tuple[int, int]] = field(default_factory=list)  # (colour, point)
    resigned: int = 0  # colour that resigned, 0 if none
    boards: K.Boards = field(init=False, repr=False)
    geo: Geometry = field(init=False, repr=False)
    _history: list[np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.rules not in RULE_NAMES:
            raise ValueError(f"unknown rules {self.rules!r} (expected one of {sorted(RULE_NAMES)})")
        self.geo = geometry(self.size)
        self.boards = K.new_boards(1, self.size, RULE_NAMES[self.rules])
        self._setup: list[tuple[int, int]] = []  # (colour or EMPTY, point) edits in order
        self._history = [self.boards.stones[0].copy()]
        self._checkpoints: list[_Checkpoint] = []
        self._checkpoint()
        replay, self.moves = self.moves, []
        for color, move in replay:
            self.play(move, color)

    # --- state -----------------------------------------------------------
    @property
    def to_play(self) -> int:
        return int(self.boards.meta[0, K.TO_PLAY])

    @to_play.setter
    def to_play(self, color: int) -> None:
        self._set_mover(color)
        self._checkpoint()

    def _set_mover(self, color: int) -> None:
        """Make ``color`` the side to move.

        Handing the turn to the other side is an implied pass, which lifts a
        ko ban (the ban binds only the very next move of the side to move).
        """
        if color not in (BLACK, WHITE):
            raise ValueError(f"colour must be BLACK (1) or WHITE (2), got {color!r}")
        if color != self.to_play:
            self.boards.meta[0, K.TO_PLAY] = color
            self.boards.meta[0, K.KO] = -1

    def _checkpoint(self) -> None:
        snapshot = _Checkpoint(
            len(self.moves),
            len(self._history),
            len(self._setup),
            K.Boards(*(a.copy() for a in self.boards)),
        )
        if self._checkpoints and self._checkpoints[-1].moves == snapshot.moves:
            self._checkpoints[-1] = snapshot
        else:
            self._checkpoints.append(snapshot)

    @property
    def pass_move(self) -> int:
        return self.size * self.size

    @property
    def stones(self) -> np.ndarray:
        """Flat int8 view of the board (row-major, row 0 at the top)."""
        return self.boards.stones[0]

    @property
    def board(self) -> np.ndarray:
        return self.stones.reshape(self.size, self.size)

    @property
    def history(self) -> list[np.ndarray]:
        """Stones after the setup and after each move, oldest first (features need it)."""
        return self._history

    @property
    def passes(self) -> int:
        return int(self.boards.meta[0, K.PASSES])

    @property
    def last_move(self) -> int:
        return int(self.boards.meta[0, K.LAST])

    @property
    def ko_point(self) -> int:
        return int(self.boards.meta[0, K.KO])

    @property
    def position_hash(self) -> int:
        return int(self.boards.hash[0])

    @property
    def captures(self) -> tuple[int, int]:
        """Stones captured by Black and by White."""
        return int(self.boards.meta[0, K.CAPS_BLACK]), int(self.boards.meta[0, K.CAPS_WHITE])

    # --- moves -----------------------------------------------------------
    def check(self, move: int, color: int | None = None) -> str:
        """``"legal"`` or the reason the move is illegal."""
        color = self.to_play if color is None else color
        code = K.check_move(self.boards, 0, move, color, self.geo.neighbours, self.geo.zobrist)
        return K.ILLEGAL_REASONS[code]

    def is_legal(self, move: int, color: int | None = None) -> bool:
        return self.check(move, color) == "legal"

    def legal_moves(self) -> np.ndarray:
        """Bool mask over the P + 1 moves (pass last) for the side to move."""
        out = np.zeros(self.size * self.size + 1, np.bool_)
        return K.legal_mask(self.boards, 0, self.geo.neighbours, self.geo.zobrist, out)

    def play(self, move: int, color: int | None = None) -> int:
        """Play a move (pass is ``size*size``); returns stones captured.

        ``color`` defaults to the side to move; records sometimes show one side
        moving twice, so another colour is accepted and becomes the mover.
        """
        if self.is_over:
            raise IllegalMove(move, self.size, "game is over", len(self.moves) + 1)
        color = self.to_play if color is None else color
        saved_meta = self.boards.meta[0].copy()
        self._set_mover(color)
        reason = self.check(move, color)
        if reason != "legal":
            self.boards.meta[0] = saved_meta  # a refused move changes nothing
            raise IllegalMove(move, self.size, reason, len(self.moves) + 1)
        captured = K.play(self.boards, 0, move, self.geo.neighbours, self.geo.zobrist)
        self.moves.append((color, move))
        self._history.append(self.stones.copy())
        return int(captured)

    def pass_turn(self) -> None:
        self.play(self.pass_move)

    def resign(self, color: int | None = None) -> None:
        self.resigned = self.to_play if color is None else color

    def setup(self, black=(), white=(), empty=()) -> None:
        """Place setup stones (SGF AB/AW/AE): no captures, history restarts."""
        stones = self.stones
        for color, points in ((BLACK, black), (WHITE, white), (EMPTY, empty)):
            for p in points:
                stones[p] = color
                self._setup.append((color, int(p)))
        K.rebuild(self.boards, 0, self.geo.neighbours, self.geo.zobrist)
        self._history.append(self.stones.copy())
        self._checkpoint()

    def undo(self) -> None:
        """Take back the last move: the exact earlier state, hash and history included.

        Restores the latest checkpoint (setup or side-to-move edit) before that
        move and replays the moves after it. Only moves made through ``play``
        are known here: kernels run directly on ``boards`` bypass this record.
        """
        if not self.moves:
            raise ValueError("no move to undo")
        target = len(self.moves) - 1
        while self._checkpoints[-1].moves > target:
            self._checkpoints.pop()
        point = self._checkpoints[-1]
        K.copy_game(point.boards, 0, self.boards, 0)
        replay = self.moves[point.moves : target]
        del self.moves[target:]
        del self._history[point.history + len(replay) :]
        del self._setup[point.setup :]
        self.resigned = 0
        for color, move in replay:
            self._set_mover(color)
            K.play(self.boards, 0, move, self.geo.neighbours, self.geo.zobrist)

    def copy(self) -> Game:
        twin = Game(self.size, self.komi, self.rules)
        K.copy_game(self.boards, 0, twin.boards, 0)
        twin.moves = list(self.moves)
        twin.resigned = self.resigned
        twin._setup = list(self._setup)
        twin._history = list(self._history)
        twin._checkpoints = list(self._checkpoints)  # snapshots are never written
        return twin

    # --- end of game -----------------------------------------------------
    @property
    def is_over(self) -> bool:
        if self.resigned:
            return True
        if self.rules == "nogo":
            return not self.legal_moves().any()
        return self.passes >= 2

    def ownership(self) -> np.ndarray:
        """Tromp-Taylor owner per point: +1 Black, -1 White, 0 neutral."""
        owner = np.zeros(self.size * self.size, np.int32)
        K.area_score(self.boards, 0, self.geo.neighbours, owner)
        return owner

    def score(self) -> float:
        """Black's area minus White's area minus komi."""
        owner = np.zeros(self.size * self.size, np.int32)
        return float(K.area_score(self.boards, 0, self.geo.neighbours, owner)) - self.komi

    def result(self) -> GameResult:
        """The result of a finished game (resignation, NoGo loss, or area count)."""
        if self.resigned:
            return GameResult(3 - self.resigned, "resign")
        if self.rules == "nogo":
            # The side to move has no legal move (every move captures or is
            # suicide): it loses.
            return GameResult(3 - self.to_play, "score", None)
        return result_from_score(self.score())

    # --- text ------------------------------------------------------------
    def to_ascii(self) -> str:
        chars = {EMPTY: ".", BLACK: "X", WHITE: "O"}
        return "\n".join(" ".join(chars[int(v)] for v in row) for row in self.board)

    @classmethod
    def from_ascii(
        cls, text: str, to_play: int = BLACK, komi: float = DEFAULT_KOMI, rules: str = "superko"
    ) -> Game:
        """A position from rows of ``X`` (Black), ``O`` (White) and ``.`` (empty)."""
        rows = [line.split() for line in text.strip().splitlines() if line.strip()]
        size = len(rows)
        if any(len(r) != size for r in rows):
            raise ValueError("ASCII board must be square")
        game = cls(size, komi, rules)
        black = [r * size + c for r in range(size) for c in range(size) if rows[r][c] == "X"]
        white = [r * size + c for r in range(size) for c in range(size) if rows[r][c] == "O"]
        game.setup(black, white)
        game.to_play = to_play
        return game
