from pathlib import Path


def test_src_dir():
    assert Path("/app/project/src").is_dir()


def test_tests_dir():
    assert Path("/app/project/tests").is_dir()


def test_docs_dir():
    assert Path("/app/project/docs").is_dir()
