"""Every zoo family on every Keras backend installed: trains through ``harness
train``, plays self-play through the search's compiled forward (which agrees
with Keras's predict), learns from it, reloads with ``safe_mode`` and plays a
searched game (tests/backend_check.py,
one process per case, since Keras fixes its backend when it loads).

CI installs TensorFlow and JAX, so there a missing one fails instead of
skipping; PyTorch runs where it is installed. ``pytest -rA`` (or the summary
line conftest.py prints) shows the matrix.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.devices import BACKENDS
from harness.nets import parse_model_name
from harness.nets.registry import PRESETS

CHECK = Path(__file__).with_name("backend_check.py")
REQUIRED_ON_CI = ("tensorflow", "jax")
BOARD_POINTS = 7 * 7 + 1


def _families() -> dict[str, str]:
    """The first tiny preset of each zoo family."""
    found: dict[str, str] = {}
    for preset in PRESETS:
        if preset.scale == "tiny":
            found.setdefault(parse_model_name(preset.name).family, preset.name)
    return found


FAMILIES = _families()


def test_every_family_has_a_tiny_preset_in_the_matrix():
    assert set(FAMILIES) >= {"resnet", "mobile", "resnet18", "mao", "garb", "qiqiao", "nbt",
                             "transformer"}


@pytest.mark.parametrize("model", sorted(FAMILIES.values()))
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_family_trains_plays_and_reloads_on_the_backend(backend, model, tmp_path):
    if importlib.util.find_spec(backend) is None:
        if os.environ.get("CI") and backend in REQUIRED_ON_CI:
            pytest.fail(f"{backend} is not installed on CI (the Makefile installs it)")
        pytest.skip(f"{backend} not installed")
    env = {**os.environ, "KERAS_BACKEND": backend, "HARNESS_INFERENCE": "keras"}
    done = subprocess.run([sys.executable, str(CHECK), model, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["backend"] == backend
    assert result["model"] == model
    assert result["finite_loss"] and result["train_loss"] > 0
    assert result["selfplay_games"] == 2
    assert result["policy_shape"] == [1, BOARD_POINTS] and result["policy_finite"]
    assert result["moves"] > 0
    assert result["forward_rows"] == [3, 3] and result["forward_error"] < 1e-4
