"""A one-hidden-layer MLP classifier in numpy: X -> tanh(X @ W1 + b1) -> softmax(H @ W2 + b2).

Shapes: X (n, n_in) float64; y (n,) int class indices; W1 (n_in, n_hidden); b1 (n_hidden,);
W2 (n_hidden, n_out); b2 (n_out,). params is a dict with exactly those four keys.
"""
import numpy as np


def init_params(n_in, n_hidden, n_out, seed=0):
    rng = np.random.default_rng(seed)
    return {"W1": rng.normal(scale=1.0 / np.sqrt(n_in), size=(n_in, n_hidden)), "b1": np.zeros(n_hidden),
            "W2": rng.normal(scale=1.0 / np.sqrt(n_hidden), size=(n_hidden, n_out)), "b2": np.zeros(n_out)}


def forward(params, X):
    """Class probabilities, shape (n, n_out); each row sums to 1."""
    raise NotImplementedError


def loss_and_grads(params, X, y):
    """Mean cross-entropy loss over the n rows (float) and its gradients: a dict with the same keys and
    shapes as params, holding d loss / d param."""
    raise NotImplementedError


def train(X, y, n_hidden=64, seed=0):
    """Train on (X, y) and return params."""
    raise NotImplementedError


if __name__ == "__main__":
    data = np.loadtxt("/app/data/spiral_train.csv", delimiter=",", skiprows=1)
    X, y = data[:, :2], data[:, 2].astype(int)
    params = train(X, y)
    np.savez("/app/mlp_weights.npz", **params)
    acc = (forward(params, X).argmax(1) == y).mean()
    print(f"train accuracy {acc:.3f}")
