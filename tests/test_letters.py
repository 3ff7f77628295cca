"""Letters (contract section 2): lines, ids, strict parsing, the last line, missions."""

from __future__ import annotations

import hashlib
import io

import pytest

from m1nd.letters import BLANK, LETTER, MALFORMED, TAIL, classify, iter_lines, letter_id, parse, read_file
from conftest import write_spool


def sha12(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


def read_bytes(tmp_path, data: bytes):
    path = tmp_path / "letters.jsonl"
    path.write_bytes(data)
    return read_file(str(path))


# --- lines -------------------------------------------------------------------------


def test_a_file_is_split_on_lf_only_never_on_a_lone_cr(tmp_path):
    found = read_bytes(tmp_path, b'{"what":"a"}\r{"what":"b"}\n')
    assert found.letters == []
    assert found.malformed == [1]


def test_unicode_line_separators_inside_a_letter_do_not_split_it(tmp_path):
    raw = '{"what":"a\u2028b\u2029c\x85d"}'.encode()
    found = read_bytes(tmp_path, raw + b"\n")
    assert [(n, l.what) for n, l in found.letters] == [(1, "a\u2028b\u2029c\x85d")]
    assert found.letters[0][1].raw == raw


def test_one_trailing_cr_is_dropped_from_the_raw_bytes(tmp_path):
    found = read_bytes(tmp_path, b'{"what":"a"}\r\n')
    (_, letter), = found.letters
    assert letter.raw == b'{"what":"a"}'
    assert letter.id == sha12(b'{"what":"a"}')


def test_a_crlf_line_and_an_lf_line_with_the_same_text_share_one_id(tmp_path):
    crlf = read_bytes(tmp_path, b'{"what":"a"}\r\n').letters[0][1]
    lf = read_bytes(tmp_path, b'{"what":"a"}\n').letters[0][1]
    assert crlf.id == lf.id


def test_only_one_trailing_cr_is_dropped_the_second_stays_in_the_raw_bytes(tmp_path):
    found = read_bytes(tmp_path, b'{"what":"a"}\r\r\n')
    (_, letter), = found.letters
    assert letter.raw == b'{"what":"a"}\r'
    assert letter.id == sha12(b'{"what":"a"}\r')
    assert letter.id != sha12(b'{"what":"a"}')


def test_blank_lines_are_skipped_counted_nowhere_but_keep_line_numbers(tmp_path):
    data = b"\n   \n\t\r\n\x0b\x0c \n\r\n" + b'{"what":"x"}\n' + b"  \n"
    found = read_bytes(tmp_path, data)
    assert [(n, l.what) for n, l in found.letters] == [(6, "x")]
    assert found.malformed == []
    assert found.unfinished_tail is None


def test_classify_reports_whitespace_only_raw_bytes_as_blank():
    for raw in (b"", b" ", b"\t\t", b"\x0b\x0c", b" \r "):
        assert classify(raw, True) == (BLANK, None)
        assert classify(raw, False) == (BLANK, None)


def test_non_ascii_whitespace_is_not_blank_it_is_malformed():
    assert classify("\u00a0".encode(), True)[0] == MALFORMED
    assert classify("\u3000".encode(), True)[0] == MALFORMED


def test_line_offsets_end_at_each_separator_and_sum_to_the_file_size():
    data = b'{"what":"a"}\n\n{"what":"b"}\r\n{"wh'
    lines = list(iter_lines(io.BytesIO(data)))
    assert [l.end for l in lines] == [13, 14, 28, len(data)]
    assert [l.number for l in lines] == [1, 2, 3, 4]
    assert [l.outcome for l in lines] == [LETTER, BLANK, LETTER, TAIL]


def test_iter_lines_resumed_from_an_offset_keeps_whole_file_line_numbers():
    data = b'{"what":"a"}\n{"what":"b"}\n{"what":"c"}\n'
    first = list(iter_lines(io.BytesIO(data)))
    resumed = list(iter_lines(io.BytesIO(data), start=first[0].end, number=1))
    assert [(l.number, l.letter.what) for l in resumed] == [(2, "b"), (3, "c")]


# --- ids ---------------------------------------------------------------------------


def test_the_id_is_the_first_12_lowercase_hex_digits_of_sha256_of_the_raw_bytes():
    raw = b'{"ts":"2026-05-01T09:00:00Z","what":"caf\xc3\xa9"}'
    letter = parse(raw)
    assert letter.id == hashlib.sha256(raw).hexdigest()[:12]
    assert letter_id(raw) == letter.id
    assert len(letter.id) == 12 and all(c in "0123456789abcdef" for c in letter.id)


def test_an_id_key_inside_the_json_is_ignored():
    raw = b'{"id":"000000000000","what":"x"}'
    letter = parse(raw)
    assert letter is not None
    assert letter.id == sha12(raw)
    assert letter.id != "000000000000"


def test_an_id_key_of_any_type_does_not_make_a_letter_malformed():
    assert parse(b'{"id":5,"what":"x"}') is not None
    assert parse(b'{"id":null,"what":"x"}') is not None


def test_the_sweep_shows_the_derived_id_not_the_stored_one(cli, spool_path):
    raw = b'{"id":"aaaaaaaaaaaa","repo":"all","what":"x"}'
    write_spool(spool_path, [raw])
    doc = cli("--inbox-sweep", "--no-distribute").json
    assert [l["id"] for l in doc["letters"]] == [sha12(raw)]


def test_padded_lines_are_letters_and_keep_their_own_id_over_the_padded_bytes(tmp_path):
    found = read_bytes(tmp_path, b'  {"what":"x"}\t\n{"what":"x"}\n')
    ids = [l.id for _, l in found.letters]
    assert ids == [sha12(b'  {"what":"x"}\t'), sha12(b'{"what":"x"}')]
    assert ids[0] != ids[1]


def test_two_padded_variants_of_one_letter_are_two_letters_in_the_sweep(cli, spool_path):
    write_spool(spool_path, [b'{"repo":"all","what":"x"}', b' {"repo":"all","what":"x"}'])
    doc = cli("--inbox-sweep", "--no-distribute").json
    assert doc["total"] == 2


# --- strict parsing ----------------------------------------------------------------

MALFORMED_LINES = {
    "invalid utf-8 in a string": b'{"what":"\xff"}',
    "invalid utf-8 outside strings": b'{"what":"x"}\xc3',
    "overlong utf-8": b'{"what":"\xc0\xaf"}',
    "utf-8 encoded surrogate": b'{"what":"\xed\xa0\x80"}',
    "NaN": b'{"what":"x","n":NaN}',
    "Infinity": b'{"what":"x","n":Infinity}',
    "-Infinity": b'{"what":"x","n":-Infinity}',
    "trailing comma in an object": b'{"what":"x",}',
    "trailing comma in a list": b'{"what":"x","answers":["0123456789ab",]}',
    "1e400 overflows a double": b'{"what":"x","n":1e400}',
    "-1e400 overflows a double": b'{"what":"x","n":-1e400}',
    "an integer too big for a double": b'{"what":"x","n":1' + b"0" * 400 + b"}",
    "unpaired high surrogate escape": b'{"what":"\\ud800"}',
    "unpaired low surrogate escape": b'{"what":"\\udc00"}',
    "high surrogate followed by a non-surrogate": b'{"what":"\\ud800\\u0041"}',
    "unpaired surrogate in an ignored key": b'{"what":"x","note":"\\ud800"}',
    "unpaired surrogate in a key": b'{"\\ud800":"x","what":"x"}',
    "top level list": b'[{"what":"x"}]',
    "top level string": b'"what"',
    "top level number": b"12",
    "top level null": b"null",
    "top level true": b"true",
    "two objects on one line": b'{"what":"x"} {"what":"y"}',
    "unterminated object in the middle of a file": b'{"what":"x"',
    "single quotes": b"{'what':'x'}",
    "unquoted key": b'{what:"x"}',
    "raw control character in a string": b'{"what":"a\x01b"}',
    "raw tab in a string": b'{"what":"a\tb"}',
    "byte order mark": b'\xef\xbb\xbf{"what":"x"}',
    "form feed is not json whitespace": b'\x0c{"what":"x"}',
    "comment": b'{"what":"x"} // note',
    "leading zero": b'{"what":"x","n":01}',
    "repo null": b'{"repo":null,"what":"x"}',
    "ts number": b'{"ts":5,"what":"x"}',
    "what list": b'{"what":["x"]}',
    "agent bool": b'{"agent":false,"what":"x"}',
    "class object": b'{"class":{},"what":"x"}',
    "brain number": b'{"brain":1,"what":"x"}',
    "tool null": b'{"tool":null,"what":"x"}',
    "expected number": b'{"expected":0,"what":"x"}',
    "snippet list": b'{"snippet":[],"what":"x"}',
    "answers string": b'{"answers":"x","what":"x"}',
    "answers list of numbers": b'{"answers":[1],"what":"x"}',
    "answers list with null": b'{"answers":["0123456789ab",null],"what":"x"}',
    "answers nested list": b'{"answers":[["0123456789ab"]],"what":"x"}',
    "answers null": b'{"answers":null,"what":"x"}',
    "answers object": b'{"answers":{},"what":"x"}',
    "kind number": b'{"kind":5,"what":"x"}',
    "kind bool": b'{"kind":true,"what":"x"}',
    "kind list": b'{"kind":["mission"],"what":"x"}',
    "kind object": b'{"kind":{},"what":"x"}',
}


@pytest.mark.parametrize("raw", list(MALFORMED_LINES.values()), ids=list(MALFORMED_LINES))
def test_a_line_that_is_not_a_strict_json_object_with_typed_fields_is_malformed(raw):
    assert parse(raw) is None
    assert classify(raw, True) == (MALFORMED, None)


ACCEPTED_LINES = {
    "empty object": b"{}",
    "kind null": b'{"kind":null,"what":"x"}',
    "surrogate pair escape": b'{"what":"\\ud83d\\ude00"}',
    "largest finite double": b'{"what":"x","n":1.7976931348623157e308}',
    "underflow to zero is not an overflow": b'{"what":"x","n":1e-400}',
    "integer beyond 64 bits but within a double": b'{"what":"x","n":18446744073709551616}',
    "negative zero": b'{"what":"x","n":-0}',
    "unknown keys of any type": b'{"what":"x","extra":{"a":[1,2.5,null,true]},"disposition":"fixed"}',
    "escaped control characters": b'{"what":"a\\u0001b\\n"}',
    "json whitespace around tokens": b'{ "what" : "x" , "answers" : [ ] }',
    "empty strings": b'{"ts":"","agent":"","class":"","repo":"","brain":"","tool":"","what":"","expected":"","snippet":""}',
}


@pytest.mark.parametrize("raw", list(ACCEPTED_LINES.values()), ids=list(ACCEPTED_LINES))
def test_a_strict_json_object_with_well_typed_fields_is_a_letter(raw):
    letter = parse(raw)
    assert letter is not None
    assert letter.id == sha12(raw)
    assert classify(raw, True) == (LETTER, letter)


def test_missing_fields_read_as_empty_strings_an_empty_answers_list_and_no_kind():
    letter = parse(b"{}")
    assert (letter.ts, letter.agent, letter.klass, letter.repo, letter.brain, letter.tool, letter.what,
            letter.expected, letter.snippet) == ("",) * 9
    assert letter.answers == ()
    assert letter.kind is None


def test_every_listed_field_is_read_from_its_key():
    raw = (b'{"ts":"t","agent":"agent-a","class":"bug","repo":"repo-a","brain":"b","tool":"tl",'
           b'"what":"w","expected":"e","snippet":"s","answers":["0123456789ab"],"kind":"k"}')
    letter = parse(raw)
    assert (letter.ts, letter.agent, letter.klass, letter.repo, letter.brain, letter.tool, letter.what,
            letter.expected, letter.snippet, letter.answers, letter.kind) == (
        "t", "agent-a", "bug", "repo-a", "b", "tl", "w", "e", "s", ("0123456789ab",), "k")


def test_duplicate_keys_the_last_occurrence_wins():
    letter = parse(b'{"repo":"repo-a","what":"x","repo":"repo-b"}')
    assert letter.repo == "repo-b"


def test_a_duplicate_key_whose_last_value_is_well_typed_makes_a_letter():
    assert parse(b'{"repo":null,"what":"x","repo":"repo-a"}').repo == "repo-a"


def test_a_duplicate_key_whose_last_value_is_ill_typed_makes_the_line_malformed():
    assert parse(b'{"repo":"repo-a","what":"x","repo":null}') is None


def test_malformed_lines_are_never_fatal_every_other_line_is_read(tmp_path):
    data = (b'{"what":"a"}\n'
            b'{"what":NaN}\n'
            b'not json at all\n'
            b'{"what":"b"}\n'
            b'\xff\xfe\n'
            b'{"what":"c"}\n')
    found = read_bytes(tmp_path, data)
    assert [(n, l.what) for n, l in found.letters] == [(1, "a"), (4, "b"), (6, "c")]
    assert found.malformed == [2, 3, 5]
    assert found.unfinished_tail is None


def test_malformed_spool_lines_are_never_filed_into_any_box(cli, spool_path, m1nd_home):
    write_spool(spool_path, [b'{"repo":"all","what":NaN}', {"repo": "all", "what": "ok"}, b'{"repo":null}'])
    result = cli("distribute", "--json")
    assert result.code == 0
    assert result.json["spool_total"] == 1
    assert (m1nd_home / "inbox.jsonl").read_bytes() == b'{"repo":"all","what":"ok"}\n'


# --- the last line -----------------------------------------------------------------


def test_an_unterminated_last_line_that_does_not_parse_is_an_unfinished_tail_not_malformed(tmp_path):
    found = read_bytes(tmp_path, b'{"what":"a"}\n{"what":"b')
    assert [l.what for _, l in found.letters] == ["a"]
    assert found.malformed == []
    assert found.unfinished_tail == 2


def test_an_unterminated_last_line_that_parses_is_a_letter(tmp_path):
    found = read_bytes(tmp_path, b'{"what":"a"}\n{"what":"b"}')
    assert [(n, l.what) for n, l in found.letters] == [(1, "a"), (2, "b")]
    assert found.unfinished_tail is None
    assert found.letters[1][1].id == sha12(b'{"what":"b"}')


def test_the_same_broken_text_is_malformed_when_terminated_and_a_tail_when_not(tmp_path):
    assert read_bytes(tmp_path, b'{"what":"b\n').malformed == [1]
    assert read_bytes(tmp_path, b'{"what":"b\n').unfinished_tail is None
    assert read_bytes(tmp_path, b'{"what":"b').malformed == []
    assert read_bytes(tmp_path, b'{"what":"b').unfinished_tail == 1


def test_an_unterminated_blank_last_line_is_neither_a_tail_nor_malformed(tmp_path):
    found = read_bytes(tmp_path, b'{"what":"a"}\n  ')
    assert found.unfinished_tail is None and found.malformed == [] and len(found.letters) == 1


def test_an_unfinished_tail_is_not_counted_in_the_spool_total_and_is_not_filed(cli, spool_path, m1nd_home):
    spool_path.parent.mkdir(parents=True)
    spool_path.write_bytes(b'{"repo":"all","what":"a"}\n{"repo":"all","what":"b')
    receipt = cli("distribute", "--json").json
    assert receipt["spool_total"] == 1
    assert (m1nd_home / "inbox.jsonl").read_bytes() == b'{"repo":"all","what":"a"}\n'


def test_a_reader_never_sees_a_partial_letter_while_a_writer_is_mid_append(tmp_path):
    full = b'{"repo":"all","what":"a long enough letter"}'
    for cut in range(1, len(full)):
        found = read_bytes(tmp_path, b'{"what":"first"}\n' + full[:cut])
        assert [l.what for _, l in found.letters] == ["first"], cut
        assert found.malformed == []


def test_reading_a_missing_file_reads_as_empty(tmp_path):
    found = read_file(str(tmp_path / "nothing-here.jsonl"))
    assert (found.letters, found.malformed, found.unfinished_tail, found.size) == ([], [], None, 0)


# --- missions ----------------------------------------------------------------------


def test_only_kind_exactly_mission_makes_a_mission_letter():
    assert parse(b'{"kind":"mission"}').is_mission
    for kind in (b'"Mission"', b'"MISSION"', b'" mission"', b'"missions"', b"null"):
        assert not parse(b'{"kind":' + kind + b"}").is_mission


def test_mission_letters_are_filed_and_counted_in_the_spool_total_but_left_out_of_the_sweep(
    cli, spool_path, m1nd_home
):
    mission = b'{"kind":"mission","repo":"all","what":"the plan"}'
    note = b'{"kind":"note","repo":"all","what":"a finding"}'
    write_spool(spool_path, [mission, note])
    doc = cli("--inbox-sweep").json
    assert doc["distribution"]["spool_total"] == 2
    assert doc["distribution"]["to_medulla"] == 2
    assert (m1nd_home / "inbox.jsonl").read_bytes() == mission + b"\n" + note + b"\n"
    assert doc["total"] == 1
    assert [l["what"] for l in doc["letters"]] == ["a finding"]
    assert doc["open"] == 1


def test_mission_letters_are_left_out_of_the_box_view_and_its_counts(cli, spool_path):
    write_spool(spool_path, [{"kind": "mission", "repo": "all", "what": "the plan"},
                             {"repo": "all", "what": "a finding"}])
    assert cli("distribute").code == 0
    view = cli("box", "medulla", "--json").json
    assert [l["what"] for l in view["letters"]] == ["a finding"]
    assert view["counts"]["open"] == 1
    assert sum(view["counts"][s] for s in ("wet_ink", "in_flight", "fired_clay", "external")) == 1


def test_the_human_sweep_warns_about_malformed_spool_lines_on_stderr(cli, spool_path):
    write_spool(spool_path, [{"repo": "all", "what": "ok"}, b"not json", b'{"repo":null}'])
    result = cli("sweep")
    assert result.code == 0
    assert "malformed" in result.stderr and "2, 3" in result.stderr
    assert "malformed" not in result.stdout
