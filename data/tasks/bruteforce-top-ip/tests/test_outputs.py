def test_attacker_ip():
    assert open("/app/attacker_ip.txt").read().strip() == "203.0.113.77"
