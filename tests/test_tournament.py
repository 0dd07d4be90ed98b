"""Round robins: colours alternate, openings repeat across colours, reruns resume."""

import json
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from harness.arena.datagen import DatagenConfig, datagen_tasks
from harness.arena.games import RESULTS_FILE, read_results
from harness.arena.tournament import OtherPlayersResults, TournamentConfig, run_tournament, schedule
from harness.config_io import ConfigError
from harness.players.uct import UCTPlayer


def small(tmp_path, **kw):
    values = dict(
        players=["random", "uct=uct:40"],
        out=str(tmp_path / "t"),
        board_size=7,
        komi=7.5,
        games_per_pair=4,
        opening_moves=2,
        seed=3,
    )
    values.update(kw)
    return TournamentConfig(**values)


def test_schedule_alternates_colours_and_shares_openings_between_colours(tmp_path):
    config = small(tmp_path, players=["a=random", "b=random", "c=random"])
    tasks = schedule(config)
    assert len(tasks) == 3 * 4
    ab = [t for t in tasks if {t.black, t.white} == {"a", "b"}]
    assert [t.black for t in ab] == ["a", "b", "a", "b"]
    assert ab[0].opening == ab[1].opening != ab[2].opening == ab[3].opening
    assert len({t.game_id for t in tasks}) == len(tasks)


def test_bad_configs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="at least two players"):
        TournamentConfig(players=["random"])
    with pytest.raises(ValueError, match="unique"):
        TournamentConfig(players=["random", "random"])
    with pytest.raises(ValueError, match="anchor"):
        TournamentConfig(players=["random", "uct:10"], anchor="gnugo")


def test_tournament_plays_every_game_once_and_resumes(tmp_path):
    config = small(tmp_path)
    rows = run_tournament(config, progress=False)
    assert len(rows) == 4 and all(r.error is None for r in rows)
    out = tmp_path / "t"
    assert len(list((out / "games").glob("*.sgf"))) == 4
    for name in ("ranking.csv", "ranking.md", "ranking.html", "win_matrix.csv", "elo.png"):
        assert (out / name).exists(), name
    # UCT beats random on 7x7.
    assert sum(r.winner == "uct" for r in rows) >= 3

    # A killed run: drop the last two results (one torn line), rerun, get 4 again.
    lines = (out / RESULTS_FILE).read_text().splitlines()
    (out / RESULTS_FILE).write_text("\n".join(lines[:2]) + "\n" + lines[2][:20])
    rerun = run_tournament(config, progress=False)
    assert sorted(r.game_id for r in rerun) == sorted(r.game_id for r in rows)
    ids = [
        json.loads(line)["game_id"]
        for line in (out / RESULTS_FILE).read_text().splitlines()
        if line.startswith("{") and line.endswith("}")
    ]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert (out / RESULTS_FILE).read_text().count("\n\n") == 0  # no blank lines either


def test_an_engine_that_cannot_start_is_an_error_game_excluded_from_ratings(tmp_path):
    config = small(
        tmp_path,
        players=["random", 'broken=gtp:"/nonexistent/engine --gtp"'],
        games_per_pair=2,
        opening_moves=0,
    )
    rows = run_tournament(config, progress=False)
    assert len(rows) == 2
    assert all(r.error for r in rows)
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    counts = {k: summary[k] for k in ("games", "rated_games", "error_games")}
    assert counts == {"games": 2, "rated_games": 0, "error_games": 2}
    assert summary["stopped"] == "round robin"
    assert summary["unresolved"] == [["random", "broken", 0.5, 2]]  # no rated game: a coin flip
    assert len(read_results(config.out)) == 2


def test_command_line_config_errors_are_one_line(tmp_path):
    import argparse

    from harness.commands.tournament import add_arguments, config_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    toml = tmp_path / "t.toml"
    toml.write_text('[tournament]\nplayers = ["random", "uct:10"]\ngames_per_pair = "two"\n')
    with pytest.raises(ConfigError, match="games_per_pair must be int"):
        config_from_args(parser.parse_args(["--config", str(toml)]))


# --- the playouts a tournament sets -------------------------------------------------------


def test_a_tournament_overriding_playouts_reports_the_playouts_played(tmp_path, monkeypatch):
    """``playouts = 12`` replaces ``uct:5``'s own count: the ranking, the
    results, the SGFs and the searches themselves all say 12. A player given
    a name keeps it, and summary.json says what it played."""
    searches = []
    search = UCTPlayer.search

    def recorded(self, game):
        tree = search(self, game)
        searches.append((self.name, self.last_simulations))
        return tree

    monkeypatch.setattr(UCTPlayer, "search", recorded)
    config = small(tmp_path, players=["uct:5", "fast=uct:7", "random"], playouts=12,
                   games_per_pair=2, opening_moves=0)
    rows = run_tournament(config, progress=False)

    names = {"uct:12", "fast", "random"}
    assert all(r.error is None for r in rows)
    assert {r.black for r in rows} | {r.white for r in rows} == names
    ranking = pd.read_csv(tmp_path / "t" / "ranking.csv")
    assert set(ranking["player"]) == names
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["players"] == {"uct:12": "uct:12", "fast": "uct:12", "random": "random"}
    sgf_names = {name for sgf in (tmp_path / "t" / "games").glob("*.sgf")
                 for name in re.findall(r"P[BW]\[([^\]]*)\]", sgf.read_text())}
    assert sgf_names == names
    assert {name for name, _ in searches} == {"uct:12", "fast"}
    assert {count for _, count in searches} == {12}


def test_resuming_with_another_budget_is_refused_rather_than_mixed(tmp_path):
    def at(playouts):
        return small(tmp_path, players=["uct:5", "random"], playouts=playouts,
                     games_per_pair=1, opening_moves=0)

    run_tournament(at(6), progress=False)
    with pytest.raises(OtherPlayersResults, match=r"uct:6"):
        run_tournament(at(7), progress=False)


def test_datagen_names_its_games_by_the_budget_played(tmp_path):
    config = DatagenConfig(player="uct:200", playouts=9, games=2, out=str(tmp_path / "d"))
    tasks = datagen_tasks(config)
    assert {(t.black, t.white) for t in tasks} == {("uct:9#black", "uct:9#white")}
    assert {t.black_spec.playouts for t in tasks} == {9}


def test_players_are_parsed_once_and_specs_are_never_written_out_to_be_parsed_again(
        monkeypatch, tmp_path):
    from harness.arena import tournament
    from harness.arena.tournament import NamedPlayer, parse_entry
    from harness.players.spec import PlayerSpec, parse_player

    spec = PlayerSpec("mcts", model=Path("runs/r/best.keras"), playouts=16, randomize=True)
    uct = parse_player("uct:10")
    config = TournamentConfig(players=[NamedPlayer("gen3", spec), "uct:10"], playouts=None,
                              out=str(tmp_path))

    def refuse(text):
        raise AssertionError(f"parsed {text!r} again")

    monkeypatch.setattr(tournament, "parse_player", refuse)
    assert config.named_players() == [("gen3", spec), ("uct:10", uct)]
    again = replace(config, out=str(tmp_path / "other"), playouts=8)  # no parse either
    assert [name for name, _ in again.named_players()] == ["gen3", "uct:8"]
    monkeypatch.undo()
    # The record names each player by text that reads back as its spec.
    assert config.record()["players"] == ["gen3=mcts:runs/r/best.keras@16,randomize=1",
                                          "uct:10"]
    assert parse_entry(config.record()["players"][0]) == ("gen3", spec)
    assert parse_entry("uct:10")[0] == ""  # unnamed: the tournament names it by its label
