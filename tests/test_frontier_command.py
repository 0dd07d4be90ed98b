"""``harness frontier``: two tiny families trained to two savepoints of training
FLOPs on a tiny dataset, scored, reported; then run again (nothing trained), a
killed run resumed, and bad configs refused in one line."""

from __future__ import annotations

import csv
import itertools
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("keras")

from harness.cli import main
from harness.config_io import ConfigError
from harness.frontier.config import FrontierConfig, family_of, savepoint_flops
from harness.frontier.plan import sample_budget
from harness.frontier.study import run_frontier
from harness.nets.info import read_model_info

MODELS = ["a0.tiny", "mobile.tiny"]
SAVEPOINTS = (5e8, 1e9)


def study_toml(folder: Path, data: Path, **changes) -> Path:
    values = {"models": MODELS, "data": str(data), "min_flops": SAVEPOINTS[0],
              "max_flops": SAVEPOINTS[1], "points_per_decade": 1, "batch_size": 16,
              "val_samples": 64, "lr": 0.006, **changes}
    lines = ["# a tiny study", "[frontier]"] + [f"{k} = {toml_value(v)}" for k, v in values.items()]
    path = folder / "study.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def toml_value(value) -> str:
    """JSON is TOML for numbers, strings and lists; a table is written inline."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def load(path: Path) -> FrontierConfig:
    from harness.frontier.config import load_frontier_config

    return load_frontier_config(path)


@pytest.fixture(scope="module")
def study(tmp_path_factory, dataset_5x5):
    folder = tmp_path_factory.mktemp("frontier")
    config = load(study_toml(folder, dataset_5x5))
    out = folder / "out"
    lines: list[str] = []
    result = run_frontier(config, out, progress=False, log=lines.append)
    return config, out, result, lines


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_every_savepoint_is_trained_to_its_flops_scored_and_reported(study):
    _, out, result, lines = study
    assert sum(": training " in line for line in lines) == 4
    rows = read_csv(out / "points.csv")
    keys = {(r["model"], float(r["savepoint_flops"]), r["metric"]) for r in rows}
    assert len(rows) == len(keys) == 2 * 2 * 2
    assert sorted({k[1] for k in keys}) == pytest.approx(SAVEPOINTS)
    for row in rows:
        checkpoint = out / "runs" / row["run"] / "epoch-001.keras"
        recorded = read_model_info(checkpoint).compute.train_flops
        assert int(row["flops"]) == recorded  # the checkpoint's own record
        assert recorded == pytest.approx(float(row["savepoint_flops"]), rel=0.03)
        assert float(row["low"]) <= float(row["value"]) <= float(row["high"])
        assert row["family"] == {"a0.tiny": "a0", "mobile.tiny": "mobile"}[row["model"]]
    # The frontier's corners are some of those points, at their recorded FLOPs.
    measured = {(r["model"], float(r["flops"]), r["metric"]): float(r["value"]) for r in rows}
    corners = read_csv(out / "frontier.csv")
    assert corners
    for c in corners:
        assert measured[c["model"], float(c["flops"]), c["metric"]] == float(c["value"])
    for name in ("fits.csv", "report.md", "frontier-policy_top1.png", "frontier-value_mse.png"):
        assert (out / name).exists(), name
    assert result.report == out / "report.md" and result.findings


def test_each_scored_savepoint_is_a_live_metrics_step_at_its_flops(study):
    from harness.metrics import JSONL_NAME, event_files, read_event_scalars, read_jsonl

    _, out, _, _ = study
    lines = read_jsonl(out / JSONL_NAME)
    seen = [(key.split("/")[0], line["step"]) for line in lines for key in line
            if key.endswith("/policy_top1")]
    assert len(seen) == len(set(seen))  # no savepoint twice, whichever tests ran before
    assert sorted(seen) == sorted({(r["model"], int(r["flops"]))
                                   for r in read_csv(out / "points.csv")})
    for line in lines:
        for row in read_csv(out / "points.csv"):
            key = f"{row['model']}/{row['metric']}"
            if key in line and line["step"] == int(row["flops"]):
                assert line[key] == float(row["value"])
                assert line[f"{key}_low"] == float(row["low"])
    assert {s.tag for s in read_event_scalars(out)} >= {"a0.tiny/value_mse",
                                                        "mobile.tiny/policy_top1"}
    run = out / "runs" / "a0.tiny-5.00e08"  # each training run writes its own
    assert any("epoch/train_loss" in line for line in read_jsonl(run / JSONL_NAME))
    assert event_files(run)


def test_a_second_invocation_trains_and_evaluates_nothing(study):
    config, out, _, _ = study
    checkpoints = sorted((out / "runs").glob("*/epoch-001.keras"))
    stamps = [p.stat().st_mtime_ns for p in checkpoints]
    lines: list[str] = []
    run_frontier(config, out, progress=False, log=lines.append)
    assert not [line for line in lines if ": training " in line or "evaluating" in line]
    assert sum("skipping" in line for line in lines) == 4
    assert [p.stat().st_mtime_ns for p in checkpoints] == stamps


def test_a_killed_run_resumes_and_only_it_trains(study):
    config, out, _, _ = study
    run = out / "runs" / "mobile.tiny-1.00e09"
    (run / "epoch-001.keras").unlink()  # killed before its epoch was committed
    (run / "state.json").write_text(json.dumps({}))
    lines: list[str] = []
    run_frontier(config, out, progress=False, log=lines.append)
    assert [line for line in lines if "unfinished" in line] == \
        ["mobile.tiny-1.00e09: unfinished; resuming"]
    assert sum("skipping" in line for line in lines) == 3
    assert (run / "epoch-001.keras").exists()


def test_the_metrics_switches_are_no_part_of_a_runs_identity(study):
    from dataclasses import replace

    config, out, _, _ = study
    lines: list[str] = []
    run_frontier(replace(config, tensorboard=False, metrics_jsonl=False), out, progress=False,
                 log=lines.append)
    assert sum("skipping" in line for line in lines) == 4


def test_a_run_made_under_other_settings_is_refused(study):
    config, out, _, _ = study
    from dataclasses import replace

    with pytest.raises(ConfigError, match=r"lr was 0\.006 for this run, the study now says 0\.01"):
        run_frontier(replace(config, lr=0.01), out, progress=False, log=lambda s: None)


def test_cooldown_savepoints_branch_one_constant_rate_run(tmp_path, dataset_5x5):
    """Hägele et al.'s savepoints: one constant-rate run cut at 1 - lr_cooldown
    of each savepoint, and a branch from each cut (optimizer state and step
    counter carried on) cooling the rate down to the savepoint's FLOPs."""
    from harness.train.run_dir import RunDir

    path = study_toml(tmp_path, dataset_5x5, models=["a0.tiny"], savepoints="cooldown",
                      lr_schedule="wsd", lr_cooldown=0.25, lr_warmup=0.1, lr_final=0.0003)
    out = tmp_path / "out"
    lines: list[str] = []
    run_frontier(load(path), out, progress=False, log=lines.append)
    rows = read_csv(out / "points.csv")
    assert len(rows) == 2 * 2
    runs = out / "runs"
    for row in rows:
        run = RunDir(runs / row["run"])
        state = run.read_state()
        assert int(row["flops"]) == read_model_info(run.path / state.checkpoint).compute.train_flops
        assert int(row["flops"]) == 3 * int(row["forward_flops"]) * int(row["samples"])
        assert int(row["flops"]) == pytest.approx(float(row["savepoint_flops"]), rel=0.03)
        stable = RunDir(runs / row["run"].replace("-cooldown", "-stable"))
        before, after = stable.read_metrics(), run.read_metrics()
        # the branch carries its stable run's history, then one cool-down epoch
        assert after[:-1] == before and len(after) == len(before) + 1
        assert {float(r["lr"]) for r in before} == {0.006}
        assert 0.0003 < float(after[-1]["lr"]) < 0.006 / 2
        assert state.samples_seen == int(row["samples"])
    # the second stable run continues the first: one constant-rate run in all
    first, second = (RunDir(runs / f"a0.tiny-{f}-stable").read_metrics()
                     for f in ("5.00e08", "1.00e09"))
    assert second[0] == first[0] and len(second) == 2
    again: list[str] = []
    run_frontier(load(path), out, progress=False, log=again.append)
    assert sum("skipping" in line for line in again) == 4
    assert not [line for line in again if "continuing" in line or "evaluating" in line]


