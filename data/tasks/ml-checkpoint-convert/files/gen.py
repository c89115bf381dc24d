import numpy as np

V, D, F, L, H = 50, 16, 40, 3, 4


def make_v1():
    rng = np.random.default_rng(99)
    w = {"embedding/table": rng.normal(size=(V, D))}
    for i in range(L):
        p = f"block_{i}/"
        w[p + "attn/qkv/kernel"] = rng.normal(size=(D, 3 * D))
        w[p + "attn/qkv/bias"] = rng.normal(size=3 * D)
        w[p + "attn/out/kernel"] = rng.normal(size=(D, D))
        w[p + "attn/out/bias"] = rng.normal(size=D)
        w[p + "mlp/fc1/kernel"] = rng.normal(size=(D, F))
        w[p + "mlp/fc1/bias"] = rng.normal(size=F)
        w[p + "mlp/fc2/kernel"] = rng.normal(size=(F, D))
        w[p + "mlp/fc2/bias"] = rng.normal(size=D)
        for ln in ("ln1", "ln2"):
            w[p + ln + "/gamma"] = 1 + 0.1 * rng.normal(size=D)
            w[p + ln + "/beta"] = 0.1 * rng.normal(size=D)
    w["final_ln/gamma"] = 1 + 0.1 * rng.normal(size=D)
    w["final_ln/beta"] = 0.1 * rng.normal(size=D)
    w["lm_head/kernel"] = rng.normal(size=(D, V))
    return {k: v.astype(np.float32) for k, v in w.items()}


if __name__ == "__main__":
    import os
    os.makedirs("/app/ckpt", exist_ok=True)
    np.savez("/app/ckpt/model_v1.npz", **make_v1())
