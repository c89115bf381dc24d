import numpy as np

FEATURES = ["temp_c", "humidity", "pressure_hpa", "wind_kmh", "cloud_pct", "uv_index"]
LABELS = ["clear", "rain", "storm"]


def make(n, seed, missing=0.0):
    base = np.random.default_rng(404)
    centers = base.normal(size=(3, 6)) * 1.6
    scales = np.array([8.0, 15.0, 9.0, 12.0, 25.0, 2.0])
    offsets = np.array([15.0, 60.0, 1013.0, 20.0, 50.0, 4.0])
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    Z = centers[y] + rng.normal(size=(n, 6))
    X = np.round(Z * scales + offsets, 2)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, [LABELS[i] for i in y]


if __name__ == "__main__":
    import os
    os.makedirs("/app/data", exist_ok=True)
    X, y = make(2400, 1, missing=0.03)
    with open("/app/data/train.csv", "w") as f:
        f.write(",".join(FEATURES) + ",label\n")
        for row, lab in zip(X, y):
            f.write(",".join("" if np.isnan(v) else f"{v:.2f}" for v in row) + f",{lab}\n")
