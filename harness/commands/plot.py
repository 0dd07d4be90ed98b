"""``harness plot RUNS... -o results/NAME/``: training figures for several runs."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "plot accuracy and value MSE of training runs vs epochs, parameters and speed"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="run directories (models/NAME) or run names under --runs-dir")
    parser.add_argument("-o", "--out", required=True, help="output directory (PNG and SVG)")
    parser.add_argument("--runs-dir", default="models", help="where run names are looked up")
    parser.add_argument("--bench", default="results/bench",
                        help="directory of 'harness bench models' CSV tables for forward speed")
    parser.add_argument("--no-measure", action="store_true",
                        help="do not load models to count parameters or measure speed")


def _run_path(name: str, runs_dir: str) -> Path:
    path = Path(name)
    return path if path.is_dir() else Path(runs_dir) / name


def run(args: argparse.Namespace) -> int:
    from harness.files import format_table, save_table
    from harness.report.training_plots import load_run, plot_runs, read_bench_speeds, summary_rows

    runs = [load_run(_run_path(name, args.runs_dir)) for name in args.runs]
    speeds = read_bench_speeds(args.bench) if Path(args.bench).is_dir() else {}
    if not args.no_measure:
        from harness.report.training_plots import fill_model_facts

        fill_model_facts(runs, speeds)
    out = Path(args.out)
    written = plot_runs(runs, out, speeds)
    header, rows = summary_rows(runs)
    save_table(header, rows, out / "training_summary")
    print(format_table(header, rows))
    for path in written:
        print(f"wrote {path}")
    return 0
