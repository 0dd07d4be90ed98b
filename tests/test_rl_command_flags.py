"""``harness rl``'s flags over a config file, and a resumed run's own config."""

import argparse
from pathlib import Path

from harness.commands.rl import add_arguments, config_from_args
from harness.config_io import save_config

GUMBEL = Path(__file__).resolve().parents[1] / "configs" / "rl-9x9-gumbel.toml"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_model_flag_swaps_the_network_and_keeps_the_recipe(tmp_path):
    config = config_from_args(_args("--config", str(GUMBEL), "--model", "a0.6.64",
                                    "--run", "wide", "--runs-dir", str(tmp_path)))
    assert config.model == "a0.6.64"
    assert (config.mcts.root, config.mcts.playouts, config.selfplay.games) == ("gumbel", 16, 96)
    assert config.heads == ["ownership", "score"]


def test_resume_keeps_the_saved_network_over_a_model_flag(tmp_path):
    started = config_from_args(_args("--config", str(GUMBEL), "--model", "a0.6.64",
                                     "--run", "wide", "--runs-dir", str(tmp_path)))
    started.run_dir.mkdir(parents=True)
    save_config(started, started.run_dir / "config.json")
    resumed = config_from_args(_args("--config", str(GUMBEL), "--model", "a0.tiny", "--resume",
                                     "--hours", "2.0", "--run", "wide",
                                     "--runs-dir", str(tmp_path)))
    assert resumed.model == "a0.6.64" and resumed.max_hours == 2.0


def test_the_live_metrics_switches_are_flags_and_may_change_on_resume(tmp_path):
    started = config_from_args(_args("--config", str(GUMBEL), "--no-tensorboard",
                                     "--run", "quiet", "--runs-dir", str(tmp_path)))
    assert (started.tensorboard, started.metrics_jsonl) == (False, True)
    started.run_dir.mkdir(parents=True)
    save_config(started, started.run_dir / "config.json")
    resumed = config_from_args(_args("--config", str(GUMBEL), "--resume", "--tensorboard",
                                     "--no-metrics-jsonl", "--run", "quiet",
                                     "--runs-dir", str(tmp_path)))
    assert (resumed.tensorboard, resumed.metrics_jsonl) == (True, False)


ARMS = GUMBEL.parent / "rl-19x19-arms"


def test_a_config_laid_over_another_changes_only_its_own_keys(tmp_path):
    base = GUMBEL.parent / "rl-19x19-from-sl.toml"
    config = config_from_args(_args("--config", str(base), "--config", str(ARMS / "today.toml"),
                                    "--config", str(ARMS / "anchor.toml"),
                                    "--runs-dir", str(tmp_path)))
    assert config.run == "rl19-anchor" and config.max_hours == 0.6  # the later layers'
    assert (config.train.anchor, config.train.anchor_kl) == ("start", 0.5)
    assert config.monitor.dataset == "datasets/tygem-2011h1.h5"
    assert config.init == "docs/results/nets/go19-sl-a0.conv.avg.6.48.keras"
    # A table merges key by key: the base's other [train] keys stay.
    assert (config.train.lr, config.train.steps, config.train.value_mix) == (0.0002, 100, 0.25)
    assert (config.board_size, config.mcts.root, config.mcts.playouts) == (19, "gumbel", 16)
    alone = config_from_args(_args("--config", str(base), "--runs-dir", str(tmp_path)))
    assert (alone.run, alone.train.anchor_kl, alone.max_hours) == ("rl-19x19-from-sl", 0.0, 1.8)


def test_every_arm_of_the_19x19_ablation_layers_over_its_study(tmp_path):
    base = GUMBEL.parent / "rl-19x19-from-sl.toml"
    arms = sorted(ARMS.glob("*.toml"))
    assert {a.stem for a in arms} >= {"today", "anchor", "mix", "starts", "warmup", "gate"}
    runs = set()
    for arm in arms:
        layers = [base, ARMS / "today.toml", arm]
        config = config_from_args(_args(*[x for p in layers for x in ("--config", str(p))],
                                        "--runs-dir", str(tmp_path)))
        runs.add(config.run)
    assert len(runs) == len(arms)  # each arm its own run directory
    everything = [base, *[ARMS / f"{n}.toml" for n in
                          ("today", "anchor", "mix", "starts", "warmup", "gate")]]
    combined = config_from_args(_args(*[x for p in everything for x in ("--config", str(p))],
                                      "--run", "rl19-all", "--runs-dir", str(tmp_path)))
    assert combined.gating.enabled and combined.train.mix_share == 0.25
    assert combined.selfplay.start_probability == 0.5 and combined.train.anchor_kl == 0.5


def final_window(config) -> int:
    """The window's size after 100 generations of the config's games."""
    from harness.rl.window import next_window

    size = config.window.initial
    for generation in range(100):
        size = next_window(size, config.selfplay.games, generation, config.window)
    return size


def test_every_arm_of_the_9x9_learning_methods_layers_over_the_recipe(tmp_path):
    arms = sorted((GUMBEL.parent / "rl-9x9-arms").glob("*.toml"))
    configs = {arm.stem: config_from_args(_args("--config", str(GUMBEL), "--config", str(arm),
                                                "--runs-dir", str(tmp_path)))
               for arm in arms}
    assert configs["score-utility"].evaluator.score_utility == 0.2
    assert configs["score-utility"].train.ema_decay == 0.0
    assert configs["ema"].train.ema_decay == 0.995
    assert configs["ema"].evaluator.score_utility == 0.0
    assert (configs["steps-x2"].train.steps, configs["steps-half"].train.steps) == (400, 100)
    # The arm's cap binds: the recipe's window stops growing at 960 games, below its own cap.
    recipe = config_from_args(_args("--config", str(GUMBEL), "--runs-dir", str(tmp_path)))
    assert (final_window(recipe), final_window(configs["window-small"])) == (960, 480)
    assert configs["reply"].heads == ["ownership", "score", "reply"]
    assert configs["soft-policy"].heads == ["ownership", "score", "soft_policy"]
    for name, config in configs.items():  # only their own keys change: the recipe stays
        assert (config.model, config.mcts.playouts, config.selfplay.games) == ("a0.4.32", 16, 96)
        assert config.heads[:2] == ["ownership", "score"]
        assert len(config.heads) == 2 or name in ("reply", "soft-policy")
    assert len({c.run for c in configs.values()}) == len(arms)
