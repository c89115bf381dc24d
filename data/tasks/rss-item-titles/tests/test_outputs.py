from pathlib import Path

EXPECTED = [
    "Disk quotas & you",
    "Why <pre> blocks break our wiki",
    "Rotating logs without losing lines",
    'Backups: "3-2-1" & beyond',
    "Caf\u00e9 Wi-Fi and VPN split tunnels",
    "On-call handover checklist",
]


def test_titles():
    lines = [l.strip() for l in Path("/app/titles.txt").read_text(encoding="utf-8").splitlines() if l.strip()]
    assert lines == EXPECTED
