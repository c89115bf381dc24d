from pathlib import Path

EXPECTED = [
    "block0.attn.b 72 72",
    "block0.attn.w 24x72 1728",
    "block0.mlp.b 96 96",
    "block0.mlp.w 24x96 2304",
    "head.w 24x400 9600",
    "norm.scale 24 24",
    "tok_embed 400x24 9600",
]


def lines():
    return [" ".join(l.split()) for l in Path("/app/params.txt").read_text().splitlines() if l.strip()]


def test_array_lines():
    assert lines()[:-1] == EXPECTED


def test_total_line():
    got = lines()
    assert len(got) == 8 and got[-1] == "total 23424", got[-1:]