@pytest.mark.parametrize(("changes", "message"), [
    ({"models": ["a0.tiny", "nosuch.tiny"]}, "nosuch"),
    ({"min_flops": 1e9, "max_flops": 1e9}, "min_flops (1e+09) must be below max_flops (1e+09)"),
    ({"min_flops": 1e3}, "less than one batch of 16"),
    ({"savepoints": "cooldown"}, "set lr_schedule = 'wsd'"),
    ({"savepoints": "cooldown", "lr_schedule": "wsd", "lr_cooldown": 0.01},
     "a cool-down needs a batch on either side"),
    ({"kind": "selfplay"}, "is a supervised study's setting; a self-play study trains as"),
    ({"budget": 100}, "budget is set per savepoint"),
    ({"max_flops_of": {"a0.small": 5e8}}, "max_flops_of names 'a0.small', which is not in models"),
    ({"max_flops_of": {"a0.tiny": 1e10}}, "a0.tiny's 1e+10 FLOPs must lie in min_flops..max_flops"),
])
def test_a_bad_config_is_one_line(tmp_path, capsys, dataset_5x5, changes, message):
    path = study_toml(tmp_path, dataset_5x5, **changes)
    code = main(["frontier", str(path), "-o", str(tmp_path / "out"), "--quiet"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    # the refusal in one line, then the closing line every long command prints
    assert len(lines) == 2 and "stopped with exit code 2" in lines[1]
    assert lines[0].startswith("harness frontier: ") and message in lines[0]
    assert not (tmp_path / "out" / "runs").exists()


def test_savepoints_are_log_spaced_and_include_both_ends():
    c = FrontierConfig(models=["a0.tiny"], data="d.h5", min_flops=1e10, max_flops=1e12,
                       points_per_decade=2)
    flops = savepoint_flops(c)
    assert len(flops) == 5 and flops[0] == pytest.approx(1e10) and flops[-1] == pytest.approx(1e12)
    ratios = [b / a for a, b in itertools.pairwise(flops)]
    assert ratios == pytest.approx([math.sqrt(10)] * 4)
    # a range that is not a whole number of steps: at least the density asked for
    assert len(savepoint_flops(FrontierConfig(models=["a0.tiny"], data="d.h5", min_flops=1e10,
                                              max_flops=3e10, points_per_decade=2))) == 2


def test_a_model_with_its_own_largest_savepoint_stops_there():
    from harness.frontier.plan import Network, plan_savepoints

    c = FrontierConfig(models=["a0.tiny", "a0.2.8"], data="d.h5", min_flops=1e10,
                       max_flops=1e12, points_per_decade=1, max_flops_of={"a0.2.8": 1e11})
    nets = [Network("a0.tiny", "a0", 1_000_000, 1), Network("a0.2.8", "a0", 100_000, 1)]
    planned = [(p.network.model, p.flops) for p in plan_savepoints(c, nets)]
    assert planned == [("a0.tiny", pytest.approx(1e10)), ("a0.2.8", pytest.approx(1e10)),
                       ("a0.tiny", pytest.approx(1e11)), ("a0.2.8", pytest.approx(1e11)),
                       ("a0.tiny", pytest.approx(1e12))]


def test_a_savepoint_is_whole_batches_of_the_same_flops_for_every_network():
    # 3 x forward FLOPs per sample: 1e9 FLOPs of a 1e5-FLOP network are 3,333 samples
    assert sample_budget(1e9, 100_000, 16) == 3328  # 208 batches, 0.1% short
    assert sample_budget(1e9, 100_000, 1) == 3333
    assert sample_budget(1e5, 100_000, 16) == 0


def test_families_are_zoo_names_without_their_sizes():
    c = FrontierConfig(models=["a0.tiny", "a0.20.256", "mao.conv.tiny", "resnet18"],
                       data="d.h5", min_flops=1, max_flops=10,
                       families={"resnet18": "residual"})
    assert [family_of(c, m) for m in c.models] == ["a0", "a0", "mao.conv", "residual"]
