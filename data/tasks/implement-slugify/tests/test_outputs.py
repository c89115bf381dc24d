import sys

sys.path.insert(0, "/app")


def slug(*a, **k):
    from textutils import slugify
    return slugify(*a, **k)


def test_basic():
    assert slug("Hello, World!") == "hello-world"
    assert slug("  Multiple   spaces -- and dashes  ") == "multiple-spaces-and-dashes"
    assert slug("Version 2.0 Released") == "version-2-0-released"
    assert slug("already-a-slug") == "already-a-slug"


def test_accents_and_symbols():
    assert slug("Crème Brûlée recipe") == "creme-brulee-recipe"
    assert slug("Ångström & Señor Müller") == "angstrom-senor-muller"
    assert slug("emoji 🚀 launch") == "emoji-launch"
    assert slug("!!!") == "n-a"
    assert slug("") == "n-a"


def test_max_length():
    assert slug("one two three", max_length=9) == "one-two"
    assert slug("one two three", max_length=7) == "one-two"
    assert slug("one two three", max_length=6) == "one"
    assert slug("one two three", max_length=13) == "one-two-three"
    assert slug("one two three", max_length=100) == "one-two-three"
    assert slug("supercalifragilistic word", max_length=5) == "super"
