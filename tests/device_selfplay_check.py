"""Device self-play (``[selfplay] path = "device"``) in a process of its own,
since Keras fixes its backend when it loads: tests/test_jaxgo_search.py runs
it with ``KERAS_BACKEND=jax`` and reads the JSON line it prints last.

Plays a batch of games with each root rule it is given straight from
:func:`harness.jaxgo.games.play_batch`, then (with ``gumbel``) one
generation of ``harness rl`` on the device path, and reports what the test
checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

BOARD = 7


def games_report(root: str) -> dict:

    from harness import api
    from harness.game.position import Game
    from harness.jaxgo.games import play_batch
    from harness.jaxgo.search import DeviceSearch, model_params, network
    from harness.search.config import MCTSConfig

    model = api.build_model("a0.tiny", BOARD, encoder="agz17")
    mcts = MCTSConfig(playouts=6, fast_playouts=3, full_search_prob=0.5, root=root,
                      gumbel_k=4, add_noise=True, temperature_moves=6)
    records, evaluations = play_batch(DeviceSearch(network(model), mcts), model_params(model),
                                      4, BOARD, komi=7.0, seed=5)
    targets = [p for r in records for p in r.policies if p is not None]
    # Probability a target puts on moves the position did not allow: replay each
    # game and read the harness's own legal moves where a target was recorded.
    stray = 0.0
    for record in records:
        replay = Game(BOARD, 7.0)
        for (_, move), target in zip(record.game.moves, record.policies, strict=True):
            if target is not None:
                legal = replay.legal_moves()
                stray = max(stray, float(target[~legal].sum()))
            replay.play(move)
    return {
        "games": len(records),
        "ended": sum(r.game.is_over for r in records),
        "truncated": sum(r.truncated for r in records),
        "known_results": sum(r.result.known for r in records),
        "evaluations": evaluations,
        "moves": sum(r.length for r in records),
        "targets": len(targets),
        "fast_moves": sum(not f for r in records for f in r.full),
        "target_sums": [round(float(p.sum()), 4) for p in targets[:3]],
        "stray_mass": stray,
    }


def equivalence_report(root: str) -> dict:
    """Today's host search plays two games without noise; the device search
    (same network, same settings) is asked at every position they reached."""
    import dataclasses

    from harness import api
    from harness.jaxgo.equivalence import search_agreement
    from harness.search.config import MCTSConfig

    model = api.build_model("a0.tiny", BOARD, encoder="agz17")
    mcts = MCTSConfig(playouts=16, root=root, gumbel_k=8)
    return dataclasses.asdict(search_agreement(model, mcts, BOARD, games=2, max_moves=30,
                                               komi=7.0, seed=0))


def one_generation(root: Path, backend: str = "local") -> tuple[int, dict[str, str]]:
    """One ``harness rl`` generation on the device path: (games, SGF texts by name)."""
    from harness.config_io import from_mapping
    from harness.rl.config import RLConfig
    from harness.rl.run import RLRun

    config = from_mapping(RLConfig, {
        "run": "rl", "runs_dir": str(root), "board_size": BOARD, "komi": 7.0,
        "model": "a0.tiny", "encoder": "agz17", "generations": 1, "seed": 3,
        "backend": backend,
        "mcts": {"playouts": 4, "root": "gumbel", "gumbel_k": 4, "add_noise": True},
        "selfplay": {"games": 4, "parallel": 2, "unit_games": 2, "path": "device",
                     "workers": 2},
        "train": {"steps": 2, "batch_size": 8}, "window": {"initial": 2},
    }, "device_selfplay_check")
    state = RLRun(config, log=lambda _: None).run()
    return state.games_total, {p.name: p.read_text() for p in sorted((root / "rl").rglob("*.sgf"))}


def run_report(root: Path) -> dict:
    games, sgfs = one_generation(root)
    return {"run_games": games, "run_sgfs": len(sgfs)}


def ray_report(root: Path) -> dict:
    """The same generation locally and on two Ray actors, each playing its
    units on its own device path: the same games, SGF for SGF?"""
    games, local = one_generation(root / "local")
    ray_games, ray = one_generation(root / "ray", "ray")
    return {"ray_games": ray_games, "local_games": games, "ray_sgfs_equal": local == ray,
            "ray_sgfs": len(ray)}


def main(root: Path, search_roots: list[str]) -> dict:
    """``search_roots``: the ``[mcts] root`` rules to play games with; the
    ``harness rl`` generation only with the first (Gumbel)."""
    import keras

    report = {"backend": keras.backend.backend()}
    report.update({rule: games_report(rule) for rule in search_roots})
    report.update({f"{rule}_equivalence": equivalence_report(rule) for rule in search_roots})
    if "gumbel" in search_roots:
        report.update(run_report(root))
    else:  # the slow case also runs Ray actors and the bench that compares the paths
        from harness.cli import main as harness

        report.update(ray_report(root))

        report["bench_status"] = harness([
            "bench", "device-selfplay", "--model", "a0.tiny", "--board-size", str(BOARD),
            "--playouts", "4", "--games", "4", "--root", search_roots[0],
            "--save", str(root / "bench")])
        report["bench_rows"] = (root / "bench.csv").read_text().count("\n") - 1
    return report


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2:])))
