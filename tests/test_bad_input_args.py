"""Nonsense arguments: one line on stderr, a non-zero exit, and nothing written.

The regression tests of issue 23 item 6 (the GTP engine's ``komi nan`` and
negative ``time_settings`` belong to the engine's own tests); each failed on
commit 2e81a61, where these commands wrote empty datasets, empty ranking
tables or a stray ``config.json``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from harness.cli import main as harness_main
from harness.data.synthetic import random_sgf

REPO = Path(__file__).resolve().parents[1]


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def refused(argv: list[str], root: Path, capsys) -> str:
    """Run ``harness ARGV``; assert exit 2 and no new file under ``root``; the stderr line."""
    before = files_under(root)
    code = harness_main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert files_under(root) == before
    # The reason, then the line the CLI adds to every failed command.
    assert len(err) == 2 and " stopped with exit code 2 after " in err[1]
    return err[0]


@pytest.mark.parametrize("size", [4, 30])
def test_ingest_refuses_a_board_size_the_rules_do_not_play(tmp_path, capsys, size):
    (tmp_path / "game.sgf").write_text(random_sgf(0))
    line = refused(["ingest", str(tmp_path / "game.sgf"), "-o", str(tmp_path / "x.h5"),
                    "--board-size", str(size), "--quiet"], tmp_path, capsys)
    assert line == f"harness ingest: --board-size {size} unsupported (must be 5..19)"


def test_ingest_refuses_a_negative_minimum(tmp_path, capsys):
    (tmp_path / "game.sgf").write_text(random_sgf(0))
    line = refused(["ingest", str(tmp_path / "game.sgf"), "-o", str(tmp_path / "x.h5"),
                    "--board-size", "9", "--min-moves", "-1", "--quiet"], tmp_path, capsys)
    assert line == "harness ingest: --min-moves must be at least 0, got -1"


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["random", "uct:5", "--board-size", "4"], "board_size 4 unsupported (must be 5..19)"),
        (["random", "nosuch:3"], "unknown player 'nosuch:3' (expected one of:"),
        (["random", "gtp:no-such-engine-program --gtp"],
         "program 'no-such-engine-program' not found"),
        (["random", "mcts:no/such/model.keras@10"], "model file 'no/such/model.keras' not found"),
        (["random", "uct:5", "--komi", "nan"], "komi must be a finite number, got nan"),
        (["random", "uct:5", "--move-time", "-1"], "move_time must be a positive number"),
        (["random", "uct:5", "--rules", "japanese"], "rules 'japanese' unknown"),
    ],
)
def test_tournament_refuses_nonsense_before_writing_anything(tmp_path, capsys, args, why):
    line = refused(["tournament", *args, "-o", str(tmp_path / "t"), "--no-progress"],
                   tmp_path, capsys)
    assert line.startswith("harness tournament: command line: ") and why in line


def test_datagen_refuses_a_board_size_the_rules_do_not_play(tmp_path, capsys):
    line = refused(["datagen", "uct:5", "--board-size", "30", "-o", str(tmp_path / "d")],
                   tmp_path, capsys)
    assert line == "harness datagen: command line: board_size 30 unsupported (must be 5..19)"


def _not_a_zip(path: Path) -> str:
    path.write_bytes(b"not a model")
    return "not a .keras model file (not a zip archive)"


def _bad_config(path: Path) -> str:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", '{"class_name": "Lambda", "config": {"function": "boom"}}')
        z.writestr("metadata.json", "{}")
    return "cannot load model"


@pytest.mark.parametrize("make", [_not_a_zip, _bad_config])
def test_rl_init_with_a_refused_model_writes_no_run(tmp_path, capsys, make):
    model = tmp_path / "refused.keras"
    why = make(model)
    line = refused(["rl", "--config", str(REPO / "configs" / "rl-9x9-quick.toml"),
                    "--run", "r", "--runs-dir", str(tmp_path / "runs"), "--init", str(model)],
                   tmp_path, capsys)
    assert line.startswith(f"harness rl: --init {model}: ") and why in line
