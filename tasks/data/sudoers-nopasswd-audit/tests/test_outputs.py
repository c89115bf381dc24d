def test_nopasswd_users():
    lines = [l.strip() for l in open("/app/audit/nopasswd_root.txt").read().splitlines() if l.strip()]
    assert lines == ["ben", "erin", "olivia", "oscar", "walt", "wendy"]
