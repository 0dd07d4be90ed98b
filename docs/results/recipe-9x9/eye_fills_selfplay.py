"""The measurement behind the self-play table of docs/results.md ("Why the
losses to GNU Go end with every stone dead"): one network plays self-play
games with its run's own search settings, every game played out (no
resignation), once with eye fills allowed and once without. For each played-out
game it finds the winner's first pass and counts the stones the loser loses
after it, and whether the result at that pass differs from the final one.

    python docs/results/recipe-9x9/eye_fills_selfplay.py models/cmp-gumbel \
        models/cmp-gumbel/models/gen-0198.keras 96
"""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from harness.config_io import read_saved_config
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.players.network import load_network
from harness.rl.config import RLConfig
from harness.search import BatchedSearch
from harness.search.evaluator import NetworkEvaluator
from harness.search.game_driver import play_games


def main(run: Path, model_path: str, games: int) -> None:
    config = read_saved_config(RLConfig, run / "config.json")
    net = load_network(model_path)
    evaluator = NetworkEvaluator(net.model, config.encoder, config.board_size, config.evaluator)
    for fill in (True, False):
        mcts = replace(config.mcts, resign_threshold=None, fill_eyes=fill)
        search = BatchedSearch(evaluator, mcts, games=48, seed=7)
        evaluator.clear_cache()
        records = play_games(search, games, komi=config.komi, rules=config.rules,
                             max_moves=config.selfplay.max_moves, seed=7)
        passed = lost10 = capped = flipped = 0
        lost, lengths = [], []
        for record in records:
            game = record.game
            lengths.append(len(game.moves))
            capped += record.truncated
            score = game.score()
            loser = WHITE if score > 0 else BLACK
            replay = Game(game.size, komi=game.komi)
            first = None
            for color, move in game.moves:
                replay.play(move, color)
                if first is None and color != loser and move == replay.pass_move:
                    first = (replay.score(), int((replay.board == loser).sum()))
            if first is not None:
                passed += 1
                stones = first[1] - int((game.board == loser).sum())
                lost.append(stones)
                lost10 += stones >= 10
                flipped += (first[0] > 0) != (score > 0)
        print(f"fill_eyes={fill}: {games} games, mean length {np.mean(lengths):.1f}, "
              f"{capped} at the {config.selfplay.max_moves}-move cap; the winner passed first "
              f"in {passed}: the loser lost >= 10 stones after it in {lost10} (mean "
              f"{np.mean(lost):.1f}), the result at that pass differs from the final in {flipped}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
