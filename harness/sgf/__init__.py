"""SGF and archive reading and writing: records of games from any source.

``iter_records`` streams :class:`GameRecord` objects out of files, archives
and directories; ``parse_sgf_bytes`` does the same for bytes in memory;
``replay`` checks a record's moves on the rules kernel and returns the game;
``to_sgf``/``write_sgf`` write records and games back out.
"""

from harness.sgf.record import GameRecord, SetupEvent, parse_sgf_bytes
from harness.sgf.replay import ReplayError, replay, replay_positions, replay_records
from harness.sgf.sources import iter_records
from harness.sgf.writer import to_sgf, write_sgf

__all__ = [
    "GameRecord",
    "ReplayError",
    "SetupEvent",
    "iter_records",
    "parse_sgf_bytes",
    "replay",
    "replay_positions",
    "replay_records",
    "to_sgf",
    "write_sgf",
]
