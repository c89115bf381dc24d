import json
import os
import random
import subprocess
import sys

DEFAULTS = {"host": "127.0.0.1", "port": 8000, "debug": False, "workers": 2, "log_level": "info"}


def run(args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    e.update(env or {})
    return subprocess.run([sys.executable, "/app/showconfig.py", *args], capture_output=True, text=True, env=e, timeout=30)


def test_precedence(tmp_path):
    r = run([])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == DEFAULTS
    rng = random.Random(10)
    port_f, port_e, port_c = rng.sample(range(2000, 60000), 3)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"port": port_f, "host": "files.example", "debug": True}))
    r = run(["--config", str(cfg)])
    assert json.loads(r.stdout) == dict(DEFAULTS, port=port_f, host="files.example", debug=True)
    r = run(["--config", str(cfg)], {"SVC_PORT": str(port_e), "SVC_DEBUG": "Off", "SVC_LOG_LEVEL": "error"})
    assert json.loads(r.stdout) == dict(DEFAULTS, port=port_e, host="files.example", debug=False, log_level="error")
    r = run(["--config", str(cfg), "--port", str(port_c), "--debug", "--workers", "9"],
            {"SVC_PORT": str(port_e), "SVC_DEBUG": "no", "SVC_WORKERS": "4"})
    assert json.loads(r.stdout) == dict(DEFAULTS, port=port_c, host="files.example", debug=True, workers=9)
    r = run(["--no-debug"], {"SVC_DEBUG": "YES", "SVC_HOST": ""})
    out = json.loads(r.stdout)
    assert out["debug"] is False and out["host"] == ""
    assert r.stdout.strip() == json.dumps(out, sort_keys=True)


def test_explain_sources(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"workers": 3, "log_level": "debug"}))
    r = run(["--config", str(cfg), "--explain", "--host", "0.0.0.0"], {"SVC_LOG_LEVEL": "warning", "SVC_DEBUG": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ['debug=true (env)', 'host="0.0.0.0" (cli)', 'log_level="warning" (env)',
                                     'port=8000 (default)', 'workers=3 (file)']


def test_errors_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    cases = [(["--port", "abc"], {}), ([], {"SVC_DEBUG": "maybe"}), (["--port", "70000"], {}), (["--workers", "0"], {}),
             (["--log-level", "loud"], {}), (["--config", str(tmp_path / "missing.json")], {})]
    for content in [{"colour": "red"}, {"port": "8080"}, {"debug": 1}]:
        p = tmp_path / ("c%d.json" % len(cases))
        p.write_text(json.dumps(content))
        cases.append((["--config", str(p)], {}))
    bad.write_text("{not json")
    cases.append((["--config", str(bad)], {}))
    for args, env in cases:
        r = run(args, env)
        assert r.returncode == 2, (args, env, r.stdout, r.stderr)
        assert r.stdout == "" and r.stderr.strip(), (args, env)
    assert run(["--port", "65535"]).returncode == 0
