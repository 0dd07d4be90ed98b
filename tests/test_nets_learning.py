"""Every family can learn: it overfits a fixed set of 256 positions to at least
95% policy accuracy (inference mode) within a small step budget.

The default run uses 9x9 positions from random games (next move as target;
memorising them still needs a working trunk and head). The slow run repeats
it on 19x19 positions replayed from real games when the development data is
there.

MAO runs with the fully convolutional policy head: the paper's own policy
piece ends in global average pooling, so a move's logit sees the board only
through averages and cannot say where anything is (docs/models.md).
"""

from __future__ import annotations

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from harness.devdata import dev_sgf_dir  # noqa: E402
from harness.game import BLACK, Game  # noqa: E402
from harness.nets import build_model  # noqa: E402

FAMILY_MODELS = ["a0.tiny", "mobile.tiny", "mao.conv.tiny", "garb.tiny", "resnet18.tiny",
                 "qiqiao.tiny"]
POSITIONS = 256
TARGET = 0.95
EPOCHS, CHECK_EVERY = 80, 5
DEV_SGF = dev_sgf_dir()


def random_game_positions(size: int, count: int, seed: int = 0):
    """Distinct positions from random games: (history, side to move, next move)."""
    rng = np.random.default_rng(seed)
    histories, colors, moves, seen = [], [], [], set()
    while len(moves) < count:
        game = Game(size=size, komi=7.5, rules="superko")
        stop = int(rng.integers(6, 50))
        for n in range(stop):
            legal = np.flatnonzero(game.legal_moves()[:-1])
            if len(legal) == 0:
                break
            move = int(rng.choice(legal))
            if n < stop - 1:
                game.play(move)
                continue
            key = game.stones.tobytes() + bytes([game.to_play])
            if key not in seen:
                seen.add(key)
                histories.append([h.copy() for h in game.history])
                colors.append(game.to_play)
                moves.append(move)
    return histories, np.array(colors), np.array(moves)


def real_game_positions(size: int, count: int, seed: int = 0):
    """Positions from the development SGF games, one in every few moves."""
    from harness.sgf import iter_records, replay

    rng = np.random.default_rng(seed)
    histories, colors, moves, seen = [], [], [], set()
    for record in iter_records(DEV_SGF):
        if len(moves) >= count:
            break
        if record.reject is not None or record.size != size:
            continue
        try:
            game = replay(record)
        except ValueError:
            continue
        if len(game.history) != len(game.moves) + 1:
            continue  # mid-game setup: history and moves do not line up
        for i in range(int(rng.integers(0, 7)), len(game.moves), 7):
            color, move = game.moves[i]
            key = game.history[i].tobytes() + bytes([color])
            if key in seen or len(moves) >= count:
                continue
            seen.add(key)
            histories.append(game.history[: i + 1])
            colors.append(color)
            moves.append(move)
    return histories, np.array(colors), np.array(moves)


def encode(histories, colors, size: int) -> np.ndarray:
    """AlphaGo Zero planes from the features package, or our own three planes
    (own stones, opponent stones, black to play) when it is not there."""
    try:
        from harness.features import get_encoder, history_window
    except ImportError:
        x = np.zeros((len(histories), size, size, 3), np.float32)
        for i, (history, color) in enumerate(zip(histories, colors, strict=True)):
            stones = np.asarray(history[-1]).reshape(size, size)
            x[i, :, :, 0] = stones == color
            x[i, :, :, 1] = stones == 3 - color
            x[i, :, :, 2] = color == BLACK
        return x
    encoder = get_encoder("agz17")
    window = np.stack([history_window(h, encoder.history, size * size) for h in histories])
    return encoder.encode(window, colors, size)


def overfit(name: str, x: np.ndarray, moves: np.ndarray, board: int) -> list[float]:
    """Policy accuracy (inference mode) every few epochs until the target."""
    keras.utils.set_random_seed(0)
    model = build_model(name, board, x.shape[-1], heads=("policy", "value"), seed=0)
    model.compile(
        optimizer=keras.optimizers.Adam(5e-3),
        loss={"policy": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              "value": "mse"},
        loss_weights={"policy": 1.0, "value": 0.0},
    )
    targets = {"policy": moves, "value": np.zeros((len(moves), 1), np.float32)}
    history = []
    for _ in range(EPOCHS // CHECK_EVERY):
        model.fit(x, targets, batch_size=32, epochs=CHECK_EVERY, verbose=0)
        logits = np.asarray(model.predict_on_batch(x)["policy"])
        history.append(float(np.mean(logits.argmax(axis=1) == moves)))
        if history[-1] >= TARGET:
            break
    return history


@pytest.fixture(scope="module")
def random_positions_9x9():
    histories, colors, moves = random_game_positions(9, POSITIONS)
    return encode(histories, colors, 9), moves


@pytest.mark.filterwarnings("ignore:Gradients do not exist")
@pytest.mark.parametrize("name", FAMILY_MODELS)
def test_every_family_overfits_256_positions(name, random_positions_9x9):
    x, moves = random_positions_9x9
    assert len(moves) == POSITIONS and len(set(map(bytes, x))) == POSITIONS
    history = overfit(name, x, moves, 9)
    assert history[-1] >= TARGET, f"{name}: accuracy by {CHECK_EVERY} epochs {history}"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Gradients do not exist")
@pytest.mark.parametrize("name", FAMILY_MODELS)
def test_every_family_overfits_256_real_positions_19x19(name):
    if not DEV_SGF.is_dir():
        pytest.skip(f"development games not found at {DEV_SGF}")
    pytest.importorskip("harness.sgf", reason="needs the SGF reader")
    histories, colors, moves = real_game_positions(19, POSITIONS)
    assert len(moves) == POSITIONS
    history = overfit(name, encode(histories, colors, 19), moves, 19)
    assert history[-1] >= TARGET, f"{name}: accuracy by {CHECK_EVERY} epochs {history}"
