"""A letter's fields are declared once (letters.TEXT_ATTRIBUTES): the parsed Letter, the
read model's LetterRow and the columns of its `letters` table follow the same list."""

from __future__ import annotations

from m1nd.letters import STRING_FIELDS, TEXT_ATTRIBUTES, Letter, attribute, parse
from m1nd.readmodel.rows import ROW_COLUMNS, LetterRow


def test_the_row_holds_the_columns_it_is_read_from_in_their_order():
    import sqlite3

    from m1nd.readmodel.store import SCHEMA

    assert list(LetterRow._fields) == [attribute(c) for c in ROW_COLUMNS]
    con = sqlite3.connect(":memory:")
    con.executescript(SCHEMA)
    table = [r[1] for r in con.execute("PRAGMA table_info(letters)")]
    assert table[:len(ROW_COLUMNS)] == list(ROW_COLUMNS)  # the table's own columns, in the row's order


def test_letter_and_row_share_every_text_attribute_under_one_name():
    names = [name for name, _ in TEXT_ATTRIBUTES]
    assert names == [attribute(f) for f in STRING_FIELDS] and "klass" in names
    assert set(names) <= set(Letter._fields) and set(names) <= set(LetterRow._fields)


def test_a_parsed_letter_still_reads_as_its_fields():
    raw = b'{"ts":"2026-05-01T00:00:00Z","agent":"agent-a","class":"bug","repo":"repo-a","what":"x"}'
    letter = parse(raw)
    assert isinstance(letter, Letter) and letter.klass == "bug" and letter.repo == "repo-a"
    assert letter.raw == raw and not letter.is_mission and letter._replace(kind="mission").is_mission
