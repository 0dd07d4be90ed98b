"""Training figures: curves vs epochs, final metrics vs parameters and forward speed."""

from __future__ import annotations

import argparse
import json

import pytest

from harness.commands import plot as plot_command
from harness.report.training_plots import (
    load_run,
    plot_runs,
    read_bench_speeds,
    summary_rows,
)

HEADER = "epoch,step,lr,samples_seen,wall_time_s,val_policy_top1,val_policy_top5,val_value_mse\n"


def make_run(root, name, model, top1s, mses):
    run = root / name
    run.mkdir(parents=True)
    lines = [f"{e},{e * 10},0.01,{e * 640},{e * 2.5},{a},{min(1.0, a + 0.2)},{m}"
             for e, (a, m) in enumerate(zip(top1s, mses, strict=True), start=1)]
    (run / "metrics.csv").write_text(HEADER + "\n".join(lines) + "\n")
    (run / "config.json").write_text(json.dumps({"model": model}))
    return run


def assert_figure(path_stem) -> None:
    png, svg = path_stem.with_suffix(".png"), path_stem.with_suffix(".svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in svg.read_text()


def test_curves_and_final_metrics_figures(tmp_path):
    a = load_run(make_run(tmp_path, "small", "a0.small", [0.2, 0.3, 0.35], [0.9, 0.8, 0.7]))
    b = load_run(make_run(tmp_path, "mobile", "mobile.small", [0.25, 0.4], [0.85, 0.6]))
    assert a.final("val_policy_top1") == 0.35 and b.final("val_value_mse") == 0.6
    a.params, b.params = 950_000, 420_000
    out = tmp_path / "figs"
    written = plot_runs([a, b], out, speeds={"a0.small": 3000.0, "mobile": 5000.0})
    assert (a.speed, b.speed) == (3000.0, 5000.0)  # by model name, else by run name
    for stem in ("curves_vs_epochs", "curves_vs_samples", "curves_vs_seconds",
                 "final_vs_params", "final_vs_speed"):
        assert_figure(out / stem)
    assert len(written) == 10
    header, rows = summary_rows([a, b])
    assert rows[0][header.index("top-1 % [95% CI]")] == "35.0"  # no interval recorded
    assert rows[1][header.index("params")] == 420_000


def test_speed_figure_needs_a_speed(tmp_path):
    a = load_run(make_run(tmp_path, "r", "a0.tiny", [0.1], [1.0]))
    written = plot_runs([a], tmp_path / "figs")
    assert [p.name for p in written] == [f"curves_vs_{x}.{fmt}"
                                         for x in ("epochs", "samples", "seconds")
                                         for fmt in ("png", "svg")]


def test_bench_table_speeds_take_the_best_batch_size(tmp_path):
    (tmp_path / "models.csv").write_text(
        "model,batch,params,positions/s\n"
        "a0.small,1,950000,400\na0.small,64,950000,3100\nmobile.small,64,420000,5200\n")
    (tmp_path / "rules.csv").write_text("kind,moves/s\nplay,1000000\n")  # no model column
    assert read_bench_speeds(tmp_path) == {"a0.small": 3100.0, "mobile.small": 5200.0}


def test_not_a_run_is_one_line(tmp_path):
    with pytest.raises(ValueError, match="not a training run"):
        load_run(tmp_path)


def test_plot_command_measures_params_and_speed_from_checkpoints(tmp_path, capsys):
    from harness.nets import build_model, save_model

    run = make_run(tmp_path / "models", "tiny", "a0.tiny", [0.1, 0.2], [1.0, 0.9])
    model = build_model("a0.tiny", 9, 17, seed=0)
    save_model(model, run / "best.keras")
    parser = argparse.ArgumentParser()
    plot_command.add_arguments(parser)
    out = tmp_path / "results" / "study"
    code = plot_command.run(parser.parse_args(
        ["tiny", "--runs-dir", str(tmp_path / "models"), "-o", str(out),
         "--bench", str(tmp_path / "none")]))
    assert code == 0
    text = capsys.readouterr().out
    assert "tiny" in text and "final_vs_speed.png" in text
    with open(out / "training_summary.csv") as f:
        rows = f.read().splitlines()
    fields = dict(zip(rows[0].split(","), rows[1].split(","), strict=True))
    assert int(fields["params"]) == model.count_params()
    assert float(fields["forward pos/s"]) > 0 and float(fields["top-1 % [95% CI]"]) == 20.0
