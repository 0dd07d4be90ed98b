"""One place reports errors: ``harness.cli``. An expected error is one line
naming the command and exit code 2; ``--debug`` or a bug keeps the traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import expected_error, main, one_line
from harness.config_io import ConfigError
from harness.distributed import BackendError

REPO = Path(__file__).resolve().parents[1]
WRONG_SIGNATURE = '''
from harness import register_model


@register_model("twoconv")
def twoconv(size):  # a factory is called with (board_size, input_planes, heads)
    raise AssertionError("not called like this")
'''


def test_a_plugin_factory_of_the_wrong_signature_is_one_line_without_a_traceback(tmp_path):
    plugin = tmp_path / "bar_nets.py"
    plugin.write_text(WRONG_SIGNATURE)
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path}",
           "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "-m", "harness", "--plugin", str(plugin),
                           "models", "twoconv"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "The above exception" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("harness models:")]
    assert line.startswith("harness models: plugin model 'twoconv' failed to build (TypeError: ")
    assert line.endswith("it is called as FUNCTION(board_size, input_planes, heads)")


def test_an_expected_error_is_one_line_and_exit_code_2(tmp_path, capsys):
    code = main(["tournament", "random", "uct:5", "--komi", "nan", "-o", str(tmp_path / "t"),
                 "--no-progress"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert lines[0] == "harness tournament: command line: komi must be a finite number, got nan"
    assert not (tmp_path / "t").exists()


def test_debug_shows_the_traceback_of_an_expected_error(tmp_path):
    with pytest.raises(ConfigError, match="komi must be a finite number"):
        main(["--debug", "tournament", "random", "uct:5", "--komi", "nan",
              "-o", str(tmp_path / "t"), "--no-progress"])


def test_a_bug_keeps_its_traceback(monkeypatch):
    import harness.commands.models as models

    def broken(args):
        raise KeyError("a bug")

    monkeypatch.setattr(models, "run", broken)
    with pytest.raises(KeyError, match="a bug"):
        main(["models", "a0.tiny"])


def test_which_errors_are_the_users():
    assert expected_error(ConfigError("x.toml: unknown key 'lr'"))
    assert expected_error(FileNotFoundError(2, "No such file or directory", "d.h5"))
    assert expected_error(BackendError("ray is not installed"))
    assert not expected_error(TypeError("unsupported operand"))
    assert not expected_error(KeyError("a"))
    assert one_line(ConfigError("two problems:\n  lr < 0\n  epochs < 1")) == \
        "two problems:; lr < 0; epochs < 1"
    assert one_line(ValueError()) == "ValueError"


def test_a_bench_kind_names_itself(capsys, tmp_path):
    assert main(["bench", "ingest", str(tmp_path / "absent.sgf")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[0] == \
        f"harness bench ingest: {tmp_path / 'absent.sgf'}: not found (give a source)"
