"""The MAO value head learns (issue #37 item 4).

The paper's value piece (``mao.paper``) is a board average: it differs
between positions by about 0.001 at initialisation, less than the noise of
its channel selectors, and at the bundled study's learning rate training
shrinks it to a constant and its ReLUs die. The zoo's default value piece has
no selectors and batch-normalises its mlpconv layers (checked on the built
graph: it fails if the default goes back to the paper's piece). Known answer:
on positions whose value is plain to read (who has more stones) the default
head learns it in 300 steps at lr 0.006. The paper's head learns this easy
task too (MSE 0.07): its collapse shows on game positions, where the value is
a weak signal (docs/results.md, measured with
docs/results/mao-value-head/probe_value_head.py).
"""

from __future__ import annotations

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from harness.nets import build_model  # noqa: E402
from harness.nets.layers import MaxAverageOut  # noqa: E402

BOARD, STEPS, BATCH, LR = 7, 300, 64, 0.006


def value_branch(model) -> list:
    """The layers that feed the value output and not the policy."""
    def ancestors(name):
        seen, todo = set(), [model.get_layer(name)]
        while todo:
            layer = todo.pop()
            if layer.name not in seen:
                seen.add(layer.name)
                todo += [p.operation for n in layer._inbound_nodes for p in n.parent_nodes]
        return seen
    own = ancestors("value") - ancestors("policy")
    return [layer for layer in model.layers if layer.name in own]


def selectors_and_norms(model) -> tuple[list[float], int]:
    """The value branch's MAO drop rates and its number of batch norms."""
    layers = value_branch(model)
    return ([layer.dropout for layer in layers if isinstance(layer, MaxAverageOut)],
            sum(isinstance(layer, keras.layers.BatchNormalization) for layer in layers))


@pytest.mark.parametrize("name", ["mao.tiny", "mao.conv.tiny", "mao.small", "mao"])
def test_default_mao_value_piece_is_normalised_and_the_paper_one_stays_available(name):
    model = build_model(name, 5, 3, seed=0)
    assert selectors_and_norms(model) == ([0.0, 0.0], 4)
    paper = build_model(name + ".paper", 5, 3, seed=0)
    assert selectors_and_norms(paper) == ([0.25, 0.25], 0)
    assert "paper" in paper.name.split(".") and "paper" not in model.name.split(".")


def stone_count_positions(n: int, seed: int):
    """Random 7x7 positions (own, opponent, ones planes); value +1 when the
    side to move has more stones, -1 when fewer (ties dropped)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, BOARD, BOARD, 3), np.float32)
    z = np.zeros((n, 1), np.float32)
    i = 0
    while i < n:
        stones = rng.choice(3, size=(BOARD, BOARD), p=rng.dirichlet([2, 2, 2]))
        own, opp = int((stones == 1).sum()), int((stones == 2).sum())
        if own == opp:
            continue
        x[i, ..., 0], x[i, ..., 1], x[i, ..., 2] = stones == 1, stones == 2, 1.0
        z[i] = 1.0 if own > opp else -1.0
        i += 1
    return x, z


def trained_value_mse(name: str) -> tuple[float, float]:
    """Validation value MSE and spread of the value after STEPS Adam steps."""
    x, z = stone_count_positions(STEPS * BATCH // 4, seed=0)
    vx, vz = stone_count_positions(512, seed=1)
    keras.utils.set_random_seed(0)
    model = build_model(name, BOARD, 3, seed=0)
    model.compile(optimizer=keras.optimizers.Adam(LR),
                  loss={"policy": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        "value": "mse"},
                  loss_weights={"policy": 0.0, "value": 1.0})
    policy = np.zeros(len(x), np.int64)
    model.fit(x, {"policy": policy, "value": z}, batch_size=BATCH, epochs=4, verbose=0)
    value = np.asarray(model.predict(vx, batch_size=256, verbose=0)["value"])
    return float(np.mean((value - vz) ** 2)), float(value.std())


@pytest.mark.filterwarnings("ignore:Gradients do not exist")
def test_default_mao_value_head_learns_who_has_more_stones():
    mse, spread = trained_value_mse("mao.conv.tiny")
    assert mse < 0.5 and spread > 0.3, (mse, spread)
