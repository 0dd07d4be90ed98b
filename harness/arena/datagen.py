"""Games between two copies of a player, as an SGF archive (``harness datagen``).

When a study has no archive, the harness makes its own training data: the
UCT baseline or any GTP engine (GNU Go) plays itself from random openings.
It is a tournament with one pairing repeated, so it reuses the tournament's
scheduling, worker processes and resumable results file; the SGFs land in
``OUT/games/`` where ``harness ingest OUT/games`` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.arena.games import (
    GameRow,
    GameTask,
    append_result,
    latest_rows,
    play_all,
    random_opening,
    read_results,
)
from harness.arena.settings import GenerateSettings, PlaySettings
from harness.config_io import setting
from harness.players.spec import PlayerSpec, parse_player


@dataclass(frozen=True)
class DatagenConfig(PlaySettings, GenerateSettings):
    """What to generate. ``player`` is the spec text; ``playouts``, when set,
    replaces its ``@N`` (see :attr:`spec`)."""

    out: str = setting("datasets/generated", "output directory (SGFs in OUT/games/)",
                       aliases=("-o",))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.games < 1:
            raise ValueError("games must be at least 1")
        from harness.arena.checks import check_game_settings, check_player_specs

        check_game_settings(self)
        object.__setattr__(self, "_spec", parse_player(self.player))  # parsed once
        check_player_specs([self.spec])

    @property
    def spec(self) -> PlayerSpec:
        """The player both colours are, with ``playouts`` applied (as a tournament does)."""
        return self._spec.with_playouts(self.playouts)

    @property
    def games_dir(self) -> Path:
        return Path(self.out) / "games"


def datagen_tasks(config: DatagenConfig) -> list[GameTask]:
    # The two colours get distinct names so that stateful players (GTP
    # engines) are two processes, each following its own game.
    spec = config.spec
    return [
        GameTask(
            game_id=f"{k:06d}",
            black=f"{spec.label}#black",
            white=f"{spec.label}#white",
            black_spec=spec,
            white_spec=spec,
            opening=random_opening(config.board_size, config.opening_moves, config.seed * 7919 + k),
            seed=config.seed * 1_000_003 + k,
        )
        for k in range(config.games)
    ]


def generate(config: DatagenConfig, *, progress: bool = True) -> list[GameRow]:
    """Play the missing games; returns every row (resumable like a tournament)."""
    from harness.console import progress as tqdm

    config.games_dir.mkdir(parents=True, exist_ok=True)
    done = {row.game_id for row in read_results(config.out)}
    todo = [t for t in datagen_tasks(config) if t.game_id not in done]
    bar = tqdm(
        total=config.games,
        initial=config.games - len(todo),
        desc="datagen",
        unit="game",
        disable=not progress,
    )
    for row in play_all(todo, config):
        append_result(config.out, row)
        bar.update(1)
    bar.close()
    return latest_rows(read_results(config.out))
