"""A policy-gradient run's own curves: how often the learner beat its start and
how far its policy moved, step by step, from the run's stats alone.

Every step plays its games against one past self drawn from the pool; the
steps that drew generation 0 are games against the starting (supervised)
policy, both sides sampling, so they measure the win rate against the start
with no extra games. They are pooled in blocks of steps (one step's 32 games
give an interval 35 points wide), each block's Wilson interval beside the
per-step KL from the start and entropy of the learner's policy on its own
positions.
"""

from __future__ import annotations

from pathlib import Path

START_OPPONENT = "gen-0000"


def against_start(rows: list[dict], block: int) -> list[list]:
    """``[first step, last step, steps, wins, games, rate, low, high]`` for
    each block of ``block`` steps that holds games against generation 0
    (draws count half)."""
    from harness.stats.proportions import wilson_interval

    blocks: dict[int, list[dict]] = {}
    for row in rows:
        if row.get("opponents") == START_OPPONENT:
            blocks.setdefault((row["generation"] - 1) // block, []).append(row)
    table = []
    for key in sorted(blocks):
        steps = blocks[key]
        games = sum(int(r["games"]) for r in steps)
        wins = sum(float(r["win_rate"]) * int(r["games"]) for r in steps)
        low, high = wilson_interval(wins, games)
        table.append([key * block + 1, (key + 1) * block, len(steps), wins, games,
                      wins / games, low, high])
    return table


AGAINST_START_COLUMNS = ("first_step", "last_step", "steps", "wins", "games", "win_rate",
                         "win_rate_low", "win_rate_high")


def plot_pg_curves(rows: list[dict], blocks: list[list], path: Path, title: str) -> Path:
    """Win rate against the start (blocks, 95% Wilson) and against each
    step's opponent; KL from the start and entropy per step."""
    import matplotlib.pyplot as plt

    from harness.figures import save_figure

    steps = [r["generation"] for r in rows]
    fig, (wins, moved) = plt.subplots(1, 2, figsize=(11, 3.8))
    wins.plot(steps, [r["win_rate"] for r in rows], color="lightgrey", linewidth=0.8,
              label="against the step's opponent")
    middle = [(b[0] + b[1]) / 2 for b in blocks]
    wins.errorbar(middle, [b[5] for b in blocks],
                  yerr=[[b[5] - b[6] for b in blocks], [b[7] - b[5] for b in blocks]],
                  fmt="o", capsize=3, label="against the start (steps pooled)")
    wins.axhline(0.5, color="grey", linestyle="--", linewidth=0.8)
    wins.set_xlabel("step")
    wins.set_ylabel("learner's win rate")
    wins.legend(fontsize=8)
    moved.plot(steps, [r["kl_start"] for r in rows], label="KL(start || policy), nats")
    moved.set_xlabel("step")
    moved.set_ylabel("KL from the start, nats")
    entropy = moved.twinx()
    entropy.plot(steps, [r["entropy"] for r in rows], color="tab:orange", linewidth=0.8)
    entropy.set_ylabel("policy entropy, nats", color="tab:orange")
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)


def write_pg_curves(run_dir: Path, out: Path, block: int = 20) -> tuple[Path, list[list]]:
    """``pg.csv``/``.md`` (the blocks against the start) and ``pg.png`` for a
    policy-gradient run; returns the figure's path and the table."""
    from harness.files import save_table
    from harness.rl.strength import generation_rows

    rows = generation_rows(run_dir)
    if not rows:
        raise ValueError(f"{run_dir}: no finished step")
    blocks = against_start(rows, block)
    save_table(AGAINST_START_COLUMNS, blocks, out / "pg")
    figure = plot_pg_curves(rows, blocks, out / "pg.png",
                            f"{Path(run_dir).name}: {len(rows)} steps, games sampled")
    return figure, blocks
