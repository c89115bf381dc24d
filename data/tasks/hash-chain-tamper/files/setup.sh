set -e
mkdir -p /app/audit
python3 - <<'PY'
import hmac, hashlib, random
r = random.Random(21)
key = b"ledger-key-" + bytes(r.getrandbits(8) for _ in range(16)).hex().encode()
open("/app/audit/ledger.key", "wb").write(key)
acts = ["login", "logout", "transfer 100 to acct-7", "update email", "grant role viewer", "export report", "reset password"]
users = ["alice", "bob", "carol", "dave"]
def h(prev, seq, ts, msg):
    return hmac.new(key, f"{prev}|{seq}|{ts}|{msg}".encode(), hashlib.sha256).hexdigest()
lines, prev = [], "0" * 64
for seq in range(1, 121):
    ts = f"2024-07-01T{8 + seq // 60:02d}:{seq % 60:02d}:00Z"
    msg = f"user={r.choice(users)} action={r.choice(acts)}"
    hv = h(prev, seq, ts, msg)
    lines.append([str(seq), ts, msg, hv]); prev = hv
# tamper: edit message of seq 37 (keeps its old hash) -> line 37 bad
lines[36][2] = "user=mallory action=grant role admin"
# delete seq 70 -> line of seq 71 becomes bad (seq gap + prev hash)
del lines[69]
# insert a forged line after seq 100 with a hash computed with the wrong key -> forged line and the next one bad
idx = [i for i, l in enumerate(lines) if l[0] == "100"][0]
lines.insert(idx + 1, ["101", "2024-07-01T09:40:30Z", "user=mallory action=export report", "ab" * 32])
open("/app/audit/ledger.log", "w").write("\n".join("|".join(l) for l in lines) + "\n")
PY
