import os


def test_cleanup_list():
    lines = [l.strip() for l in open("/app/cleanup_list.txt").read().splitlines() if l.strip()]
    assert lines == sorted(["backups/db-2022.sql", "media/exact.bin", "media/old video.mp4", "reports/2019/q1.csv",
                            "reports/2023/annual.pdf", "tmp/cache/blob.dat"])
    assert os.path.getsize("/app/data/backups/db-2024.sql") == 5242880
    assert os.path.getsize("/app/data/reports/2019/q1.csv") == 600000
