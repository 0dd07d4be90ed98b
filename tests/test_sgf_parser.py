"""SGF syntax: escapes, variations, collections, concatenated streams, broken games."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.sgf.parser import (
    COMPLETE,
    CUT_BY_NEXT_GAME,
    END_OF_DATA,
    GameSplitter,
    SgfSyntaxError,
    parse_main_line,
    split_games,
    unescape,
    values,
)
from harness.sgf.record import parse_sgf_bytes

FIXTURES = Path(__file__).parent / "fixtures" / "sgf"


def read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def sgf_moves(record) -> list[str]:
    """Moves as SGF coordinates, for readable expectations."""
    out = []
    for _color, p in record.moves:
        if p == record.size**2:
            out.append("pass")
        else:
            out.append(chr(97 + p % record.size) + chr(97 + p // record.size))
    return out


def test_escapes_and_soft_line_breaks():
    (record,) = parse_sgf_bytes(read("escapes.sgf"), keep_comments=True)
    assert record.reject is None
    assert record.black == "Black ] Player"
    assert record.white == "White\\Player"
    assert record.properties["GN"] == "softbreak"  # backslash-newline is removed
    assert record.properties["C"] == (
        "a comment with an escaped ] bracket, a ( paren ), a ; semicolon\nand a second line"
    )
    assert record.comments == {0: "move comment with a \\ backslash"}
    assert sgf_moves(record) == ["ee", "cc", "gg"]


def test_unescape_rules():
    assert unescape(rb"a\]b") == b"a]b"
    assert unescape(b"a\\\nb") == b"ab"
    assert unescape(b"a\\\r\nb") == b"ab"
    assert unescape(rb"a\\b") == b"a\\b"
    assert unescape(rb"\:") == b":"


def test_multiple_values_with_space_between():
    assert values(b"[aa] [bb]\n[cc]") == [b"aa", b"bb", b"cc"]
    assert values(rb"[a\]a][bb]") == [rb"a\]a", b"bb"]


def test_main_line_takes_the_first_variation_at_every_fork():
    (record,) = parse_sgf_bytes(read("variations.sgf"))
    assert record.reject is None
    assert sgf_moves(record) == ["ee", "cc", "gg", "gc", "cg"]


def test_collection_gives_every_game_in_order():
    records = parse_sgf_bytes(read("collection.sgf"))
    assert [r.black for r in records] == ["first", "second", "third"]
    assert [r.index for r in records] == [0, 1, 2]
    assert [r.size for r in records] == [9, 9, 13]
    assert [len(r.moves) for r in records] == [1, 2, 3]


def test_concatenated_games_without_separator_and_text_between():
    records = parse_sgf_bytes(read("lz_concat.sgf"))
    assert len(records) == 3
    assert all(r.reject is None for r in records)
    first, second, third = records
    assert sgf_moves(first) == ["ee", "cc", "gc", "gg", "cg", "dd", "pass", "pass"]  # tt = pass
    assert sgf_moves(second) == ["ee", "dd", "pass", "pass"]  # empty value = pass
    assert first.result.winner == 1 and first.result.kind == "resign"
    assert second.result.margin == 12.5
    assert third.result.kind == "draw"
    assert first.properties["C"].startswith("Leela Zero options")


def test_truncated_game_followed_by_the_next_game():
    # The Leela Zero sample: game 3 stops after "W" and game 4 starts right there.
    data = b"(;GM[1]SZ[9];B[ee];W[cc];B[gg];W(;GM[1]FF[4]SZ[9];B[dd];W[ff])"
    games = split_games(data)
    assert [g.status for g in games] == [CUT_BY_NEXT_GAME, COMPLETE]
    first, second = parse_sgf_bytes(data)
    assert first.reject == "truncated game: the next game starts before this one closes"
    assert second.reject is None and sgf_moves(second) == ["dd", "ff"]


def test_root_property_after_a_closed_node_also_starts_a_new_game():
    data = b"(;GM[1]SZ[9];B[ee];W[cc](;FF[4]GM[1]SZ[9];B[dd])"
    first, second = parse_sgf_bytes(data)
    assert first.reject.startswith("truncated game")
    assert sgf_moves(second) == ["dd"]


def test_truncated_file_is_rejected():
    (record,) = parse_sgf_bytes(read("truncated.sgf"))
    assert record.reject == "truncated game: the data ends before the game closes"
    assert split_games(read("truncated.sgf"))[0].status == END_OF_DATA


def test_syntax_error_is_rejected_with_position():
    (record,) = parse_sgf_bytes(read("syntax_error.sgf"))
    assert record.reject.startswith("syntax error at byte ")
    assert "'}[x]" in record.reject


def test_property_without_value_is_a_syntax_error():
    with pytest.raises(SgfSyntaxError, match="has no value"):
        parse_main_line(b"(;GM[1];B[aa];W;B[cc])")


def test_long_ff3_identifiers_are_reduced_to_capitals():
    (record,) = parse_sgf_bytes(b"(;GaMe[1]SiZe[9]AddBlack[aa][bb];White[cc])")
    assert record.size == 9
    assert record.setup_black == [0, 10]  # aa, bb
    assert record.moves == [(2, 2 * 9 + 2)]


def test_brackets_and_parentheses_inside_values_do_not_split_games():
    data = b"(;GM[1]SZ[9]C[(; not a game )];B[ee]C[)(])(;GM[1]SZ[9];B[aa])"
    assert len(split_games(data)) == 2


def test_no_game_and_binary_junk():
    assert parse_sgf_bytes(b"")[0].reject == "empty file"
    assert parse_sgf_bytes(b"hello world")[0].reject == "no SGF game found"
    junk = bytes(range(256)) * 8
    assert parse_sgf_bytes(junk)[0].reject == "binary data, not SGF"


GAMES = [
    b"(;GM[1]SZ[9]C[a ) b \\] c];B[ee];W[cc])",
    b"header junk\n",
    b"(;GM[1]FF[4]SZ[9];B[aa](;W[bb])(;W[cc];B[dd]))",
    b"(;FF[4]SZ[9]RE[B+R];B[ee]\n;W[])",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=30))
def test_splitting_does_not_depend_on_chunk_boundaries(cuts):
    data = b"".join(GAMES) * 3
    splitter = GameSplitter()
    found, pos = [], 0
    for size in cuts:
        found += splitter.feed(data[pos : pos + size])
        pos += size
    found += splitter.feed(data[pos:]) + splitter.finish()
    whole = split_games(data)
    assert [(g.data, g.main_end, g.status, g.offset) for g in found] == [
        (g.data, g.main_end, g.status, g.offset) for g in whole
    ]
    assert len(whole) == 9


def test_oversized_game_is_skipped_and_reading_resumes_at_next_game():
    big = b"(;GM[1]SZ[9]C[" + b"x" * 5000 + b"](;B[aa])(;B[bb]))"
    data = big + b"(;GM[1]SZ[9];B[ee])"
    splitter = GameSplitter(max_game_bytes=1000)
    found = []
    for i in range(0, len(data), 700):
        found += splitter.feed(data[i : i + 700])
    found += splitter.finish()
    assert [type(g).__name__ for g in found] == ["OversizedGame", "GameBytes"]
    assert found[0].problem == "game larger than 1,000 bytes (skipped)"
    assert found[1].data == b"(;GM[1]SZ[9];B[ee])"
