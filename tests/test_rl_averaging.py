"""The moving average of the weights (harness/rl/averaging.py) on every Keras
backend installed: each has its own compiled update, so each is checked
against the decayed sum worked out by hand (one process per backend, since
Keras fixes its backend when it loads)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
from test_backends import REQUIRED_ON_CI

from harness.devices import BACKENDS

SCRIPT = """
import numpy as np
from harness.nets import build_model
from harness.rl.averaging import WeightAverage

model = build_model("a0.tiny", 5, 17, seed=1)
w0 = model.get_weights()
average = WeightAverage(model, 0.75)
model.set_weights([w + 1.0 for w in w0])
average.update()
model.set_weights([w + 3.0 for w in w0])
average.update()
expected = [0.75 * (0.75 * a + 0.25 * (a + 1.0)) + 0.25 * (a + 3.0) for a in w0]
values = average.values()
assert len(values) == len(expected)
worst = max(float(np.abs(v - e).max()) for v, e in zip(values, expected, strict=True))
assert worst < 1e-5, worst
untouched = WeightAverage(model, 0.9, initial=[w * 0.0 for w in w0]).values()
assert all(not v.any() for v in untouched)
print("ok", worst)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_average_is_the_decayed_sum_on_the_backend(backend):
    if importlib.util.find_spec(backend) is None:
        if os.environ.get("CI") and backend in REQUIRED_ON_CI:
            pytest.fail(f"{backend} is not installed on CI (the Makefile installs it)")
        pytest.skip(f"{backend} not installed")
    env = {**os.environ, "KERAS_BACKEND": backend}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1].startswith("ok")
