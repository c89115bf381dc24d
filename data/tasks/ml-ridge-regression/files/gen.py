import os
import numpy as np


def make():
    rng = np.random.default_rng(42)
    n, d = 80, 8
    base = rng.normal(size=(n + 40, 3))
    X = np.column_stack([base, base @ rng.normal(size=(3, d - 3)) + 0.05 * rng.normal(size=(n + 40, d - 3))])
    X = np.round(X * 10 + 50, 3)
    w = rng.normal(size=d)
    y = np.round(X @ w + 7.5 + rng.normal(scale=2.0, size=n + 40), 3)
    return X[:n], y[:n], X[n:], y[n:]


if __name__ == "__main__":
    X, y, T, _ = make()
    os.makedirs("/app/data", exist_ok=True)
    cols = [f"x{i + 1}" for i in range(X.shape[1])]
    with open("/app/data/train.csv", "w") as f:
        f.write(",".join(cols + ["y"]) + "\n")
        for row, t in zip(X, y):
            f.write(",".join(f"{v:.3f}" for v in row) + f",{t:.3f}\n")
    with open("/app/data/test.csv", "w") as f:
        f.write(",".join(["id"] + cols) + "\n")
        for i, row in enumerate(T):
            f.write(f"{i}," + ",".join(f"{v:.3f}" for v in row) + "\n")
