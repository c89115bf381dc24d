import numpy as np


def spiral(n_per_class, seed, noise=0.25):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for c in range(3):
        r = np.linspace(0.05, 1.0, n_per_class)
        t = np.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + rng.normal(scale=noise, size=n_per_class)
        X.append(np.column_stack([r * np.sin(t), r * np.cos(t)]))
        y.append(np.full(n_per_class, c))
    return np.round(np.concatenate(X), 6), np.concatenate(y)


if __name__ == "__main__":
    import os
    os.makedirs("/app/data", exist_ok=True)
    X, y = spiral(200, 0)
    with open("/app/data/spiral_train.csv", "w") as f:
        f.write("x1,x2,label\n")
        for (a, b), c in zip(X, y):
            f.write(f"{a},{b},{c}\n")
