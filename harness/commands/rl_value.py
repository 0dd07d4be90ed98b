"""``harness rl-value RUN``: AlphaGo's value network from a policy-gradient run.

Plays ``sample_games`` games of the run's start policy, one random move and
the run's RL policy (:mod:`harness.rl.value_games`), keeps one position per
game, trains a value network on most of them (:mod:`harness.rl.value_net`)
and measures it on the held-out games beside the start's and the RL
network's own value heads. Writes ``RUN/value/``: ``waves/`` (each finished
wave of games, so a killed run resumes where it was), ``positions.npz`` (the
positions and outcomes), ``value.keras`` (or ``--out``), ``mse.csv``/``.md``.
"""

from __future__ import annotations

import argparse

HELP = ("a value network from a policy-gradient run's policy (AlphaGo: one position per "
        "game), and its MSE on held-out games")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.config_io import add_config_flags
    from harness.rl.value_net import ValueNetSettings

    parser.add_argument("run", help="a policy-gradient run directory (harness rl)")
    parser.add_argument("--out", help="the value network's .keras file "
                        "(default: RUN/value/value.keras)")
    add_config_flags(parser, ValueNetSettings)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import numpy as np

    from harness.config_io import ConfigError, given_values, read_saved_config
    from harness.files import atomic_json, format_table, read_json, save_table
    from harness.rl.config import RLConfig
    from harness.rl.value_net import ValueNetSettings

    run_dir = Path(args.run)
    settings = ValueNetSettings(**given_values(args, ValueNetSettings))
    config = read_saved_config(RLConfig, run_dir / "config.json")
    state = read_json(run_dir / "state.json")
    if state is None:
        raise ConfigError(f"{run_dir}: no run state (state.json)")
    sl = Path(settings.sl_network or run_dir / "models" / "gen-0000.keras")
    rl = Path(settings.rl_network or run_dir / state["best"])
    for path in (sl, rl):
        if not path.is_file():
            raise ConfigError(f"{path}: no such network")
    from harness.devices import use_backend
    from harness.features import get_encoder
    from harness.nets import load_model, save_model
    from harness.rl.monitor import calibration_bins
    from harness.rl.value_games import save_positions, value_positions
    from harness.rl.value_net import (
        mse_row,
        paired_row,
        split_games,
        train_value_network,
        value_of,
    )
    from harness.search import EvaluatorConfig, NetworkEvaluator

    use_backend(config.keras_backend)
    encoder = get_encoder(config.encoder)
    size = config.board_size
    out_dir = run_dir / "value"
    models = {"sl": load_model(sl), "rl": load_model(rl)}
    evaluators = {name: NetworkEvaluator(model, encoder, size,
                                         EvaluatorConfig(batch_size=settings.games_in_flight),
                                         inference="keras")
                  for name, model in models.items()}
    waves_dir = out_dir / "waves"
    games = {"sl": str(sl), "rl": str(rl), "board_size": size, "komi": config.komi,
             "rules": config.rules, "encoder": config.encoder, "seed": settings.seed,
             "u_max": settings.u_max, "games_in_flight": settings.games_in_flight}
    saved = read_json(waves_dir / "games.json")
    if saved is not None and saved != games:
        raise ConfigError(f"{waves_dir} holds games played with other settings ({saved}): "
                          "rerun with those, or delete it to start over")
    atomic_json(waves_dir / "games.json", games)

    def progress(so_far) -> None:
        print(f"  {so_far.games_played}/{settings.sample_games} games, "
              f"{len(so_far.outcome)} positions, {so_far.seconds / 60:.1f} min of play",
              flush=True)

    positions = value_positions(evaluators["sl"], evaluators["rl"], settings.sample_games,
                                size=size, komi=config.komi, rules=config.rules,
                                history=encoder.history, seed=settings.seed,
                                u_max=settings.u_max, parallel=settings.games_in_flight,
                                play_seconds=settings.play_hours * 3600, waves_dir=waves_dir,
                                progress=progress)
    print(f"{len(positions.outcome)} positions from {positions.games_played} games "
          f"({positions.ended_early} ended before their random move), "
          f"{positions.evaluations} network evaluations, "
          f"{positions.seconds / 60:.1f} min of play")
    save_positions(out_dir / "positions.npz", positions)
    rng = np.random.default_rng(settings.seed)
    train_rows, held_rows = split_games(positions, settings.held_out_share)
    network = load_model(rl if settings.start_from == "rl" else sl)
    train_value_network(network, settings, encoder, positions, train_rows, size, rng)
    out = Path(args.out) if args.out else out_dir / "value.keras"
    save_model(network, out)
    outcome = positions.outcome.astype(np.float64)
    held = value_of(network, encoder, positions, held_rows, size)
    rows = [mse_row("value network (held out)", held, outcome[held_rows]),
            mse_row("value network (trained on)", value_of(network, encoder, positions,
                                                           train_rows, size),
                    outcome[train_rows])]
    predictions = {"value network": held}
    for name, path in (("sl", sl), ("rl", rl)):
        other = value_of(models[name], encoder, positions, held_rows, size)
        predictions[f"{path.name} value head"] = other
        rows.append(mse_row(f"{path.name} value head (held out)", other, outcome[held_rows]))
        rows.append(paired_row(f"value network minus {path.name} (held out)", held, other,
                               outcome[held_rows]))
    header = ("network", "positions", "mse", "mse_low", "mse_high")
    table = [[r[k] for k in header] for r in rows]
    print(format_table(header, table))
    save_table(header, table, out_dir / "mse")
    bins = {name: calibration_bins(value, outcome[held_rows])
            for name, value in predictions.items()}
    save_table(("network", "bin", "predicted", "outcome", "positions"),
               [[name, *b] for name, rows_ in bins.items() for b in rows_],
               out_dir / "calibration")
    plot_calibration(bins, out_dir / "calibration.png",
                     f"held-out games of the RL policy ({len(held_rows)} positions)")
    print(f"wrote {out}, {out_dir / 'mse.csv'}, {out_dir / 'calibration.png'}")
    return 0


def plot_calibration(bins: dict[str, list[list]], path, title: str) -> None:
    import matplotlib.pyplot as plt

    from harness.figures import save_figure
    from harness.rl.strength import draw_calibration

    fig, ax = plt.subplots(figsize=(5, 4.5))
    draw_calibration(ax, bins, title)
    ax.legend(fontsize=8)
    save_figure(fig, path)
