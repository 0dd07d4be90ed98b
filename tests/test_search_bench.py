"""``harness bench selfplay`` runs end to end on a tiny network (no timing asserted)."""

from __future__ import annotations

import argparse
import math

import pytest

pytest.importorskip("keras")


def recorded_searches(monkeypatch) -> list:
    """The searches the bench builds from now on (the real class, remembered)."""
    import harness.search

    searches = []

    class RecordedSearch(harness.search.BatchedSearch):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            searches.append(self)

    monkeypatch.setattr(harness.search, "BatchedSearch", RecordedSearch)
    return searches


def test_bench_selfplay_prints_every_figure(tmp_path, capsys):
    from harness.bench import selfplay

    parser = argparse.ArgumentParser()
    selfplay.add_arguments(parser)
    args = parser.parse_args([
        "--model", "a0.tiny", "--board-size", "5", "--playouts", "6", "--games", "3",
        "--leaves", "2", "--seconds", "3", "--bare-every", "1", "--bare-seconds", "0.2",
        "--uct-seconds", "0.2", "--save", str(tmp_path / "selfplay"),
    ])
    assert selfplay.run(args) == 0
    table = capsys.readouterr().out
    for measure in ("bare model evaluations", "self-play evaluations", "self-play / bare",
                    "self-play moves", "self-play games", "UCT playouts"):
        assert measure in table
    rows = (tmp_path / "selfplay.csv").read_text().splitlines()[1:]
    values = {row.split(",")[0]: float(row.split(",")[1]) for row in rows}
    assert values["self-play evaluations"] > 0 and values["self-play moves"] > 0
    assert 0 < values["self-play / bare"] < 10
    assert math.isfinite(values["bare model evaluations"])


@pytest.mark.parametrize("flag", [False, True])
def test_bench_selfplay_fill_eyes_reaches_the_search(flag, monkeypatch, capsys):
    from harness.bench import selfplay

    searches = recorded_searches(monkeypatch)
    parser = argparse.ArgumentParser()
    selfplay.add_arguments(parser)
    args = parser.parse_args([
        "--model", "a0.tiny", "--board-size", "5", "--playouts", "4", "--games", "2",
        "--seconds", "1", "--bare-seconds", "0.1", "--uct-seconds", "0",
        *(["--fill-eyes"] if flag else []),
    ])
    assert selfplay.run(args) == 0
    assert [s.config.fill_eyes for s in searches] == [flag]
    assert ("own eyes may be filled" in capsys.readouterr().out) == flag


def test_bench_selfplay_reports_a_bad_model_in_one_line(capsys):
    from harness.cli import main

    assert main(["bench", "selfplay", "--model", "missing.keras"]) == 2
    first = capsys.readouterr().err.strip().splitlines()[0]
    assert first == "harness bench selfplay: missing.keras: no such model file"


def test_bench_selfplay_times_the_search_alone_with_an_oracle(monkeypatch, capsys):
    from harness.bench import selfplay

    searches = recorded_searches(monkeypatch)
    parser = argparse.ArgumentParser()
    selfplay.add_arguments(parser)
    args = parser.parse_args([
        "--oracle", "--host-threads", "2", "--board-size", "5", "--playouts", "4",
        "--games", "4", "--seconds", "1", "--uct-seconds", "0",
    ])
    assert selfplay.run(args) == 0
    table = capsys.readouterr().out
    assert [type(s.evaluator).__name__ for s in searches] == ["OracleEvaluator"]
    assert [s.config.host_threads for s in searches] == [2]
    assert "oracle share of self-play" in table and "2 host threads" in table
    assert "bare model" not in table
