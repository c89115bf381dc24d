import importlib.util
import json
import random

import pytest


def load():
    spec = importlib.util.spec_from_file_location("ledger", "/app/ledger.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def lines(p):
    return [json.loads(l) for l in p.read_text().splitlines()]


def test_commands_and_balances(tmp_path):
    m = load()
    p = tmp_path / "l.jsonl"
    L = m.Ledger(str(p))
    L.open_account("alice")
    L.open_account("bob", overdraft_limit=500)
    L.deposit("alice", 1000)
    L.transfer("alice", "bob", 300)
    L.withdraw("bob", 700)
    assert (L.balance("alice"), L.balance("bob")) == (700, -400)
    n = len(lines(p))
    for bad in [lambda: L.withdraw("bob", 101), lambda: L.transfer("alice", "bob", 701)]:
        with pytest.raises(m.InsufficientFunds):
            bad()
    for bad in [lambda: L.deposit("alice", 0), lambda: L.deposit("alice", 1.5), lambda: L.transfer("alice", "alice", 1),
                lambda: L.withdraw("alice", -5)]:
        with pytest.raises(ValueError):
            bad()
    for bad in [lambda: L.open_account("alice"), lambda: L.deposit("carol", 5), lambda: L.close_account("alice"),
                lambda: L.balance("carol")]:
        with pytest.raises(m.LedgerError):
            bad()
    assert len(lines(p)) == n and [e["seq"] for e in lines(p)] == list(range(1, n + 1))
    L.withdraw("bob", 100)
    L.open_account("zed")
    L.deposit("zed", 5)
    L.withdraw("zed", 5)
    L.close_account("zed")
    assert L.accounts() == ["alice", "bob"] and L.balance("zed") == 0
    with pytest.raises(m.LedgerError):
        L.deposit("zed", 1)
    assert issubclass(m.InsufficientFunds, m.LedgerError)


def simulate(m, path, rng, n):
    """Random commands; returns the ledger, expected balances and expected history (seq, delta) per account.

    Every successful command appends one event, so its seq is the number of successful commands so far."""
    L = m.Ledger(path)
    ids = ["a%d" % i for i in range(5)]
    for i in ids:
        L.open_account(i, overdraft_limit=rng.choice([0, 100]))
    bal = {i: 0 for i in ids}
    hist = {i: [] for i in ids}
    seq = len(ids)
    for _ in range(n):
        op = rng.choice(["dep", "wd", "tr"])
        a, b = rng.sample(ids, 2)
        amt = rng.randint(1, 300)
        try:
            if op == "dep":
                L.deposit(a, amt)
                changes = [(a, amt)]
            elif op == "wd":
                L.withdraw(a, amt)
                changes = [(a, -amt)]
            else:
                L.transfer(a, b, amt)
                changes = [(a, -amt), (b, amt)]
        except m.InsufficientFunds:
            continue
        seq += 1
        for acct, delta in changes:
            bal[acct] += delta
            hist[acct].append((seq, delta))
    return L, bal, hist


def test_replay_from_file(tmp_path):
    m = load()
    rng = random.Random(90)
    p = str(tmp_path / "r.jsonl")
    L, bal, _ = simulate(m, p, rng, 200)
    again = m.Ledger(p)
    assert {i: again.balance(i) for i in bal} == bal
    assert again.accounts() == sorted(bal)
    again.deposit("a0", 1)
    third = m.Ledger(p)
    assert third.balance("a0") == bal["a0"] + 1
    assert [e["seq"] for e in lines(tmp_path / "r.jsonl")] == list(range(1, len(lines(tmp_path / "r.jsonl")) + 1))
    with pytest.raises(m.LedgerError):
        third.open_account("a1")
    assert m.Ledger(str(tmp_path / "new.jsonl")).accounts() == []


def test_history_and_balance_at(tmp_path):
    m = load()
    rng = random.Random(91)
    p = str(tmp_path / "h.jsonl")
    L, bal, want = simulate(m, p, rng, 120)
    n_events = len(lines(tmp_path / "h.jsonl"))
    assert n_events == max(s for h in want.values() for s, _ in h)
    for acct in bal:
        hist = [tuple(x) for x in L.history(acct)]
        assert hist == want[acct]
        assert sum(d for _, d in hist) == bal[acct]
        for s in rng.sample(range(1, n_events + 1), 15):
            assert L.balance_at(acct, s) == sum(d for q, d in want[acct] if q <= s)
        assert L.balance_at(acct, 0) == 0
    L2 = m.Ledger(p)
    assert L2.history("a3") == L.history("a3")


def test_torn_write_recovery(tmp_path):
    m = load()
    p = tmp_path / "t.jsonl"
    L = m.Ledger(str(p))
    L.open_account("x")
    L.deposit("x", 50)
    with open(p, "a") as f:
        f.write('{"type": "deposited", "account": "x", "amo')
    R = m.Ledger(str(p))
    assert R.balance("x") == 50
    R.deposit("x", 7)
    evs = lines(p)
    assert len(evs) == 3 and evs[-1]["seq"] == 3
    assert m.Ledger(str(p)).balance("x") == 57
    p.write_text(p.read_text() + "garbage line\n" + json.dumps({"type": "deposited", "seq": 5, "account": "x", "amount": 1}) + "\n")
    with pytest.raises(m.LedgerError):
        m.Ledger(str(p))
