import os
from pathlib import Path

EXPECTED = sorted(["/app/configs/hosts/web/app.conf", "/app/configs/hosts/db/settings.conf",
                   "/app/configs/archive/.master.bak"])


def test_hardlinks_listed():
    got = [l.strip() for l in Path("/app/hardlinks.txt").read_text().splitlines() if l.strip()]
    assert sorted(got) == EXPECTED
    st = os.stat("/app/configs/master.conf")
    assert st.st_nlink == 4
    assert os.path.islink("/app/configs/hosts/db/link.conf")
