import os
import tarfile
from pathlib import Path

R = Path("/app/restore")


def test_nginx_restored():
    assert (R / "etc/nginx/nginx.conf").read_text() == "worker_processes 4;\n"
    assert (R / "etc/nginx/sites-enabled/default").read_text() == "server { listen 80; root /var/www/html; }\n"
    assert (R / "etc/nginx/conf.d/gzip.conf").read_text() == "gzip on;\n"


def test_nothing_else_extracted():
    files = sorted(str(p.relative_to(R)) for p in R.rglob("*") if not p.is_dir())
    assert files == ["etc/nginx/conf.d/gzip.conf", "etc/nginx/nginx.conf", "etc/nginx/sites-enabled/default"]
    assert sorted(os.listdir(R / "etc")) == ["nginx"]
    with tarfile.open("/app/server-backup.tar.gz") as tf:
        assert "etc/ssh/sshd_config" in tf.getnames()
