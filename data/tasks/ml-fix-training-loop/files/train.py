"""Logistic regression with mini-batch SGD and early stopping on a held-out validation split.

Writes /app/model.npz (w, b, mean, std) and /app/train_log.json (val_loss per epoch, best_epoch).
"""
import json

import numpy as np

LR = 0.1
BATCH = 64
MAX_EPOCHS = 200
PATIENCE = 5


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def log_loss(w, b, X, y):
    p = np.clip(sigmoid(X @ w + b), 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def main():
    data = np.loadtxt("/app/data/train.csv", delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1]
    rng = np.random.default_rng(0)
    order = rng.permutation(len(X))
    n_val = len(X) // 5
    val_idx, tr_idx = order[:n_val], order[n_val:]
    mean, std = X.mean(0), X.std(0)
    Xs = (X - mean) / std
    Xtr, ytr, Xva, yva = Xs[tr_idx], y[tr_idx], Xs[val_idx], y[val_idx]

    w = np.zeros(X.shape[1])
    b = 0.0
    best = (float("inf"), w, b, -1)
    bad_epochs = 0
    history = []
    for epoch in range(MAX_EPOCHS):
        perm = rng.permutation(len(Xtr))
        Xtr = Xtr[perm]
        for start in range(0, len(Xtr), BATCH):
            xb, yb = Xtr[start:start + BATCH], ytr[start:start + BATCH]
            err = sigmoid(xb @ w + b) - yb
            grad_w = xb.T @ err / len(xb)
            grad_b = err.mean()
            w += LR * grad_w
            b -= LR * grad_b
        val = log_loss(w, b, Xva, yva)
        history.append(val)
        if val < best[0]:
            best = (val, w, b, epoch)
        else:
            bad_epochs += 1
        if bad_epochs > PATIENCE:
            break
    _, w, b, best_epoch = best
    np.savez("/app/model.npz", w=w, b=np.array(b), mean=mean, std=std)
    json.dump({"val_loss": history, "best_epoch": best_epoch}, open("/app/train_log.json", "w"))
    print(f"stopped after {len(history)} epochs, best epoch {best_epoch}, val loss {best[0]:.4f}")


if __name__ == "__main__":
    main()
