"""Players: everything that can choose a move, behind one protocol.

Public API::

    from harness.players import (
        Player, RESIGN, PlayerSpecError,   # the protocol (base.py)
        PlayerSpec, parse_player,          # "random", "uct:1000", "mcts:PATH@200", "gnugo:10", ...
        make_player,                       # parse_player(text).build()
        RandomPlayer, UCTPlayer, PolicyPlayer, MCTSPlayer, GTPPlayer, ScriptedPlayer,
        gnugo_player, tournament_choice, uct_playout_rate,
    )

Modules load on first use, so ``import harness.players`` stays cheap.
"""

from __future__ import annotations

import importlib

from harness.players.base import RESIGN, Player, PlayerSpecError

_LAZY = {
    "make_player": "harness.players.spec",
    "parse_player": "harness.players.spec",
    "PlayerSpec": "harness.players.spec",
    "RandomPlayer": "harness.players.random_player",
    "UCTPlayer": "harness.players.uct",
    "uct_playout_rate": "harness.players.uct",
    "PolicyPlayer": "harness.players.policy",
    "MCTSPlayer": "harness.players.mcts",
    "GTPPlayer": "harness.players.gtp_player",
    "gnugo_player": "harness.players.gtp_player",
    "ScriptedPlayer": "harness.players.scripted",
    "tournament_choice": "harness.players.choice",
}

__all__ = ["RESIGN", "Player", "PlayerSpecError", *sorted(_LAZY)]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'harness.players' has no attribute {name!r}")
