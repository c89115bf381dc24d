#!/bin/bash
cat > /app/svm <<'PY'
#!/usr/bin/env python3
"""SVM interpreter, see /app/VM.md."""
import re
import sys

NOARG = {"pop", "dup", "swap", "over", "add", "sub", "mul", "div", "mod", "eq", "lt", "gt", "not",
         "ret", "print", "halt"}
JUMPS = {"jmp", "jz", "jnz", "call"}
ADDR = {"load", "store"}


class VMError(Exception):
    pass


def fail(line, msg, code):
    print(f"error: line {line}: {msg}", file=sys.stderr)
    sys.exit(code)


def parse(path):
    prog, labels, pending = [], {}, []
    for no, raw in enumerate(open(path), 1):
        toks = raw.split(";", 1)[0].split()
        if not toks:
            continue
        if len(toks) == 1 and toks[0].endswith(":"):
            name = toks[0][:-1]
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                fail(no, f"bad label {name!r}", 1)
            if name in labels:
                fail(no, f"duplicate label {name}", 1)
            labels[name] = len(prog)
            continue
        op, args = toks[0].lower(), toks[1:]
        if op in NOARG:
            if args:
                fail(no, f"{op} takes no operand", 1)
            prog.append((op, None, no))
        elif op == "push" or op in ADDR:
            if len(args) != 1 or not re.fullmatch(r"-?\d+", args[0]):
                fail(no, f"{op} needs an integer operand", 1)
            n = int(args[0])
            if op in ADDR and not 0 <= n <= 255:
                fail(no, f"address {n} out of range", 1)
            prog.append((op, n, no))
        elif op in JUMPS:
            if len(args) != 1:
                fail(no, f"{op} needs a label", 1)
            pending.append((args[0], no))
            prog.append((op, args[0], no))
        else:
            fail(no, f"unknown instruction {toks[0]}", 1)
    for name, no in pending:
        if name not in labels:
            fail(no, f"undefined label {name}", 1)
    return prog, labels


def run(prog, labels):
    stack, rstack, mem, pc = [], [], [0] * 256, 0
    out = sys.stdout

    def pop():
        if not stack:
            raise VMError("stack underflow")
        return stack.pop()

    while pc < len(prog):
        op, arg, no = prog[pc]
        pc += 1
        try:
            if op == "push":
                stack.append(arg)
            elif op == "pop":
                pop()
            elif op == "dup":
                a = pop(); stack += [a, a]
            elif op == "swap":
                b = pop(); a = pop(); stack += [b, a]
            elif op == "over":
                b = pop(); a = pop(); stack += [a, b, a]
            elif op in ("add", "sub", "mul", "div", "mod", "eq", "lt", "gt"):
                b = pop(); a = pop()
                if op in ("div", "mod") and b == 0:
                    raise VMError("division by zero")
                if op == "div":
                    q = abs(a) // abs(b)
                    r = -q if (a < 0) != (b < 0) else q
                elif op == "mod":
                    r = a - b * (-(abs(a) // abs(b)) if (a < 0) != (b < 0) else abs(a) // abs(b))
                else:
                    r = {"add": a + b, "sub": a - b, "mul": a * b, "eq": int(a == b),
                         "lt": int(a < b), "gt": int(a > b)}[op]
                stack.append(r)
            elif op == "not":
                stack.append(int(pop() == 0))
            elif op == "load":
                stack.append(mem[arg])
            elif op == "store":
                mem[arg] = pop()
            elif op == "jmp":
                pc = labels[arg]
            elif op == "jz":
                if pop() == 0:
                    pc = labels[arg]
            elif op == "jnz":
                if pop() != 0:
                    pc = labels[arg]
            elif op == "call":
                rstack.append(pc)
                pc = labels[arg]
            elif op == "ret":
                if not rstack:
                    raise VMError("return stack empty")
                pc = rstack.pop()
            elif op == "print":
                out.write(f"{pop()}\n")
            elif op == "halt":
                break
        except VMError as e:
            out.flush()
            fail(no, str(e), 2)
    out.flush()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: svm PROGRAM", file=sys.stderr)
        sys.exit(64)
    run(*parse(sys.argv[1]))
PY
chmod 755 /app/svm
