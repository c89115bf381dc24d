from pathlib import Path

EXPECTED_R = 0.7984712101187361


def test_correlation_value():
    text = Path("/app/r.txt").read_text().strip()
    value = float(text)
    assert abs(value - EXPECTED_R) <= 1.5e-4, (value, EXPECTED_R)
    assert len(text.split(".")[-1]) >= 4, "need at least 4 decimal places"
