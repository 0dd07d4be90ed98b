"""An adaptive tournament on Ray plays the same rounds and games as local processes."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from harness.arena.games import TIMING_FIELDS, latest_rows, read_results
from harness.arena.tournament import TournamentConfig, run_tournament

pytestmark = pytest.mark.usefixtures("ray_cluster")


def adaptive(out, **kw) -> TournamentConfig:
    values = dict(players=["a=random", "b=random", "c=random"], out=str(out), board_size=7,
                  komi=7.5, opening_moves=2, seed=5, parallel=2, until_separated=True,
                  max_games_per_pair=6)
    values.update(kw)
    return TournamentConfig(**values)


def games(out) -> dict[str, dict]:
    return {row.game_id: {k: v for k, v in asdict(row).items() if k not in TIMING_FIELDS}
            for row in latest_rows(read_results(out))}


@pytest.mark.slow  # about 25 s on the shared 2-core machine, Ray start-up aside
def test_an_adaptive_ray_tournament_takes_the_same_decisions_as_a_local_one(tmp_path):
    local, ray = tmp_path / "local", tmp_path / "ray"
    run_tournament(adaptive(local), progress=False)
    run_tournament(adaptive(ray, backend="ray"), progress=False)
    assert games(ray) == games(local)
    assert len(games(local)) > 6  # rounds after the first were played
    summary = json.loads((ray / "summary.json").read_text())
    assert summary == json.loads((local / "summary.json").read_text())
    assert summary["stopped"] in ("pair cap", "separated")
