import random


def make_rows():
    rng = random.Random(77)
    rows = []
    for u in range(160):
        uid = f"u{rng.randint(10000, 99999)}{u}"
        risk = rng.random()
        for s in range(rng.randint(3, 12)):
            row = [uid, f"s{u}_{s}", f"{rng.gauss(risk * 10, 2):.2f}", str(rng.randint(0, 30)),
                   str(int(rng.random() < risk * 0.8))]
            rows.append(row)
            if rng.random() < 0.12:
                rows.append(list(row))  # exact duplicate (logging glitch)
    rng.shuffle(rows)
    return rows


if __name__ == "__main__":
    import os
    os.makedirs("/app/data", exist_ok=True)
    with open("/app/data/events.csv", "w") as f:
        f.write("user_id,session_id,score,clicks,label\n")
        for r in make_rows():
            f.write(",".join(r) + "\n")
