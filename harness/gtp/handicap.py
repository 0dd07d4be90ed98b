"""Fixed handicap placement, exactly as the GTP 2 specification (section 4.1.1)
prescribes, so that ``fixed_handicap`` agrees with every other engine.

Stones go on the 4-4 points (3-3 below 13x13), in the order corners, then
the middle of the left and right sides, then the middle of the top and
bottom, with the centre stone for odd counts. Boards with no centre line
(even sizes) and 7x7 take at most 4 stones, others at most 9; 19x19 gives
the specification's table: 2 = D4 Q16, 3 adds D16, 4 adds Q4, 5 adds K10,
6 = corners D10 Q10, 7 adds K10, 8 = corners D10 Q10 K4 K16, 9 adds K10.
"""

from __future__ import annotations


def max_fixed_handicap(size: int) -> int:
    if size < 7:
        return 0
    return 4 if size % 2 == 0 or size == 7 else 9


def fixed_handicap_points(size: int, stones: int) -> list[int]:
    """The points (``row * size + col`` from the top-left) of ``stones``
    handicap stones; ValueError for a count the board cannot take."""
    if not 2 <= stones <= max_fixed_handicap(size):
        raise ValueError("invalid number of stones")
    edge = 3 if size < 13 else 4
    low, mid, high = edge - 1, size // 2, size - edge  # column/row indices from the left/top

    def at(col: int, row_from_bottom: int) -> int:
        return (size - 1 - row_from_bottom) * size + col

    corners = [at(low, low), at(high, high), at(low, high), at(high, low)]  # D4 Q16 D16 Q4
    sides_lr = [at(low, mid), at(high, mid)]  # D10 Q10
    sides_tb = [at(mid, low), at(mid, high)]  # K4 K16
    centre = at(mid, mid)
    layouts = {
        2: corners[:2],
        3: corners[:3],
        4: corners,
        5: corners + [centre],
        6: corners + sides_lr,
        7: corners + sides_lr + [centre],
        8: corners + sides_lr + sides_tb,
        9: corners + sides_lr + sides_tb + [centre],
    }
    return layouts[stones]
