"""SGF properties -> GameRecord: sizes, komi, results, setup, passes, encodings."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.game.geometry import BLACK, WHITE
from harness.game.result import GameResult
from harness.sgf import parse_sgf_bytes
from harness.sgf.record import normalise_komi, read_result
from harness.sgf.text import decode_text, normalise_charset

FIXTURES = Path(__file__).parent / "fixtures" / "sgf"


def one(data: bytes, **kw):
    (record,) = parse_sgf_bytes(data, **kw)
    return record


def point(coord: str, size: int = 19) -> int:
    return (ord(coord[1]) - 97) * size + ord(coord[0]) - 97


def test_handicap_stones_in_the_second_node():
    record = one((FIXTURES / "handicap_second_node.sgf").read_bytes())
    assert record.reject is None
    assert record.handicap == 2
    assert sorted(record.setup_black) == sorted([point("dp"), point("pd")])
    assert record.setup_white == []
    assert record.moves == [(WHITE, point("dd")), (BLACK, point("pp")), (WHITE, point("qc"))]
    assert (record.black, record.white) == ("weaker", "stronger")
    assert (record.black_rank, record.white_rank) == ("3k", "2d")
    assert record.date == "2017-03-07"
    assert record.rules == "Japanese"
    assert record.komi == 0.5
    assert record.result == GameResult(WHITE, "score", 3.5)


def test_setup_in_root_and_later_nodes_is_merged_in_order():
    # AB in the root, AE removes one of them in node 2, AW adds a stone: the
    # position before the first move is what counts.
    record = one(b"(;GM[1]SZ[9]AB[aa][bb];AE[aa]AW[cc];B[ee])")
    assert record.setup_black == [point("bb", 9)]
    assert record.setup_white == [point("cc", 9)]
    assert record.setup_empty == [point("aa", 9)]
    assert record.setup_events == []


def test_setup_after_moves_becomes_an_event_before_the_next_move():
    record = one(b"(;GM[1]SZ[9];B[ee];W[cc];AB[gg]AE[ee];W[dd])")
    assert record.moves == [(BLACK, point("ee", 9)), (WHITE, point("cc", 9)), (WHITE, 30)]
    (event,) = record.setup_events
    assert event.before_move == 2
    assert event.black.tolist() == [point("gg", 9)] and event.empty.tolist() == [point("ee", 9)]


def test_setup_rectangles_are_expanded():
    record = one(b"(;GM[1]FF[4]SZ[9]AB[aa:bc])")
    assert sorted(record.setup_black) == [0, 1, 9, 10, 18, 19]


@pytest.mark.parametrize(
    ("km", "komi"),
    [
        ("7.5", 7.5),
        ("6.5", 6.5),
        ("0", 0.0),
        ("650", 6.5),  # Fox stores komi x100
        ("750", 7.5),
        ("550", 5.5),
        ("375", 7.5),  # Fox, Chinese rules: 3.75 stones = 7.5 points
        ("3.75", 7.5),
        ("-650", -6.5),
        ("7,5", 7.5),
        ("", 0.0),
        ("?", 0.0),
    ],
)
def test_komi_normalisation(km, komi):
    assert normalise_komi(km) == komi


def test_komi_x100_in_a_fox_file():
    record = one(b"(;CA[UTF-8]GM[1]SZ[19]KM[375]HA[0]RU[Chinese];B[pd])")
    assert record.komi == 7.5 and record.rules == "Chinese"
    assert one(b"(;GM[1]SZ[19];B[pd])").komi == 0.0  # missing komi


@pytest.mark.parametrize(
    ("re_text", "expected"),
    [
        ("B+R", GameResult(BLACK, "resign")),
        ("W+Resign", GameResult(WHITE, "resign")),
        ("W+12.5", GameResult(WHITE, "score", 12.5)),
        ("B+0.5", GameResult(BLACK, "score", 0.5)),
        ("B+T", GameResult(BLACK, "time")),
        ("W+Time", GameResult(WHITE, "time")),
        ("B+F", GameResult(BLACK, "forfeit")),
        ("Void", GameResult(0, "void")),
        ("0", GameResult(0, "draw")),
        ("Draw", GameResult(0, "draw")),
        ("draw", GameResult(0, "draw")),
        ("?", GameResult(0, "unknown")),
        ("W", GameResult(WHITE, "score", None)),  # DeepZenGo on Wbaduk
        ("W+0.0", GameResult(WHITE, "score", None)),  # Fox: a winner, margin not given
        ("B+", GameResult(BLACK, "score", None)),
    ],
)
def test_every_result_form(re_text, expected):
    assert read_result(re_text) == expected
    # 20 moves: long enough not to count as abandoned (see test_bad_input_sgf.py).
    moves = "".join(f";{'BW'[i % 2]}[{chr(97 + i % 9)}{chr(97 + i // 9)}]" for i in range(20))
    record = one(f"(;GM[1]SZ[9]RE[{re_text}]{moves})".encode())
    assert record.result == expected


def test_missing_result_is_unknown():
    assert one(b"(;GM[1]SZ[9];B[ee])").result == GameResult(0, "unknown")
    assert read_result(None).kind == "unknown"


@pytest.mark.parametrize(
    ("size", "move", "is_pass"),
    [(19, "tt", True), (9, "tt", True), (19, "", True), (9, "ee", False), (19, " ", True)],
)
def test_pass_forms(size, move, is_pass):
    record = one(f"(;GM[1]SZ[{size}];B[{move}])".encode())
    assert record.reject is None
    assert (record.moves[0][1] == size * size) == is_pass


@pytest.mark.parametrize(
    ("sz", "reason"),
    [
        ("25", "board size 25 unsupported"),
        ("4", "board size 4 unsupported"),
        ("9:11", "rectangular board 9x11 unsupported"),
        ("nine", "bad board size 'nine'"),
    ],
)
def test_unsupported_sizes_are_rejected(sz, reason):
    record = one(f"(;GM[1]SZ[{sz}];B[aa])".encode())
    assert record.reject == reason


def test_square_size_written_with_colon_is_accepted():
    assert one(b"(;GM[1]SZ[9:9];B[aa])").size == 9


def test_move_off_the_board_is_rejected():
    record = one(b"(;GM[1]SZ[9];B[ee];W[jj])")
    assert record.reject == "move 2: bad point 'jj' on a 9x9 board"


def test_other_games_are_rejected():
    assert one(b"(;GM[2]SZ[8];B[aa])").reject == "not a Go record (GM[2])"


def test_gb2312_names_with_declared_charset():
    record = one((FIXTURES / "gb2312_names.sgf").read_bytes())
    assert (record.black, record.white) == ("柯洁", "古力")
    assert record.properties["GN"] == "三星杯"


def test_gbk_names_without_charset_fall_back_to_gb18030():
    record = one((FIXTURES / "gbk_names_no_ca.sgf").read_bytes())
    assert (record.black, record.white) == ("柯洁", "古力")
    assert record.result.winner == WHITE


def test_name_cut_inside_a_utf8_character_keeps_the_game():
    record = one((FIXTURES / "utf8_cut_name.sgf").read_bytes())
    assert record.reject is None
    assert record.black == "你若"  # the cut character is dropped, not turned into mojibake
    assert record.white == "骊龙"
    assert len(record.moves) == 2


def test_a_bad_byte_in_a_name_never_loses_the_game():
    record = one(b"(;GM[1]CA[UTF-8]SZ[9]PB[\xff\xfe\x00bad]PW[ok];B[ee];W[cc])")
    assert record.reject is None and len(record.moves) == 2
    assert record.white == "ok" and isinstance(record.black, str)


@pytest.mark.parametrize(
    ("raw", "charset", "text"),
    [
        ("柯洁".encode("gb2312"), "gb18030", "柯洁"),
        ("柯洁".encode(), None, "柯洁"),
        ("柯洁".encode("gbk"), None, "柯洁"),
        ("Müller".encode("latin-1"), "iso8859-1", "Müller"),
        (b"plain", None, "plain"),
    ],
)
def test_decode_text(raw, charset, text):
    assert decode_text(raw, charset) == text


def test_charset_names():
    assert normalise_charset("GB2312") == "gb18030"
    assert normalise_charset("gbk") == "gb18030"
    assert normalise_charset("UTF-8") == "utf-8"
    assert normalise_charset("no-such-charset") is None
    assert normalise_charset(None) is None


@pytest.mark.parametrize("declared, codec", [
    ("utf8", "utf-8"), ("ascii", "utf-8"), ("US-ASCII", "utf-8"),
    ("latin-1", "iso8859-1"), ("ISO-8859-1", "iso8859-1"), ("windows-1252", "cp1252"),
    ("GB18030", "gb18030"), ("euc-cn", "gb18030"), ("Big5", "big5"),
    ("euc-kr", "euc_kr"), ("ks_c_5601-1987", "euc_kr"), ("cp949", "cp949"),
    ("Shift_JIS", "shift_jis"), ("sjis", "shift_jis"), ("cp932", "cp932"),
    ("EUC-JP", "euc_jp"), ("iso-2022-jp", "iso2022_jp"), ("koi8-r", "koi8-r"),
])
def test_the_charsets_sgf_files_carry_are_read_under_their_aliases(declared, codec):
    assert normalise_charset(declared) == codec


@pytest.mark.parametrize("declared", ["unicode-escape", "raw_unicode_escape", "rot13", "idna",
                                      "punycode", "utf-7", "hz", "base64", "zlib"])
def test_a_file_cannot_choose_any_other_python_codec(declared):
    assert normalise_charset(declared) is None


def test_ca_unicode_escape_reads_the_bytes_as_text_not_as_escapes(recwarn):
    # SGF's \\ is one backslash: the name is `Lee \d \x41 é`, which the
    # unicode-escape codec would turn into `Lee \d A é` with a DeprecationWarning.
    record = parse_sgf_bytes("(;GM[1]CA[unicode-escape]SZ[9]PB[Lee \\\\d \\\\x41 é];B[ee])"
                             .encode(), "t")[0]
    assert record.reject is None
    assert record.black == "Lee \\d \\x41 é"  # UTF-8, the fallback, backslashes kept
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_setup_points_are_each_kept_once_where_their_last_edit_put_them():
    # 9x9: aa=0, ba=1, ab=9, bb=10. AB of a rectangle, then a repeat, then edits.
    record = parse_sgf_bytes(b"(;GM[1]SZ[9]AB[aa:bb][aa];AB[aa:bb]AW[ba];AE[aa];B[ee])", "t")[0]
    assert record.reject is None
    assert record.setup_black == [9, 10]  # aa was emptied, ba became White
    assert record.setup_white == [1]
    assert record.setup_empty == [0]
    # Mid-game: one event, its points in the order of their edits.
    later = parse_sgf_bytes(b"(;GM[1]SZ[9];B[ee];AB[aa:ba][aa];AE[cc])", "t")[0]
    (event,) = later.setup_events
    assert (event.before_move, event.black.tolist(), event.empty.tolist()) == (1, [1, 0], [20])


def test_a_whole_board_setup_repeated_is_expanded_once_and_stays_unshared():
    from harness.sgf.record import read_points

    first = read_points(b"[aa:ss]", 19, "AB")
    assert len(first) == 361 and read_points(b"[aa:ss]", 19, "AB") is first
    with pytest.raises(ValueError):
        first[0] = 5  # the expansion is shared: nobody may change it
