set -e
python3 - <<'PY'
import hashlib, random
r = random.Random(5)
words = sorted({"".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(5, 9))) for _ in range(3000)})
words[:8] = ["password", "dragon", "monkey", "letmein", "sunshine", "qwerty", "football", "princess"]
open("/app/wordlist.txt", "w").write("\n".join(words) + "\n")
users = {
    "alice": "Sunshine", "bob": "dragon7", "carol": "x8#Lq!vZ2r", "dave": words[1234], "erin": "Monkey0",
    "frank": "correct-horse-battery", "grace": words[2999] + "3", "heidi": "dragon77", "ivan": "PASSWORD",
    "judy": "1letmein", "mallory": "qwerty", "oscar": "Football9x", "peggy": words[42].capitalize(),
}
rows = ["user,salt,hash"]
for u in sorted(users):
    salt = "%08x" % r.getrandbits(32)
    rows.append(f"{u},{salt},{hashlib.sha256((salt + users[u]).encode()).hexdigest()}")
open("/app/shadow.csv", "w").write("\n".join(rows) + "\n")
PY
