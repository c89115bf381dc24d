import subprocess


def run(path):
    r = subprocess.run(["python3", "/app/logstats.py", str(path)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_sample_log():
    assert run("/app/access.log") == ["requests 4", "bytes 1152", "status 200 2", "status 302 1",
                                      "status 404 1", "top /index.html 2"]


def test_hidden_log(tmp_path):
    lines = [
        '203.0.113.9 - bob [02/Apr/2024:08:00:00 -0500] "GET /b HTTP/1.1" 200 1000',
        '203.0.113.9 - - [02/Apr/2024:08:00:01 -0500] "GET /a HTTP/2.0" 200 2000',
        '2001:db8::1 - - [02/Apr/2024:08:00:02 -0500] "DELETE /a HTTP/1.1" 204 -',
        'example.org - carol [02/Apr/2024:08:00:03 -0500] "PUT /b HTTP/1.0" 500 10',
        '10.1.1.1 - - [02/Apr/2024:08:00:04 -0500] "GET /c?q=1 HTTP/1.1" 301 0',
        '10.1.1.1 - - [02/Apr/2024:08:00:05 -0500] "GET /c?q=1 HTTP/1.1" 200 5',
        '10.1.1.1 - dave [02/Apr/2024:08:00:06 -0500] "HEAD /z HTTP/1.1" 200 -',
    ]
    p = tmp_path / "a.log"
    p.write_text("\n".join(lines) + "\n")
    assert run(p) == ["requests 7", "bytes 3015", "status 200 4", "status 204 1", "status 301 1",
                      "status 500 1", "top /a 2"]
