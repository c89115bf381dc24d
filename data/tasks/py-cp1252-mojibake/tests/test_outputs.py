import json
import subprocess

ROWS = [(7, "Renée Faßbender", "Zürich", "paid “in full” — thanks"),
        (8, "Øystein", "Tromsø", "½ price, ±2 days, 20€"),
        (9, "Plain Name", "Oslo", ""),
        (10, "Ñandú", "São Paulo", "said: ‘maybe’… call back")]


def convert(tmp_path):
    src = tmp_path / "in.csv"
    lines = ["id,name,city,note"] + [f'{i},{n},{c},"{t}"' for i, n, c, t in ROWS]
    src.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp1252"))
    dst = tmp_path / "out.json"
    r = subprocess.run(["python3", "/app/to_json.py", str(src), str(dst)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return dst.read_bytes()


def test_characters_decoded(tmp_path):
    data = json.loads(convert(tmp_path).decode("utf-8"))
    assert data == [{"id": i, "name": n, "city": c, "note": t} for i, n, c, t in ROWS]


def test_utf8_without_escapes(tmp_path):
    raw = convert(tmp_path)
    text = raw.decode("utf-8")
    assert "\\u" not in text
    assert "Renée Faßbender" in text and "20€" in text and "‘maybe’…" in text
    assert json.loads(text)[1]["city"] == "Tromsø"
