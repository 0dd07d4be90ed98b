"""A policy-gradient run's win rate against its start, from the steps that drew it."""

from __future__ import annotations

import pytest

from harness.rl.pg_curves import against_start, plot_pg_curves


def step(generation, opponent, win_rate, games=32):
    return {"generation": generation, "opponents": opponent, "win_rate": win_rate,
            "games": games, "kl_start": 0.01 * generation, "entropy": 2.0}


def test_only_the_steps_against_generation_0_count_pooled_by_block():
    rows = [step(1, "gen-0000", 0.5), step(2, "gen-0000", 0.75), step(3, "gen-0002", 1.0),
            step(11, "gen-0010", 0.0), step(12, "gen-0000", 0.625)]
    blocks = against_start(rows, block=10)
    assert [b[:5] for b in blocks] == [[1, 10, 2, 40.0, 64], [11, 20, 1, 20.0, 32]]
    first = blocks[0]
    assert first[5] == pytest.approx(40 / 64) and first[6] < first[5] < first[7]
    # Wilson's interval for 20 of 32 (the textbook formula at z = 1.96)
    assert blocks[1][6] == pytest.approx(0.4530, abs=1e-3)
    assert blocks[1][7] == pytest.approx(0.7707, abs=1e-3)


def test_the_figure_is_written(tmp_path):
    rows = [step(g, "gen-0000" if g % 3 == 1 else "gen-0001", 0.5 + 0.01 * g)
            for g in range(1, 30)]
    path = plot_pg_curves(rows, against_start(rows, 10), tmp_path / "pg.png", "a run")
    assert path.stat().st_size > 1000
