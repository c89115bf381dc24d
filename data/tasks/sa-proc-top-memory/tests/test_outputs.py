from pathlib import Path


def test_top_memory():
    lines = [" ".join(l.split()) for l in Path("/app/top_memory.txt").read_text().splitlines() if l.strip()]
    assert lines == ["39517 java 1843200", "4083 celery 860269", "26616 gunicorn 837433"], lines
