import subprocess
import tempfile


def run(path, *names):
    return subprocess.run(["/app/csvcols", path, *names], capture_output=True, timeout=20)


def write(data: bytes):
    f = tempfile.NamedTemporaryFile(suffix=".csv", delete=False)
    f.write(data)
    f.close()
    return f.name


def test_example():
    r = run("/app/people.csv", "name", "id")
    assert r.returncode == 0
    assert r.stdout.decode() == 'name,id\nAnn,1\n"Smith, Bob",2\nCé,3\n'
    r = run("/app/people.csv", "notes", "city")
    assert r.stdout.decode() == 'notes,city\n"likes ""tea"", coffee",Berlin\n,Paris\nplain,"New\nYork"\n'
    # the example with one more row: the output must follow the file, not a fixed text
    p = write(open("/app/people.csv", "rb").read() + '4,"Dee ""D""",Rome,x\n'.encode())
    assert run(p, "name", "id").stdout.decode() == 'name,id\nAnn,1\n"Smith, Bob",2\nCé,3\n"Dee ""D""",4\n'


def test_hidden_quoting():
    data = ('sku,"desc, long",qty,"we""ird"\r\n'
            'A1,"multi\r\nline",3,x\r\n'
            'B2,"has ""quotes""",10,"y,z"\r\n'
            '"C3",plain text,0,\r\n'
            'D4,"",7,"end"\r\n').encode()
    p = write(data)
    r = run(p, "qty", 'we"ird', "sku", "desc, long", "qty")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == ('qty,"we""ird",sku,"desc, long",qty\n'
                                 '3,x,A1,"multi\r\nline",3\n'
                                 '10,"y,z",B2,"has ""quotes""",10\n'
                                 '0,,C3,plain text,0\n'
                                 '7,end,D4,,7\n')
    p = write("k,v\nα,\"ü, ö\"\nlast,line-without-newline".encode())
    assert run(p, "v").stdout.decode() == 'v\n"ü, ö"\nline-without-newline\n'


def test_unknown_column():
    r = run("/app/people.csv", "id", "salary")
    assert r.returncode == 1 and r.stdout == b"" and r.stderr.strip()
    assert run("/app/people.csv", "city").stdout.decode() == 'city\nBerlin\nParis\n"New\nYork"\n'
