"""Quiet, honest consoles: TensorFlow's CPU-only start-up lines filtered at
the file-descriptor level, plain progress lines off a terminal, and the
closing one-line summary of a long command."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings

import pytest

from harness import console

# Captured verbatim from `import tensorflow` on a CPU-only machine (TF 2.x).
NOISE_LINES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795511045.126595   12676 port.cc:153] oneDNN custom operations are on. "
    "You may see slightly different numerical results due to floating-point round-off errors "
    "from different computation orders. To turn them off, set the environment variable "
    "`TF_ENABLE_ONEDNN_OPTS=0`.",
    "I0000 00:00:1795511045.126907   12676 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "E0000 00:00:1795511048.323735   12676 cuda_platform.cc:52] failed call to cuInit: "
    "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
]
REAL_LINES = [
    "harness train: config.toml: unknown key 'lr'",
    "E0000 00:00:1795511048.323735   12676 some_op.cc:52] INVALID_ARGUMENT: shapes differ",
    "Traceback (most recent call last):",
]


@pytest.mark.parametrize("line", NOISE_LINES)
def test_tensorflows_cpu_only_start_up_lines_are_noise(line):
    assert console.is_noise(line)


@pytest.mark.parametrize("line", REAL_LINES)
def test_real_errors_are_not_noise(line):
    assert not console.is_noise(line)


SCRIPT = """
import os, sys
from harness import console
console.quiet_native_noise()
noise = {noise!r}
real = {real!r}
for line in noise[:2] + real[:1] + noise[2:] + real[1:]:
    os.write(2, (line + "\\n").encode())  # as native code writes: straight to fd 2
print("python stderr still works", file=sys.stderr)
os.write(2, b"progress 1/3\\rprogress 2/3\\r")
"""


def run_script(**env) -> str:
    code = SCRIPT.format(noise=NOISE_LINES, real=REAL_LINES)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=120, check=True,
        env={**os.environ, "HARNESS_VERBOSE": "", **env},
    )
    return done.stderr.decode()  # bytes: text mode would turn each \r into \n


def test_native_noise_written_to_descriptor_2_is_dropped_and_the_rest_kept_in_order():
    assert run_script() == (
        "\n".join(REAL_LINES) + "\npython stderr still works\nprogress 1/3\rprogress 2/3\r"
    )


def test_verbose_keeps_every_native_line():
    stderr = run_script(HARNESS_VERBOSE="1")
    for line in NOISE_LINES + REAL_LINES:
        assert line in stderr


TF2ONNX_WARNING = ("In the future `np.object` will be defined as the corresponding NumPy "
                   "scalar.")


def test_kerass_tf2onnx_probe_warning_is_ignored_here_and_in_child_processes(monkeypatch):
    monkeypatch.setenv("PYTHONWARNINGS", "default::ResourceWarning")
    with warnings.catch_warnings(record=True) as caught:
        console.quiet_python_noise()
        warnings.warn(TF2ONNX_WARNING, FutureWarning, stacklevel=1)
        warnings.warn("another future change", FutureWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["another future change"]
    child = subprocess.run(
        [sys.executable, "-c", f"import warnings; warnings.warn({TF2ONNX_WARNING!r}, "
                               "FutureWarning); warnings.warn('kept', FutureWarning)"],
        capture_output=True, text=True, timeout=60, check=True, env=dict(os.environ))
    assert "np.object" not in child.stderr and "kept" in child.stderr
    assert os.environ["PYTHONWARNINGS"].startswith("default::ResourceWarning,")
    with warnings.catch_warnings():  # leave this process's filters as they were
        console.quiet_python_noise()  # twice: the entry is not repeated
    assert os.environ["PYTHONWARNINGS"].count("np.object") == 1


@pytest.mark.slow
def test_importing_tensorflow_through_the_cli_shows_no_cuda_noise():
    code = (
        "from harness import console; console.quiet_native_noise()\n"
        "import tensorflow as tf; print(float(tf.constant(1.0) + 1))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True,
        env={**os.environ, "HARNESS_VERBOSE": ""},
    )
    assert done.stdout.strip() == "2.0"
    assert "cuInit" not in done.stderr and "cuda drivers" not in done.stderr


def test_line_progress_prints_plain_lines_with_counts_percent_and_postfix():
    out = io.StringIO()
    bar = console.LineProgress(total=4, desc="games", unit="game", file=out, interval=0)
    bar.update(1)
    bar.set_postfix_str("a:1 b:0")
    bar.update(1)
    bar.close()
    bar.close()  # closing twice prints once
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in out.getvalue()
    assert lines[0].startswith("games: 1/4 game (25%), ")
    assert lines[1].startswith("games: 2/4 game (50%), ") and lines[1].endswith(", a:1 b:0")
    assert lines[2] == lines[1] or lines[2].startswith("games: 2/4 game (50%), ")


def test_line_progress_waits_its_interval_and_always_reports_at_the_end():
    out = io.StringIO()
    bar = console.LineProgress(total=None, desc="ingest", unit=" games", initial=5, file=out,
                               interval=3600)
    for _ in range(1000):
        bar.update(1)
    assert out.getvalue() == ""
    bar.close()
    assert out.getvalue().startswith("ingest: 1005 games, ")


def test_progress_is_tqdm_on_a_terminal_and_lines_elsewhere(monkeypatch):
    from tqdm import tqdm

    monkeypatch.setenv(console.TERMINAL_ENV, "0")
    assert isinstance(console.progress(total=3, disable=True), console.LineProgress)
    monkeypatch.setenv(console.TERMINAL_ENV, "1")
    assert isinstance(console.progress(total=3, disable=True), tqdm)


def test_a_long_command_ends_with_a_one_line_summary():
    done = subprocess.run(
        [sys.executable, "-m", "harness", "ingest", "/nonexistent-archive", "-o", "x.h5"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("harness ingest: stopped with exit code 2 after ")
