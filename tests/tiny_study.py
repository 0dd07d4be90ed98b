"""The smallest study that exercises every stage, as suite TOML for tests.

Games are generated (UCT on 7x7), so no data files are needed; callers add
their own ``[train]`` section (and ``[rl]``, plugins, ...) to the same
data, tournament and bench settings.
"""

TEMPLATE = """
name = "{name}"
board_size = 7
komi = 7.0
results_dir = "{root}/results"
models_dir = "{root}/models"
datasets_dir = "{root}/datasets"
{top}
[data]
player = "uct:20"
games = {games}
opening_moves = 2
encoder = "agz17"
val_games = 2
min_moves = 5
workers = 1

{sections}

[tournament]
baselines = ["random"]
games_per_pair = 2
opening_moves = 1
parallel = 1

[bench]
batch_sizes = {batch_sizes}
seconds = 0.05
diagrams = 1
"""


def tiny_suite(root, name: str, sections: str, *, top: str = "", games: int = 10,
               batch_sizes: str = "[1, 8]") -> str:
    """Suite TOML writing under ``root``; ``sections`` holds [train] (and more)."""
    return TEMPLATE.format(name=name, root=root, top=top, games=games, sections=sections,
                           batch_sizes=batch_sizes)
