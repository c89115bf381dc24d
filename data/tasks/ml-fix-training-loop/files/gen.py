import numpy as np


def make(n, sample_seed):
    w_rng = np.random.default_rng(2718)
    w = w_rng.normal(size=12)
    scales = 10.0 ** w_rng.integers(-2, 4, size=12)
    offsets = w_rng.normal(scale=50, size=12)
    rng = np.random.default_rng(sample_seed)
    Z = rng.normal(size=(n, 12))
    y = (Z @ w + rng.normal(scale=2.0, size=n) > 0.3).astype(int)
    return np.round(Z * scales + offsets, 5), y


if __name__ == "__main__":
    import os
    os.makedirs("/app/data", exist_ok=True)
    X, y = make(3000, 1)
    with open("/app/data/train.csv", "w") as f:
        f.write(",".join(f"x{i}" for i in range(12)) + ",label\n")
        for row, t in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + f",{t}\n")
