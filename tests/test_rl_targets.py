"""The quality of self-play's policy targets against held-out human moves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.rl.targets import quality


def test_quality_scores_prior_target_and_played_move_against_the_human_move():
    prior = np.array([[5.0, 3.0, 2.0], [0.1, 0.6, 0.3]])  # any positive scale
    target = np.array([[0.2, 0.7, 0.1], [0.1, 0.6, 0.3]])
    q = quality(prior, target, chosen=np.array([1, 2]), human=np.array([1, 1]))
    assert q.prior_hit.tolist() == [0.0, 1.0]  # argmax 0 misses, argmax 1 hits
    assert q.target_hit.tolist() == [1.0, 1.0]
    assert q.played_hit.tolist() == [1.0, 0.0]
    assert q.prior_ce == pytest.approx([-math.log(0.3), -math.log(0.6)])
    assert q.target_ce == pytest.approx([-math.log(0.7), -math.log(0.6)])
    kl = 0.2 * math.log(0.2 / 0.5) + 0.7 * math.log(0.7 / 0.3) + 0.1 * math.log(0.1 / 0.2)
    assert q.kl == pytest.approx([kl, 0.0])


def test_a_move_tied_for_the_most_mass_is_a_fractional_hit():
    # Visit counts of 16 simulations over 4 moves: one visit each, a four-way tie.
    visits = np.array([[1.0, 1.0, 1.0, 1.0, 0.0], [4.0, 0.0, 0.0, 0.0, 0.0]])
    q = quality(np.ones((2, 5)), visits, chosen=np.array([0, 0]), human=np.array([2, 1]))
    assert q.target_hit.tolist() == [0.25, 0.0]
    assert q.prior_hit.tolist() == [0.2, 0.2]  # a flat prior: five-way ties


@pytest.fixture(scope="module")
def held_out_5x5(dataset_5x5, tmp_path_factory):
    from harness.nets import build_model, save_model

    folder = tmp_path_factory.mktemp("targets")
    net = save_model(build_model("a0.tiny", 5, 17, seed=1), folder / "net.keras")
    config = folder / "rl.toml"
    config.write_text(f'run = "t"\nboard_size = 5\nkomi = 2.5\nencoder = "agz17"\n'
                      f'init = "{net}"\n[mcts]\nroot = "gumbel"\nplayouts = 4\ngumbel_k = 4\n'
                      f'add_noise = true\n[selfplay]\nparallel = 4\n')
    return dataset_5x5, net, config


def test_positions_are_replayed_from_validation_games_with_the_move_played(held_out_5x5):
    from harness.data.dataset import open_dataset
    from harness.rl.targets import replayed_positions

    data, _, _ = held_out_5x5
    positions = replayed_positions(data, 8, board_size=5, komi=2.5, rules="superko", seed=0,
                                   min_moves=3)
    assert 1 <= len(positions.games) <= 8 and len(positions.moves) == len(positions.games)
    with open_dataset(data) as d:
        val = d.split_games("val")
        lines = [d.file["positions/move"][f:f + n].tolist()
                 for f, n in zip(d.games["first"][val], d.games["length"][val], strict=True)]
    for game, move in zip(positions.games, positions.moves, strict=True):
        played = [point for _, point in game.moves]  # with the next move: a val game's prefix
        assert len(played) >= 3
        assert any(line[:len(played) + 1] == [*played, int(move)] for line in lines)


def test_without_a_q_term_the_gumbel_target_is_the_prior(held_out_5x5, capsys):
    from harness.cli import main

    data, _, config = held_out_5x5
    assert main(["rl-targets", "--config", str(config), "--data", str(data),
                 "--positions", "6", "--c-scale", "0,1"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in out.splitlines() if line.startswith("| c_scale")}
    zero, one = rows["c_scale 0"], rows["c_scale 1"]
    assert zero[3].startswith("+0.0 ")  # target - prior: the same argmax everywhere
    assert zero[7].startswith("0.000 ")  # KL(target || prior) = 0: the target is the prior
    assert float(one[7].split()[0]) > 0  # Q moves the target off the prior
    # The visit counts are not the prior even without a Q term: sequential
    # halving gives each of the 4 sampled moves one of the 4 simulations.
    visits = rows["c_scale 0, visit counts"]
    assert float(visits[7].split()[0]) > 0


def test_a_dataset_of_another_board_is_one_line(held_out_5x5, capsys):
    from harness.cli import main

    data, _, config = held_out_5x5
    config9 = config.with_name("rl9.toml")
    config9.write_text(config.read_text().replace("board_size = 5", "board_size = 9"))
    assert main(["rl-targets", "--config", str(config9), "--data", str(data)]) == 2
    assert "5x5 positions, the search plays 9x9" in capsys.readouterr().err


def test_c_scale_on_a_puct_search_is_one_line(held_out_5x5, capsys):
    from harness.cli import main

    data, _, config = held_out_5x5
    puct = config.with_name("puct.toml")
    puct.write_text(config.read_text().replace('root = "gumbel"', 'root = "puct"'))
    assert main(["rl-targets", "--config", str(puct), "--data", str(data),
                 "--c-scale", "0.1"]) == 2
    assert "root is 'puct'" in capsys.readouterr().err
