"""GTP ids, integers and vertex rows are ASCII digits only (issue 41, bullet 8).

``str.isdigit`` and ``int`` also accept other scripts' digits, so the engine
answered ``٣ name`` with ``=٣ harness``; each test failed before the fix.
"""

from __future__ import annotations

import pytest

from harness.game.geometry import gtp_to_point
from harness.gtp.engine import GTPEngine
from harness.players.scripted import ScriptedPlayer


def engine() -> GTPEngine:
    return GTPEngine(ScriptedPlayer([], name="script"), size=5, komi=0.5, name="harness")


def test_an_arabic_indic_digit_is_no_id_but_an_unknown_command():
    assert engine().handle("\u0663 name") == "? unknown command\n\n"


@pytest.mark.parametrize("head", ["\u00b2", "\uff13", "\u0967", "\U0001d7f9"])
def test_no_non_ascii_digit_is_taken_for_an_id(head):
    assert engine().handle(f"{head} name") == "? unknown command\n\n"


def test_an_ascii_id_is_echoed_as_before():
    assert engine().handle("31 name") == "=31 harness\n\n"


@pytest.mark.parametrize("size", ["\u0665", "+5", "5_0", "\u00b2"])
def test_an_integer_argument_in_other_digits_is_a_syntax_error(size):
    assert engine().handle(f"boardsize {size}") == "? syntax error: board size not an integer\n\n"


def test_a_vertex_row_in_other_digits_is_invalid():
    with pytest.raises(ValueError, match="invalid vertex"):
        gtp_to_point("C\u0663", 5)
    assert engine().handle("play b C\u0663").startswith("? ")
    assert gtp_to_point("C3", 5) == 12
