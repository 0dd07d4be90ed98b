"""A searched player whose prior comes from one network and whose value from
another (AlphaGo's supervised prior with a value network): ``mcts:PRIOR@N,value=VALUE``."""

from __future__ import annotations

import numpy as np
import pytest

from harness.game.position import Game
from harness.players.base import PlayerSpecError
from harness.players.spec import make_player, parse_player

keras = pytest.importorskip("keras")
from harness.nets import save_model  # noqa: E402  (needs keras)
from harness.nets.info import ModelInfo  # noqa: E402

SIZE = 5
CENTRE = 2 * SIZE + 2


def hand_made(path, value_weights: np.ndarray) -> str:
    """A real ``.keras`` network on mao3 planes (own, opponent, colour): a
    uniform policy and value ``tanh(w . planes)`` for the side to move."""
    inputs = keras.Input((SIZE, SIZE, 3))
    flat = keras.layers.Flatten()(inputs)
    policy = keras.layers.Dense(SIZE * SIZE + 1, kernel_initializer="zeros", name="policy")(flat)
    value = keras.layers.Dense(
        1, activation="tanh", name="value",
        kernel_initializer=keras.initializers.Constant(value_weights.reshape(-1, 1)))(flat)
    model = keras.Model(inputs, {"policy": policy, "value": value})
    save_model(model, path, ModelInfo(encoder="mao3", board_size=SIZE))
    return str(path)


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    root = tmp_path_factory.mktemp("nets")
    indifferent = hand_made(root / "prior.keras", np.zeros(SIZE * SIZE * 3, np.float32))
    # The side to move is far ahead when it holds the centre and far behind
    # when the opponent does: after Black takes the centre, White to move
    # reads -tanh(3), so the centre is worth +tanh(3) to Black.
    centre = np.zeros((SIZE, SIZE, 3), np.float32)
    centre[2, 2, 0], centre[2, 2, 1] = 3.0, -3.0
    centre_value = hand_made(root / "value.keras", centre)
    return indifferent, centre_value


def test_the_value_network_decides_where_the_prior_network_cannot(nets):
    prior, value = nets
    game = Game(size=SIZE, komi=0.5)
    alone = make_player(f"mcts:{prior}@64")
    split = make_player(f"mcts:{prior}@64,value={value}")
    plain = alone.select_move(game)
    chosen = split.select_move(game)
    assert chosen == CENTRE
    assert plain != CENTRE  # its own value head is indifferent: nothing draws it there
    result = split.last_result
    assert result.visits[CENTRE] == result.visits.max()
    assert result.q[CENTRE] == pytest.approx(np.tanh(3.0), abs=1e-3)
    # The prior is still the first network's: uniform over the root's moves.
    searched = result.prior[result.prior > 0]
    np.testing.assert_allclose(searched, 1.0 / searched.size, atol=1e-6)


def test_the_spec_reads_back_and_checks_the_value_file(nets, tmp_path):
    prior, value = nets
    spec = parse_player(f"mcts:{prior}@32,value={value},randomize=1")
    assert str(spec.value_model) == value and spec.playouts == 32 and spec.randomize
    assert parse_player(spec.label) == spec
    assert parse_player(f"mcts:{prior}@32").value_model is None
    with pytest.raises(PlayerSpecError, match="value model file"):
        make_player(f"mcts:{prior}@8,value={tmp_path / 'missing.keras'}")
    with pytest.raises(PlayerSpecError, match="unknown option 'value'"):
        parse_player(f"policy:{prior},value={value}")
