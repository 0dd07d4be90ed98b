"""The Keras backend is chosen before Keras loads, and precision follows the device."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.config_io import ConfigError, from_mapping
from harness.cpu import cpu_flags, cpu_name
from harness.cpu import native_precision as cpu_native
from harness.devices import Device, compute_capability, forward_rows, native_precision, use_backend
from harness.search.runtime import padded_rows
from harness.train.config import TrainConfig

H100 = Device("jax", "0.10.2", ("NVIDIA H100 80GB HBM3",), (9, 0))
A100 = Device("torch", "2.11.0", ("NVIDIA A100-SXM4-40GB",) * 2, (8, 0))
V100 = Device("tensorflow", "2.21.0", ("Tesla V100-SXM2-16GB",), (7, 0))
T4 = Device("tensorflow", "2.21.0", ("Tesla T4",), (7, 5))
CPU = Device("tensorflow", "2.21.0")


@pytest.mark.parametrize(("device", "expected"), [
    (H100, "mixed_bfloat16"),
    (A100, "mixed_bfloat16"),
    (V100, "mixed_float16"),  # no bfloat16 before Ampere: float16, Keras scales the loss
    (T4, "mixed_float16"),
])
def test_a_gpu_trains_in_its_native_half_precision(device, expected):
    assert native_precision(device) == expected


def test_on_a_cpu_auto_is_the_cpus_own_choice():
    assert native_precision(CPU) == cpu_native(cpu_flags())


@pytest.mark.parametrize(("value", "expected"), [
    ("9.0", (9, 0)), ("8.6", (8, 6)), ((7, 5), (7, 5)), ("12", (12, 0)), (None, None)])
def test_compute_capability_reads_both_spellings(value, expected):
    assert compute_capability(value) == expected


def test_a_device_describes_backend_card_and_capability():
    assert H100.describe() == "jax 0.10.2 on GPU: NVIDIA H100 80GB HBM3, compute 9.0"
    assert A100.describe() == "torch 2.11.0 on GPU: 2 x NVIDIA A100-SXM4-40GB, compute 8.0"
    assert CPU.describe().startswith(f"tensorflow 2.21.0 on CPU: {cpu_name()}, ")


def test_cpu_name_is_the_model_name_line():
    text = "processor\t: 0\nmodel name\t: AMD EPYC 7B12\nflags\t\t: fpu\n"
    assert cpu_name(text) == "AMD EPYC 7B12"


def test_an_unknown_or_missing_backend_is_one_line(monkeypatch):
    with pytest.raises(ConfigError, match="choose from tensorflow, jax, torch"):
        use_backend("mxnet")
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="the torch package is not installed"):
        use_backend("torch")


def test_keras_cannot_switch_backend_once_loaded():
    import keras

    loaded = keras.backend.backend()
    other = "jax" if loaded != "jax" else "tensorflow"
    pytest.importorskip(other)
    with pytest.raises(ConfigError, match=f"already runs on {loaded}"):
        use_backend(other)
    assert use_backend(loaded) == loaded
    assert use_backend("") == loaded


def test_a_config_names_its_backend_and_refuses_an_unknown_one():
    config = from_mapping(TrainConfig, {"model": "a0.tiny", "data": "x.h5",
                                        "keras_backend": "jax"}, "test")
    assert config.keras_backend == "jax"
    with pytest.raises(ConfigError, match="keras_backend 'mxnet'"):
        from_mapping(TrainConfig, {"model": "a0.tiny", "data": "x.h5",
                                   "keras_backend": "mxnet"}, "test")


def test_the_global_flag_sets_the_backend_of_the_command(tmp_path):
    pytest.importorskip("jax")
    code = ("import os, sys\n"
            "from harness.cli import main\n"
            "main(['--keras-backend', 'jax', 'models', 'a0.tiny', '--board-size', '5',\n"
            "      '--save', sys.argv[1]])\n"
            "import keras\n"
            "print('backend', os.environ['KERAS_BACKEND'], keras.backend.backend())\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "zoo")],
                          capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "backend jax jax"


@pytest.mark.parametrize(("rows", "padded"), [(1, 1), (2, 2), (3, 4), (5, 8), (64, 64),
                                              (65, 128), (128, 128)])
def test_shape_compiled_forwards_pad_batches_to_powers_of_two(rows, padded):
    assert padded_rows(rows) == padded


def _rl(games: int, parallel: int, leaves: int, **selfplay):
    from harness.rl.config import RLConfig

    return from_mapping(RLConfig, {"run": "t", "board_size": 9, "mcts": {"leaves_per_game": leaves},
                                   "selfplay": {"games": games, "parallel": parallel,
                                                **selfplay}}, "test")


def test_a_gpu_forward_carries_a_thousand_rows_and_a_cpu_what_was_asked():
    assert forward_rows(H100, 256) == 1024
    assert forward_rows(H100, 2048) == 2048
    assert forward_rows(CPU, 256) == 256


@pytest.mark.parametrize("games, parallel, leaves, filled, batch", [
    (2000, 16, 1, 1024, 1024),  # a thousand games at once fill one forward pass
    (2000, 16, 2, 512, 1024),   # two leaves each: half as many games
    (32, 16, 2, 32, 256),       # never more games than a generation has
])
def test_on_a_gpu_self_play_plays_enough_games_to_fill_a_batch(games, parallel, leaves,
                                                               filled, batch):
    from harness.rl.selfplay import filled_for_device

    played = filled_for_device(_rl(games, parallel, leaves), H100)
    assert (played.selfplay.parallel, played.evaluator.batch_size) == (filled, batch)


def test_a_cpu_ray_or_fill_device_off_plays_the_configured_games_at_once():
    import dataclasses

    from harness.rl.selfplay import filled_for_device

    config = _rl(2000, 16, 1)
    assert filled_for_device(config, CPU) is config
    ray = dataclasses.replace(config, backend="ray")
    assert filled_for_device(ray, H100) is ray
    off = _rl(2000, 16, 1, fill_device=False)
    assert filled_for_device(off, H100) is off
