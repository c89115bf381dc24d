import json
import random

TOPICS = {
    "sports": "match goal team coach league score player season win referee stadium cup".split(),
    "tech": "software chip cloud server code laptop startup network data app robot update".split(),
    "food": "recipe flavor chef bake spicy dinner sauce fresh kitchen taste menu dessert".split(),
}
COMMON = "the a of and to in is it for on with this was that new great today".split()


def doc(rng, label, n_words):
    words = []
    for _ in range(n_words):
        r = rng.random()
        if r < 0.35:
            words.append(rng.choice(TOPICS[label]))
        elif r < 0.5:
            words.append(rng.choice(TOPICS[rng.choice(sorted(TOPICS))]))
        elif r < 0.97:
            words.append(rng.choice(COMMON))
        else:
            words.append("w" + str(rng.randint(0, 999)))
    text = " ".join(words)
    return text.capitalize().replace(" it ", " It, ").replace(" data ", " DATA! ") + "."


def make(seed, n, weights=(0.5, 0.3, 0.2)):
    rng = random.Random(seed)
    labels = sorted(TOPICS)
    return [(lambda lab: {"text": doc(rng, lab, rng.randint(6, 30)), "label": lab})(
        rng.choices(labels, weights)[0]) for _ in range(n)]


if __name__ == "__main__":
    import os
    os.makedirs("/app/data", exist_ok=True)
    with open("/app/data/train.jsonl", "w") as f:
        for d in make(1, 400):
            f.write(json.dumps(d) + "\n")
