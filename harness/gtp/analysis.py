"""The text of the analysis extensions GUIs speak: ``lz-analyze`` (Leela Zero,
read by Lizzie and Sabaki) and ``kata-analyze`` (KataGo, read by Sabaki,
KaTrain and Lizzie for score and ownership).

Pure functions only: a :class:`Snapshot` of the search in, one ``info`` line
out, and the command arguments parsed into an :class:`AnalyzeRequest`. The
formats follow KataGo's ``docs/GTP_Extensions.md``, which documents both:

- ``lz-analyze``: ``info move D4 visits 12 winrate 5123 prior 1834 lcb 4890
  order 0 pv D4 Q16 ...`` with winrate, prior and lcb as integers 0..10000;
- ``kata-analyze``: the same keys with floats in [0, 1], plus ``scoreLead``
  (and its alias ``scoreMean``) when the network predicts the score, and
  after the last ``info`` an ``ownership`` block of one float in [-1, 1] per
  point, row by row from the top-left (A19) to the bottom-right (T1).

Every value is from the view of the side to move, as both programs report
by default. One line holds every candidate move; the engine prints one such
line per interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.game.geometry import BLACK, WHITE, point_to_gtp
from harness.gtp.timecontrol import non_negative_number

# Two-sided 95% normal quantile for the winrate's lower confidence bound.
LCB_Z = 1.96
PV_LENGTH = 20  # moves of each principal variation shown


class AnalyzeError(ValueError):
    """Arguments of an analysis command that cannot be understood."""


@dataclass(frozen=True)
class AnalyzeRequest:
    """``[player] [interval] key value ...`` of ``lz-analyze``/``kata-analyze``."""

    color: int | None = None  # side to analyse for; None = the side to move
    interval: int = 0  # centiseconds between info lines; 0 = search without output
    minmoves: int = 0
    maxmoves: int = 0  # 0 = no limit
    ownership: bool = False  # kata-analyze ``ownership true``


# KataGo's switches for optional output fields; accepted, the fields omitted.
EXTRA_FIELDS = (
    "pvVisits", "pvEdgeVisits", "ownershipStdev", "movesOwnership", "movesOwnershipStdev",
    "rootInfo",
)
_PLAYERS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


def parse_analyze_args(args: list[str]) -> AnalyzeRequest:
    """Parse the arguments as KataGo does: an optional colour, an optional bare
    interval, then key-value pairs (``interval``, ``minmoves``, ``maxmoves``,
    ``ownership``). Requests for extra output fields this engine cannot give
    (``pvVisits``, ``ownershipStdev``, ...) are accepted and the fields left
    out, as KataGo tells consumers to expect; ``allow``/``avoid``, which would
    change the search, are refused rather than silently ignored."""
    words = list(args)
    for word in words:
        if word in ("allow", "avoid"):
            raise AnalyzeError(f"unsupported analysis option {word!r}")
    color = None
    if words and words[0].lower() in _PLAYERS:
        color = _PLAYERS[words.pop(0).lower()]
    values: dict[str, str] = {}
    if words and _is_number(words[0]):
        values["interval"] = words.pop(0)
    for key in words[::2]:
        if key not in ("interval", "minmoves", "maxmoves", "ownership", *EXTRA_FIELDS):
            raise AnalyzeError(f"unsupported analysis option {key!r}")
    if len(words) % 2:
        raise AnalyzeError(f"syntax error: key {words[-1]!r} has no value")
    values.update(zip(words[::2], words[1::2], strict=True))
    ownership = values.get("ownership", "false").lower()
    if ownership not in ("true", "false"):
        raise AnalyzeError("syntax error: ownership must be true or false")
    return AnalyzeRequest(
        color=color,
        interval=_count(values.get("interval", "0"), "interval"),
        minmoves=_count(values.get("minmoves", "0"), "minmoves"),
        maxmoves=_count(values.get("maxmoves", "0"), "maxmoves"),
        ownership=ownership == "true",
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _count(text: str, what: str) -> int:
    return int(non_negative_number(text, what, AnalyzeError))


@dataclass(frozen=True)
class MoveInfo:
    """One candidate move at the root, from the side to move's view."""

    move: int  # point, or P for pass
    visits: int
    winrate: float  # in [0, 1]
    prior: float  # in [0, 1]
    lcb: float  # in [0, 1]
    order: int  # 0 = the move the engine would play
    pv: tuple[int, ...]  # principal variation, starting with ``move``
    score_lead: float | None = None  # points the side to move leads by after ``move``


