import json
import os
import subprocess
from pathlib import Path

BASE_SERVICE = {"name": "orders", "port": 8080, "workers": 2, "debug": False}


def load(env):
    return json.loads(Path(f"/app/rendered/{env}.json").read_text())


def render(env):
    return subprocess.run(["python3", "/app/render.py", env], capture_output=True, text=True, timeout=30)


def test_rendered_environments():
    assert load("dev") == {
        "service": dict(BASE_SERVICE, debug=True),
        "db": {"host": "localhost", "port": 5432, "name": "orders", "pool": {"min": 1, "max": 5}},
        "cache": {"enabled": True, "url": "redis://localhost:6379/0"}, "cache_host": "localhost",
        "database_url": "postgres://localhost:5432/orders", "features": ["search", "export"],
        "log": {"level": "debug", "format": "text"}}
    st = load("staging")
    assert st["db"] == {"host": "db.staging.internal", "port": 5432, "name": "orders_staging", "pool": {"min": 1, "max": 5}}
    assert st["database_url"] == "postgres://db.staging.internal:5432/orders_staging"
    assert st["cache"]["url"] == "redis://cache.staging.internal:6379/0"
    assert st["features"] == ["search", "export", "beta-checkout"] and st["log"] == {"level": "info", "format": "json"}
    pr = load("prod")
    assert pr["service"] == {"name": "orders", "port": 80, "workers": 16, "debug": False}
    assert pr["db"]["pool"] == {"min": 1, "max": 50}
    assert pr["cache"] == {"enabled": True, "url": "redis://cache.prod.internal:6380/16"}
    assert pr["features"] == ["search"] and "debug_endpoints" not in pr


def test_hidden_overlay():
    p = Path("/app/config/overlays/qa7.json")
    p.write_text(json.dumps({
        "service": {"name": "orders-qa", "debug": None},
        "db": {"pool": None, "host": "${qa.db_host}"},
        "qa": {"db_host": "db-${qa.shard}.qa.internal", "shard": 7, "strict": True},
        "banner": "${service.name} on ${db.host} strict=${qa.strict}",
        "cache": False}))
    try:
        r = render("qa7")
        assert r.returncode == 0, r.stderr
        got = load("qa7")
    finally:
        p.unlink()
    assert got["service"] == {"name": "orders-qa", "port": 8080, "workers": 2}
    assert got["db"] == {"host": "db-7.qa.internal", "port": 5432, "name": "orders"}
    assert got["database_url"] == "postgres://db-7.qa.internal:5432/orders"
    assert got["banner"] == "orders-qa on db-7.qa.internal strict=true"
    assert got["cache"] is False and got["qa"]["shard"] == 7


def test_errors():
    r = render("nosuchenv")
    assert r.returncode == 1 and r.stderr.strip()
    p = Path("/app/config/overlays/broken.json")
    p.write_text(json.dumps({"log": {"file": "/var/log/${service.logdir}/app.log"}}))
    try:
        r = render("broken")
    finally:
        p.unlink()
    assert r.returncode == 1 and "service.logdir" in r.stderr
    assert not os.path.exists("/app/rendered/broken.json")
    assert load("dev")["log"]["level"] == "debug"
