import subprocess
import tempfile


def svm(src):
    with tempfile.NamedTemporaryFile("w", suffix=".svm", delete=False) as f:
        f.write(src)
    return subprocess.run(["/app/svm", f.name], capture_output=True, text=True, timeout=60)


def out(src):
    r = svm(src)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return r.stdout.split()


def test_example_and_arithmetic():
    r = subprocess.run(["/app/svm", "/app/examples/countdown.svm"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "3\n2\n1\n")
    assert out("push 7\npush -2\ndiv\nprint\npush -7\npush 2\ndiv\nprint\n") == ["-3", "-3"]
    assert out("push -7\npush 2\nmod\nprint\npush 7\npush -2\nMOD\nprint\n") == ["-1", "1"]
    assert out("push 2\npush 5\nover\nprint\nswap\nsub\nprint ; 5-2\n") == ["2", "3"]
    assert out("push 99999999999\ndup\nmul\nprint\n") == [str(99999999999 ** 2)]
    assert out("push 3\npush 3\neq\nprint\npush 2\npush 3\nlt\nprint\npush 2\npush 3\ngt\nprint\npush 0\nnot\nprint\n") == ["1", "1", "0", "1"]


def test_control_flow_and_calls():
    fib = """
        push 0
        store 0        ; a
        push 1
        store 1        ; b
        push 15
        store 2        ; counter
    next:
        load 0
        print
        load 0
        load 1
        dup
        store 0
        add
        store 1
        load 2
        push 1
        sub
        dup
        store 2
        jnz next
    """
    assert out(fib) == ["0", "1", "1", "2", "3", "5", "8", "13", "21", "34", "55", "89", "144", "233", "377"]
    calls = """
        jmp main
    square:            ; ( n -- n*n )
        dup
        mul
        ret
    main:
        push 4
        call square
        call square
        print
        push 9
        call square
        print
        halt
        push 1
        print
    """
    assert out(calls) == ["256", "81"]
    fact = "push 1\nstore 0\npush 20\nstore 1\nl:\nload 0\nload 1\nmul\nstore 0\nload 1\npush 1\nsub\ndup\nstore 1\njz done\njmp l\ndone:\nload 0\nprint\n"
    assert out(fact) == [str(2432902008176640000)]
    loop = "push 200000\nl:\npush 1\nsub\ndup\njnz l\nprint\n"
    assert out(loop) == ["0"]


def test_static_errors():
    for src, line in [("push 1\nfrobnicate\nprint\n", 2), ("print\npush\n", 2), ("push x\n", 1),
                      ("jmp nowhere\n", 1), ("a:\npush 1\na:\n", 3), ("push 1\ndup 4\n", 2),
                      ("load 256\n", 1), ("push 5\nprint\n\n; c\nstore -1\n", 5)]:
        r = svm(src)
        assert r.returncode == 1, src
        assert r.stdout == "", src
        assert r.stderr.startswith(f"error: line {line}:"), (src, r.stderr)


def test_runtime_errors():
    r = svm("push 1\nprint\npop\n")
    assert (r.returncode, r.stdout) == (2, "1\n") and r.stderr.startswith("error: line 3:")
    r = svm("push 1\npush 0\ndiv\n")
    assert r.returncode == 2 and r.stderr.startswith("error: line 3:")
    r = svm("push 1\npush 0\nmod\n")
    assert r.returncode == 2 and r.stderr.startswith("error: line 3:")
    r = svm("push 5\nprint\n\nret\n")
    assert (r.returncode, r.stdout) == (2, "5\n") and r.stderr.startswith("error: line 4:")
