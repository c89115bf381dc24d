#!/bin/bash
set -e
cat > /app/ledger.py <<'PY'
import json
import os


class LedgerError(Exception):
    pass


class InsufficientFunds(LedgerError):
    pass


class Ledger:
    def __init__(self, path):
        self.path = path
        self.acc = {}  # id -> {"balance", "limit", "open", "hist": [(seq, delta)]}
        self.seq = 0
        self._fix = None  # ("truncate", offset) or ("newline", None), done before the next append
        if os.path.exists(path):
            data = open(path, "rb").read()
            off = 0
            for raw in data.splitlines(keepends=True):
                complete = raw.endswith(b"\n")
                try:
                    ev = json.loads(raw)
                except ValueError:
                    if complete:
                        raise LedgerError("corrupt line at byte %d" % off)
                    self._fix = ("truncate", off)
                    break
                self._apply(ev)
                if not complete:
                    self._fix = ("newline", None)
                off += len(raw)

    def _apply(self, ev):
        t = ev["type"]
        self.seq = ev["seq"]
        if t == "opened":
            self.acc[ev["account"]] = {"balance": 0, "limit": ev["limit"], "open": True, "hist": []}
        elif t == "closed":
            self.acc[ev["account"]]["open"] = False
        elif t in ("deposited", "withdrawn"):
            d = ev["amount"] if t == "deposited" else -ev["amount"]
            a = self.acc[ev["account"]]
            a["balance"] += d
            a["hist"].append((ev["seq"], d))
        elif t == "transferred":
            for k, d in (("src", -ev["amount"]), ("dst", ev["amount"])):
                a = self.acc[ev[k]]
                a["balance"] += d
                a["hist"].append((ev["seq"], d))
        else:
            raise LedgerError("unknown event %r" % t)

    def _emit(self, ev):
        ev["seq"] = self.seq + 1
        if self._fix is not None:
            kind, off = self._fix
            with open(self.path, "r+b") as f:
                if kind == "truncate":
                    f.truncate(off)
                else:
                    f.seek(0, 2)
                    f.write(b"\n")
            self._fix = None
        with open(self.path, "a") as f:
            f.write(json.dumps(ev) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._apply(ev)

    @staticmethod
    def _amount(a):
        if type(a) is not int or a <= 0:
            raise ValueError("amount must be a positive int")

    def _open(self, aid):
        a = self.acc.get(aid)
        if a is None or not a["open"]:
            raise LedgerError("no open account %r" % aid)
        return a

    def open_account(self, account_id, overdraft_limit=0):
        if type(overdraft_limit) is not int or overdraft_limit < 0:
            raise ValueError("bad overdraft limit")
        if account_id in self.acc:
            raise LedgerError("duplicate account")
        self._emit({"type": "opened", "account": account_id, "limit": overdraft_limit})

    def deposit(self, account_id, amount):
        self._amount(amount)
        self._open(account_id)
        self._emit({"type": "deposited", "account": account_id, "amount": amount})

    def _check_funds(self, a, amount):
        if a["balance"] - amount < -a["limit"]:
            raise InsufficientFunds("insufficient funds")

    def withdraw(self, account_id, amount):
        self._amount(amount)
        self._check_funds(self._open(account_id), amount)
        self._emit({"type": "withdrawn", "account": account_id, "amount": amount})

    def transfer(self, src, dst, amount):
        self._amount(amount)
        if src == dst:
            raise ValueError("same account")
        a = self._open(src)
        self._open(dst)
        self._check_funds(a, amount)
        self._emit({"type": "transferred", "src": src, "dst": dst, "amount": amount})

    def close_account(self, account_id):
        if self._open(account_id)["balance"] != 0:
            raise LedgerError("balance not zero")
        self._emit({"type": "closed", "account": account_id})

    def balance(self, account_id):
        if account_id not in self.acc:
            raise LedgerError("unknown account")
        return self.acc[account_id]["balance"]

    def history(self, account_id):
        if account_id not in self.acc:
            raise LedgerError("unknown account")
        return list(self.acc[account_id]["hist"])

    def balance_at(self, account_id, seq):
        return sum(d for s, d in self.history(account_id) if s <= seq)

    def accounts(self):
        return sorted(k for k, a in self.acc.items() if a["open"])
PY
