"""The analysis commands of a searching player: ``lz-analyze``,
``kata-analyze``, their ``genmove_analyze`` forms and GoGui's heat maps.

The engine registers these only for players with a tree search to read
(:func:`~harness.gtp.analyzer.can_analyze`), so ``list_commands`` tells a GUI
the truth. ``lz-analyze``/``kata-analyze`` answer ``=`` at once, then one
``info`` line per interval until the next command arrives (or, without a
live channel, after one interval), then the blank line that ends every GTP
answer. ``*-genmove_analyze`` searches the player's usual budget while
printing the same lines, then ``play VERTEX``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from harness.gtp import gogui
from harness.gtp.analysis import (
    AnalyzeError,
    AnalyzeRequest,
    kata_line,
    lz_line,
    parse_analyze_args,
)
from harness.gtp.analyzer import AnalysisConfig, Analyzer, NetworkHeads


class Output(Protocol):
    """Where a streaming answer goes, and whether the controller spoke again."""

    live: bool  # False: nobody can interrupt; print one interval and stop

    def write(self, text: str) -> None: ...

    def waiting(self, timeout: float = 0.0) -> bool: ...


class Collected:
    """Output gathered into a string (``GTPEngine.handle`` without a channel)."""

    live = False

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def waiting(self, timeout: float = 0.0) -> bool:
        return False

    @property
    def text(self) -> str:
        return "".join(self.parts)


class Live:
    """Output to a real controller through an :class:`~harness.gtp.channel.InputChannel`."""

    live = True

    def __init__(self, channel) -> None:
        self.write = channel.write
        self.waiting = channel.waiting


class AnalysisCommands:
    """Handlers bound to one engine (its ``game``, ``player`` and failure type)."""

    def __init__(self, engine, config: AnalysisConfig | None = None):
        self.engine = engine
        self.config = config or AnalysisConfig()
        self._heads: NetworkHeads | None = None

    def streaming(self) -> dict[str, Callable[[list[str], str, Output], None]]:
        return {
            "lz-analyze": lambda a, i, o: self._analyze(a, i, o, kata=False),
            "kata-analyze": lambda a, i, o: self._analyze(a, i, o, kata=True),
            "lz-genmove_analyze": lambda a, i, o: self._genmove(a, i, o, kata=False),
            "kata-genmove_analyze": lambda a, i, o: self._genmove(a, i, o, kata=True),
            "genmove_analyze": lambda a, i, o: self._genmove(a, i, o, kata=False),
        }

    def plain(self) -> dict[str, Callable[[list[str]], str]]:
        return {
            "gogui-analyze_commands": self._gogui_commands,
            gogui.POLICY_COMMAND: self._policy_heatmap,
            gogui.OWNERSHIP_COMMAND: self._ownership_heatmap,
        }

    # --- helpers ------------------------------------------------------------
    def _request(self, args: list[str]) -> AnalyzeRequest:
        try:
            return parse_analyze_args(args)
        except AnalyzeError as exc:
            raise self.engine.failure(str(exc)) from None

    def _heads_for(self) -> NetworkHeads:
        if self._heads is None:
            self._heads = NetworkHeads(self.engine.player, self.engine.game.rules)
        return self._heads

    def _write_line(self, analyzer: Analyzer, request: AnalyzeRequest, kata: bool,
                    out: Output) -> None:
        """One info line; none when no move is left to analyse, since an empty
        line would end the GTP answer early."""
        if kata:
            line = kata_line(analyzer.snapshot(request, scores=True), ownership=request.ownership)
        else:
            line = lz_line(analyzer.snapshot(request))
        if line:
            out.write(line + "\n")

    def _search_for(self, seconds: float, analyzer: Analyzer, out: Output, interruptible: bool,
                    until_playouts: int | None = None) -> bool:
        """Grow the search for ``seconds`` (or until ``until_playouts``);
        True when input arrived and the analysis should end."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            done = until_playouts is not None and analyzer.playouts >= until_playouts
            if done or analyzer.exhausted:
                return interruptible and out.waiting(left if not done else 0.0)
            analyzer.grow()
            if interruptible and out.waiting(0.0):
                return True
            if time.monotonic() >= deadline:
                return False

    # --- lz-analyze / kata-analyze ------------------------------------------
    def _analyze(self, args: list[str], ident: str, out: Output, *, kata: bool) -> None:
        request = self._request(args)
        analyzer = Analyzer(self.engine.player, self.engine.game, request.color, self.config)
        out.write(f"={ident}\n")
        interval = request.interval / 100.0
        while True:
            stop = self._search_for(interval or 0.05, analyzer, out, interruptible=out.live)
            if request.interval:
                self._write_line(analyzer, request, kata, out)
            if stop or not out.live:
                break
        out.write("\n")

    # --- genmove_analyze ----------------------------------------------------
    def _genmove(self, args: list[str], ident: str, out: Output, *, kata: bool) -> None:
        request = self._request(args)
        engine = self.engine
        color = request.color if request.color is not None else engine.game.to_play
        engine.game.to_play = color
        budget = int(getattr(engine.player, "playouts", self.config.step_playouts))
        # Under a clock, the search stops at the time genmove would spend.
        seconds = engine.clock.move_budget(color, len(engine.game.moves), engine.game.size**2)
        deadline = math.inf if seconds is None else time.monotonic() + seconds
        analyzer = Analyzer(engine.player, engine.game, color, self.config)
        out.write(f"={ident}\n")
        interval = request.interval / 100.0
        while analyzer.playouts < budget and not analyzer.exhausted:
            span = min(interval or 3600.0, deadline - time.monotonic())
            if span <= 0:
                break
            self._search_for(span, analyzer, out, False, until_playouts=budget)
            if request.interval:
                self._write_line(analyzer, request, kata, out)
        # The player's own rules (resignation, clock, pass rule) pick the move;
        # its search finds the analysed tree already at its budget.
        move = engine.choose(color, allow_resign=True)
        out.write(f"play {engine.commit(move)}\n\n")

    # --- GoGui --------------------------------------------------------------
    def _gogui_commands(self, args: list[str]) -> str:
        return gogui.analyze_commands(ownership="ownership" in self._heads_for().available)

    def _policy_heatmap(self, args: list[str]) -> str:
        from harness.search.leaves import history_rows

        game = self.engine.game
        search = self.engine.player.searcher(game)
        rows = history_rows(game, search.history)[None]
        policy, _ = search.evaluator.evaluate(
            rows, np.array([game.to_play], np.int8), game.legal_moves()[None]
        )
        return gogui.policy_gfx(np.asarray(policy)[0], game.size)

    def _ownership_heatmap(self, args: list[str]) -> str:
        game = self.engine.game
        heads = self._heads_for()
        if "ownership" not in heads.available:
            raise self.engine.failure("the network has no ownership head")
        owner = heads([game])["ownership"][0]
        return gogui.ownership_gfx(owner, game.to_play, game.size)
