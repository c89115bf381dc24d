from pathlib import Path


def test_tmp_log_deleted():
    check_app_log_kept()
    assert not Path("/app/tmp.log").exists(), "/app/tmp.log still exists"


def check_app_log_kept():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    assert Path("/app/app.log").read_text() == "2024-05-01 service started\n2024-05-01 request ok\n"
