import numpy as np


def make():
    rng = np.random.default_rng(123)
    latent = rng.normal(size=(250, 3)) * np.array([5.0, 2.5, 1.0])
    mix = rng.normal(size=(3, 6))
    X = latent @ mix + rng.normal(scale=0.3, size=(250, 6)) + np.array([10, -3, 0, 5, 100, 1])
    return np.round(X, 4)


if __name__ == "__main__":
    import os
    os.makedirs("/app/data", exist_ok=True)
    X = make()
    with open("/app/data/features.csv", "w") as f:
        f.write("f1,f2,f3,f4,f5,f6\n")
        for row in X:
            f.write(",".join(f"{v:.4f}" for v in row) + "\n")
