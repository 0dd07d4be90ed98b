"""A self-play frontier's rating, in words and tables: how it was rated, the
test-time table (networks x playouts, as KataGo issue #1031) and the
training-to-search exchange rate (:mod:`harness.stats.exchange`).

Markdown lines for :func:`harness.report.frontier.write_frontier_report`'s
``sections``; no statistics are computed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.files import format_table
from harness.report.frontier import fmt_flops
from harness.stats import Estimate
from harness.stats.exchange import ExchangeRate


@dataclass(frozen=True)
class PlayoutCell:
    """One network at one search budget in the pooled rating."""

    network: str  # model and generation, e.g. a0.tiny gen 12
    flops: float  # the network's training and self-play FLOPs
    playouts: int
    elo: float
    low: float
    high: float


def _elo(value: float, low: float, high: float) -> str:
    return f"{value:.0f} [{low:.0f}, {high:.0f}]"


def playouts_table(cells: Sequence[PlayoutCell]) -> str:
    """Networks as rows (in the order given), playouts as columns, Elo [low, high]."""
    playouts = sorted({c.playouts for c in cells})
    networks = list(dict.fromkeys((c.network, c.flops) for c in cells))
    at = {(c.network, c.playouts): c for c in cells}
    rows = []
    for network, flops in networks:
        row: list[object] = [network, fmt_flops(flops)]
        for p in playouts:
            c = at.get((network, p))
            row.append(_elo(c.elo, c.low, c.high) if c else "")
        rows.append(row)
    return format_table(["network", "FLOPs", *[f"{p} playouts" for p in playouts]], rows)


def _slope(e: Estimate) -> str:
    return f"{e.value:.0f} Elo [{e.low:.0f}, {e.high:.0f}]"


def exchange_sentence(rate: ExchangeRate) -> str:
    """The exchange rate with its caveats, or why it is not estimated."""
    if rate.train_slope is None or rate.search_slope is None:
        return f"Training-to-search exchange rate {rate.reason}."
    slopes = (f"each decade of training compute gains {_slope(rate.train_slope)} within a "
              f"model, each decade of playouts {_slope(rate.search_slope)}")
    if rate.factor is None:
        return f"Training-to-search exchange rate {rate.reason} ({slopes})."
    f = rate.factor
    return (f"10x training compute is worth about {f.value:.3g}x playouts [{f.low:.3g}, "
            f"{f.high:.3g}] ({slopes}; Jones 2021 found about 15x in Hex). Caveats: both "
            "slopes are straight lines in log10 over the computes and playouts measured "
            "only, the search slope is measured on each model's last savepoint alone, and "
            "training compute here counts self-play FLOPs too.")


def rating_lines(*, eval_playouts: int, anchor: str, anchor_elo: float,
                 anchors: Sequence[str], left_out: Sequence[str], games: int, rounds: int,
                 target: float, stopped: str) -> list[str]:
    """How the pooled rating was made, for the report."""
    lines = [
        "## Rating", "",
        f"Every savepoint plays as `mcts:CHECKPOINT@{eval_playouts}` (PUCT, "
        f"{eval_playouts} playouts per move, no noise, two random opening moves) in one "
        f"pooled Bradley-Terry rating with `{anchor}` fixed at {anchor_elo:g} Elo; anchors: "
        + ", ".join(f"`{a}`" for a in anchors) + ". "
        f"{games:,} games, in rounds between neighbours of the rating order "
        f"({rounds} this session), until every 95% interval (from the rating's covariance) "
        f"is narrower than ±{target:g} Elo or the games cap: stopped because {stopped}.",
    ]
    if left_out:
        lines.append("Left out: " + "; ".join(left_out) + ".")
    return [*lines, ""]


def search_lines(cells: Sequence[PlayoutCell], rate: ExchangeRate) -> list[str]:
    """The test-time section: the table, then the exchange rate."""
    return ["## Test-time compute", "",
            "Each model's last savepoint at each search budget, in the same rating "
            "(`test_time.csv`):", "", playouts_table(cells), "", exchange_sentence(rate), ""]
