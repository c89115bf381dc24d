import os
import stat

EXPECTED = {"": 0o775, "html": 0o755, "html/index.html": 0o664, "html/site.css": 0o644, "html/uploads": 0o2775,
            "html/uploads/a.txt": 0o660, "cgi-bin": 0o755, "cgi-bin/status.cgi": 0o775, "cgi-bin/hello.cgi": 0o755,
            "cache": 0o1775, "cache/k1": 0o604}


def mode(rel):
    return stat.S_IMODE(os.lstat(os.path.join("/app/www", rel)).st_mode)


def test_no_world_writable():
    seen = 0
    for dp, dns, fns in os.walk("/app/www"):
        for n in dns + fns + ["."]:
            assert not os.lstat(os.path.join(dp, n)).st_mode & stat.S_IWOTH, os.path.join(dp, n)
            seen += 1
    assert seen >= 15
    assert open("/app/www/html/index.html").read() == "<h1>hi</h1>\n"


def test_other_bits_preserved():
    assert {k: mode(k) for k in EXPECTED} == EXPECTED
