from pathlib import Path


def test_tmp_log_deleted():
    assert not Path("/app/tmp.log").exists(), "/app/tmp.log still exists"


def test_app_log_kept():
    assert Path("/app/app.log").read_text() == "2024-05-01 service started\n2024-05-01 request ok\n"
