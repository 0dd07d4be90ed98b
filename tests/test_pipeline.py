"""The training input stream: shuffled across games, one symmetry per sample, reproducible.

The symmetry check is independent of how the stream applies it: a sample of
the augmented stream must equal ``transform_planes``/``transform_policy``
(the features package's own functions) applied to the same sample of an
unaugmented stream.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness.data.assemble import DatasetAttributes
from harness.data.dataset import open_dataset
from harness.data.ingest import IngestConfig, ingest
from harness.data.pipeline import BatchStream, PipelineConfig, batch_mixing
from harness.data.rows import GameInfo, GamePositions
from harness.data.synthetic import random_game, write_random_sgfs
from harness.data.writer import write_games
from harness.features.symmetry import transform_planes, transform_policy

SMALL = PipelineConfig(batch_size=32, shuffle_buffer=256, block_rows=32, threads=2, seed=3)


@pytest.fixture(scope="module")
def games_file(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pipeline")
    source = write_random_sgfs(folder / "games.sgf", 48, size=9, moves=30, seed=11)
    out = folder / "games.h5"
    ingest(
        IngestConfig(
            sources=[str(source)],
            output=out,
            board_size=9,
            val_games=8,
            seed=1,
            workers=1,
            progress=False,
        )
    )
    return out


def _all(stream: BatchStream, epoch: int = 0):
    batches = list(stream.epoch(epoch))
    x = np.concatenate([b[0] for b in batches])
    y = {k: np.concatenate([b[1][k] for b in batches]) for k in batches[0][1]}
    w = {k: np.concatenate([b[2][k] for b in batches]) for k in batches[0][2]}
    return batches, x, y, w


def test_batches_have_keras_shapes_and_targets(games_file):
    with BatchStream(games_file, "train", SMALL) as stream:
        batches, x, y, w = _all(stream)
        assert len(batches) == len(stream) == len(stream.rows) // 32
        assert batches[0][0].shape == (32, 9, 9, 21) and x.dtype == np.float32
        assert y["policy"].shape == (len(x), 82) and np.allclose(y["policy"].sum(axis=1), 1)
        assert y["value"].shape == (len(x), 1) and set(np.unique(y["value"])) <= {-1.0, 0.0, 1.0}
        rows, _ = stream.delivery(0)
        with open_dataset(games_file) as ds:
            known = ds.positions(rows)["value_known"]
        assert np.array_equal(w["value"], known.astype(np.float32))  # masked where unknown
        assert 0 < w["value"].sum() < len(x)
        assert np.all(w["policy"] == 1)


def test_batches_mix_many_games(games_file):
    with BatchStream(games_file, "train", SMALL) as stream, open_dataset(games_file) as ds:
        rows, _ = stream.delivery(0)
        game = ds.positions(rows)["game_id"]
        per_batch = [len(set(game[i : i + 32])) for i in range(0, len(rows) - 31, 32)]
        # 256-position windows of 32-row blocks hold about 10 of these 30-move games.
        assert min(per_batch) >= 4 and np.mean(per_batch) >= 8, per_batch
        assert len(set(rows)) == len(rows) and set(rows) <= set(stream.rows)  # no repeats


def test_batch_mixing_measures_games_per_batch_against_a_uniform_draw(games_file):
    in_order = replace(SMALL, shuffle=False, augment=False)
    with BatchStream(games_file, "train", in_order) as stream:
        mixing = batch_mixing(stream)
        games = len(set(stream.dataset.positions(stream.rows)["game_id"]))
    # 32 consecutive rows of ~31-position games touch two games, at most three.
    assert 1.5 <= mixing.distinct_games <= 3 and mixing.batches == len(stream)
    whole_file = replace(SMALL, shuffle_buffer=1 << 20)
    with BatchStream(games_file, "train", whole_file) as stream:
        shuffled = batch_mixing(stream)
    assert shuffled.uniform_distinct_games == pytest.approx(mixing.uniform_distinct_games)
    # 40 games of ~31 positions, 32 drawn: about 40 * (1 - (1 - 1/40) ** 32) = 22 games.
    assert shuffled.uniform_distinct_games == pytest.approx(games * (1 - (1 - 1 / games) ** 32),
                                                            rel=0.05)
    assert shuffled.distinct_games > 0.9 * shuffled.uniform_distinct_games
    assert shuffled.most_of_one_game < mixing.most_of_one_game


def test_window_parts_spread_each_game_over_the_epoch(games_file):
    # ~40 training games of ~31 positions in 256-row windows (about 8 games
    # each): whole, a window's games fill its 8 batches; in 4 parts, the
    # first 8 batches take a quarter of each of 4 windows.
    parted = replace(SMALL, window_parts=4)
    with BatchStream(games_file, "train", SMALL) as whole, \
            BatchStream(games_file, "train", parted) as spread:
        rows_whole, _ = whole.delivery(1)
        rows_spread, _ = spread.delivery(1)
        assert len(spread) == len(whole)  # the same epoch length
        assert len(set(rows_spread)) == len(rows_spread)  # no position twice
        assert set(rows_spread) <= set(spread.rows)
        game = whole.dataset.positions(spread.rows)["game_id"]
        of_row = dict(zip(spread.rows.tolist(), game.tolist(), strict=True))
        span = 8 * 32
        seen_whole = {of_row[r] for r in rows_whole[:span].tolist()}
        seen_spread = {of_row[r] for r in rows_spread[:span].tolist()}
        assert len(seen_spread) >= 2 * len(seen_whole), (len(seen_spread), len(seen_whole))
        assert batch_mixing(spread, epoch=1, span=8).span_games == len(seen_spread)
        assert batch_mixing(whole, epoch=1, span=8).span_games == len(seen_whole)
        # The same order on a second pass of the epoch (a resumed run), a new one next epoch.
        assert np.array_equal(spread.delivery(1)[0], rows_spread)
        assert not np.array_equal(spread.delivery(2)[0], rows_spread)
        batches = list(spread.epoch(1))
        assert sum(len(b[0]) for b in batches) == len(rows_spread)


def _augmented_and_plain(path, encoder, epoch=2):
    aug_cfg = PipelineConfig(**{**SMALL.__dict__, "encoder": encoder})
    plain_cfg = PipelineConfig(**{**aug_cfg.__dict__, "augment": False})
    with BatchStream(path, "train", aug_cfg) as aug, BatchStream(path, "train", plain_cfg) as plain:
        _, xa, ya, _ = _all(aug, epoch)
        _, xp, yp, _ = _all(plain, epoch)
        rows_a, ks = aug.delivery(epoch)
        rows_p, _ = plain.delivery(epoch)
    assert np.array_equal(rows_a, rows_p) and len(set(ks)) == 8  # same samples, all 8 used
    return xa, ya, xp, yp, rows_a, ks


def test_each_sample_gets_one_symmetry_on_planes_and_policy_together(games_file):
    # agz17 planes are stones and colour only, so rotating the position rotates the planes.
    xa, ya, xp, yp, _, ks = _augmented_and_plain(games_file, "agz17")
    for i, k in enumerate(ks):
        assert np.array_equal(xa[i], transform_planes(xp[i], int(k))), (i, k)
        assert np.array_equal(ya["policy"][i], transform_policy(yp["policy"][i], int(k), 9))
    assert np.array_equal(ya["value"], yp["value"])


def test_augmented_planes_encode_the_transformed_position(games_file):
    """The symmetry is applied to the stored stones before encoding (any encoder)."""
    from harness.features import get_encoder

    encoder = get_encoder("cazenave21")
    xa, ya, _, yp, rows, ks = _augmented_and_plain(games_file, "cazenave21")
    with open_dataset(games_file) as ds:
        stored = ds.positions(rows, history=encoder.history)
    for i, k in enumerate(ks):
        history = stored["stones"][i].T.reshape(9, 9, -1)  # T positions as planes
        turned = transform_planes(history, int(k)).reshape(81, -1).T
        expected = encoder.encode(turned[None], stored["to_play"][i : i + 1], 9)[0]
        assert np.array_equal(xa[i], expected), (i, k)
        assert np.array_equal(ya["policy"][i], transform_policy(yp["policy"][i], int(k), 9))


def test_the_policy_target_is_the_stored_move(games_file):
    cfg = PipelineConfig(**{**SMALL.__dict__, "augment": False})
    with BatchStream(games_file, "train", cfg) as stream, open_dataset(games_file) as ds:
        _, _, y, _ = _all(stream)
        rows, _ = stream.delivery(0)
        assert np.array_equal(y["policy"].argmax(axis=1), ds.positions(rows)["move"])


def test_validation_is_every_position_once_in_file_order_whatever_the_threads(games_file):
    results = []
    for threads in (1, 3):
        cfg = PipelineConfig(batch_size=10, threads=threads, cazenave=False).validation()
        with BatchStream(games_file, "val", cfg) as stream:
            rows, ks = stream.delivery(0)
            assert np.array_equal(rows, stream.rows) and not ks.any()
            batches, x, y, _ = _all(stream)
            assert len(x) == len(stream.rows) and len(batches[-1][0]) == len(x) - 10 * (
                len(batches) - 1
            )
            results.append((x, y["policy"]))
    assert np.array_equal(results[0][0], results[1][0])
    assert np.array_equal(results[0][1], results[1][1])


def test_training_order_depends_on_seed_and_epoch_not_threads(games_file):
    def first_batch(threads, seed, epoch):
        cfg = PipelineConfig(**{**SMALL.__dict__, "threads": threads, "seed": seed})
        with BatchStream(games_file, "train", cfg) as stream:
            return next(stream.epoch(epoch))[0]

    reference = first_batch(1, 3, 0)
    assert np.array_equal(first_batch(4, 3, 0), reference)
    assert not np.array_equal(first_batch(1, 3, 1), reference)
    assert not np.array_equal(first_batch(1, 4, 0), reference)


def test_a_batch_can_be_produced_on_its_own(games_file):
    with BatchStream(games_file, "train", SMALL) as stream:
        batches = list(stream.epoch(1))
        again = next(stream.epoch(1, start=5))
        assert np.array_equal(again[0], batches[5][0])


@pytest.fixture(scope="module")
def selfplay_file(tmp_path_factory) -> Path:
    """Games with ownership, score and visit distributions, as self-play will write them."""
    rng = np.random.default_rng(4)
    games = []
    for g in range(6):
        game = random_game(rng, 9, 20)
        n = len(game.moves)
        stones = np.array(game.history[:-1], np.int8)
        to_play = np.array([c for c, _ in game.moves], np.int8)
        moves = np.array([p for _, p in game.moves], np.int16)
        # Visits: 3 entries per move, the move played getting most.
        offsets = np.arange(0, 3 * n + 1, 3)
        index = np.stack([moves, (moves + 1) % 81, np.full(n, 81)], axis=1).ravel().astype(np.int16)
        prob = np.tile(np.array([0.5, 0.25, 0.25], np.float16), n)
        info = GameInfo(
            source="selfplay",
            index=g,
            digest=f"{g:032x}",
            length=n,
            result="B+R",
            winner=1,
            result_known=True,
        )
        rows = GamePositions(
            stones=stones,
            to_play=to_play,
            move=moves,
            value=np.where(to_play == 1, 1, -1).astype(np.int8),
            value_known=True,
            soft_policy=(offsets, index, prob),
            ownership=rng.integers(-1, 2, (n, 81)).astype(np.int8),
            score=rng.normal(size=n).astype(np.float32),
        )
        games.append((info, rows))
    out = tmp_path_factory.mktemp("selfplay") / "selfplay.h5"
    write_games(out, games, DatasetAttributes(board_size=9, encoder="agz17"))
    return out


def test_soft_policy_ownership_and_score_follow_the_sample_and_its_symmetry(selfplay_file):
    cfg = PipelineConfig(batch_size=16, shuffle_buffer=64, block_rows=16, threads=2, seed=9)
    with BatchStream(selfplay_file, "train", cfg) as stream, open_dataset(selfplay_file) as ds:
        assert stream.targets == ("policy", "value", "ownership", "score")
        _, x, y, w = _all(stream)
        assert x.shape[1:] == (9, 9, 17)  # agz17, the encoder recorded in the file
        rows, ks = stream.delivery(0)
        stored = ds.positions(rows)
        own = ds.file["positions/ownership"][...][rows].astype(np.float32)
        score = ds.file["positions/score"][...][rows]
    assert set(w) == {"policy", "value", "ownership", "score"}
    for i, k in enumerate(ks):
        soft = np.zeros(82, np.float32)
        m = stored["move"][i]
        soft[[m, (m + 1) % 81, 81]] += [0.5, 0.25, 0.25]
        assert np.allclose(y["policy"][i], transform_policy(soft, int(k), 9))
        planes = own[i].reshape(9, 9, 1)
        assert np.array_equal(y["ownership"][i], transform_planes(planes, int(k)).ravel())
    assert np.allclose(y["score"][:, 0], score)


def test_keras_trains_from_the_stream(games_file):
    keras = pytest.importorskip("keras")
    inputs = keras.Input((9, 9, 21))
    flat = keras.layers.Flatten()(inputs)
    model = keras.Model(
        inputs,
        {
            "policy": keras.layers.Dense(82, name="policy")(flat),
            "value": keras.layers.Dense(1, activation="tanh", name="value")(flat),
        },
    )
    model.compile(
        optimizer="sgd",
        loss={"policy": keras.losses.CategoricalCrossentropy(from_logits=True), "value": "mse"},
    )
    with BatchStream(games_file, "train", SMALL) as stream:
        history = model.fit(stream.as_keras(), epochs=2, verbose=0, shuffle=False)
        assert stream.epoch_number == 2  # epochs 0 and 1 served
        steps = len(stream)
        more = model.fit(
            stream.as_tf_dataset(), steps_per_epoch=steps, epochs=1, verbose=0, shuffle=False
        )
    assert np.isfinite(history.history["loss"]).all() and np.isfinite(more.history["loss"]).all()


def test_bench_rows_say_the_window_parts_setting_and_agree_with_batch_mixing(games_file):
    from harness.bench.pipeline import mixing_rows

    default = {row[0]: row[4] for row in mixing_rows(games_file, "agz17", 32)}
    parted = {row[0]: row[4] for row in mixing_rows(games_file, "agz17", 32, 4)}
    assert "games per batch, uniform draw" in default and "games per batch" in default
    assert set(parted) == {f"{name}, 4 window parts" for name in default
                           if name != "games per batch, uniform draw"}
    span = next(name for name in default if name.startswith("games in "))
    batches = int(span.split()[2].replace(",", ""))
    assert default[f"positions per game in {batches:,} batches"] == pytest.approx(
        batches * 32 / default[span])