@dataclass(frozen=True)
class Snapshot:
    """What an info line reports: the candidates in ``order``, and the
    predicted ownership (P floats, side to move's view) when known."""

    size: int
    moves: tuple[MoveInfo, ...]
    ownership: np.ndarray | None = None


def winrate_lcb(winrate: float, visits: int) -> float:
    """A lower confidence bound on a winrate seen over ``visits`` playouts.

    The search keeps no per-node variance, so this is the normal
    approximation of a binomial proportion (Leela Zero uses a t-interval on
    the measured variance); below two visits there is no bound, reported 0
    as Leela Zero does.
    """
    if visits < 2:
        return 0.0
    spread = LCB_Z * math.sqrt(max(winrate * (1.0 - winrate), 0.0) / visits)
    return min(max(winrate - spread, 0.0), 1.0)


def candidates(
    visits: np.ndarray,
    q: np.ndarray,
    prior: np.ndarray,
    root_value: float,
    best: int,
    *,
    minmoves: int = 0,
    maxmoves: int = 0,
) -> list[tuple[int, int, float, float]]:
    """(move, visits, winrate, prior) of the moves to report, in order.

    The engine's own choice ``best`` comes first, then the visited moves by
    visits, value and prior (the search's own tie-break); unvisited moves are
    added by prior up to ``minmoves``, with the root's winrate. ``maxmoves``
    caps the list.
    """
    root_winrate = (root_value + 1.0) / 2.0
    visited = [int(m) for m in np.flatnonzero(visits > 0)]
    q_key = np.where(np.isnan(q), -np.inf, q)
    visited.sort(key=lambda m: (m != best, -visits[m], -q_key[m], -prior[m], m))
    chosen = list(visited)
    if len(chosen) < minmoves:
        by_prior = np.argsort(-prior, kind="stable")
        rest = [int(m) for m in by_prior if visits[m] == 0 and prior[m] > 0]
        chosen += rest[: minmoves - len(chosen)]
    if maxmoves:
        chosen = chosen[:maxmoves]
    out = []
    for m in chosen:
        winrate = (float(q[m]) + 1.0) / 2.0 if visits[m] > 0 else root_winrate
        out.append((m, int(visits[m]), min(max(winrate, 0.0), 1.0), float(prior[m])))
    return out


def _pv_text(pv: tuple[int, ...], size: int) -> str:
    return " ".join(point_to_gtp(m, size) for m in pv[:PV_LENGTH])


def _permyriad(x: float) -> int:
    return min(max(round(10000 * x), 0), 10000)


def lz_line(snapshot: Snapshot) -> str:
    """One ``lz-analyze`` line: winrate, prior and lcb as integers 0..10000."""
    parts = [
        f"info move {point_to_gtp(i.move, snapshot.size)} visits {i.visits} "
        f"winrate {_permyriad(i.winrate)} prior {_permyriad(i.prior)} "
        f"lcb {_permyriad(i.lcb)} order {i.order} pv {_pv_text(i.pv, snapshot.size)}"
        for i in snapshot.moves
    ]
    return " ".join(parts)


def _float(x: float) -> str:
    """``x`` with up to six decimals and always a decimal point: ``1.0``, never ``1``.

    Sabaki tells the two formats apart by the point: a winrate without one is
    read as Leela Zero's integer 0..10000, so ``winrate 1`` showed 0.01%, not
    100% (issue 41). No exponent either (``.6g`` wrote ``1e-07``).
    """
    text = f"{x:.6f}".rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text == "-0.0" else text


def kata_line(snapshot: Snapshot, *, ownership: bool) -> str:
    """One ``kata-analyze`` line: floats in [0, 1], ``scoreLead``/``scoreMean``
    when known, then the ownership block when asked for and known."""
    parts = []
    for i in snapshot.moves:
        score = ""
        if i.score_lead is not None:
            lead = _float(i.score_lead)
            score = f" scoreMean {lead} scoreLead {lead}"
        parts.append(
            f"info move {point_to_gtp(i.move, snapshot.size)} visits {i.visits} "
            f"winrate {_float(i.winrate)}{score} prior {_float(i.prior)} "
            f"lcb {_float(i.lcb)} order {i.order} pv {_pv_text(i.pv, snapshot.size)}"
        )
    if ownership and snapshot.ownership is not None:
        values = " ".join(_float(float(v)) for v in np.clip(snapshot.ownership, -1.0, 1.0))
        parts.append(f"ownership {values}")
    return " ".join(parts)
