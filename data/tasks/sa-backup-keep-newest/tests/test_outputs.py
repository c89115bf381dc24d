import gzip
import os


def test_retention_applied():
    names = sorted(os.listdir("/app/backups"))
    assert names == [".keep", "README.txt", "db-2024-01-28.sql.gz", "db-2024-01-31.sql.gz", "db-2024-02-01.sql.gz",
                     "db-2024-02-03.sql.gz", "media-2023-10-01.tar.gz"], names
    with gzip.open("/app/backups/db-2024-02-03.sql.gz", "rt") as f:
        assert f.read() == "-- dump of 2024-02-03\n"
