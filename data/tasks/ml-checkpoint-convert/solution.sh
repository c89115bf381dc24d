#!/bin/bash
set -e
cd /app/ckpt
python3 - <<'PY'
import numpy as np
v1 = dict(np.load("model_v1.npz"))
D, H, hd = 16, 4, 4
out = {"embed.weight": v1["embedding/table"], "norm.weight": v1["final_ln/gamma"], "norm.bias": v1["final_ln/beta"],
       "lm_head.weight": v1["lm_head/kernel"].T}
i = 0
while f"block_{i}/attn/qkv/kernel" in v1:
    p, q = f"block_{i}/", f"layers.{i}."
    K = v1[p + "attn/qkv/kernel"].reshape(D, H, 3, hd)
    B = v1[p + "attn/qkv/bias"].reshape(H, 3, hd)
    for j, name in enumerate("qkv"):
        out[q + f"attn.{name}_proj.weight"] = K[:, :, j, :].reshape(D, D).T
        out[q + f"attn.{name}_proj.bias"] = B[:, j, :].reshape(D)
    out[q + "attn.o_proj.weight"] = v1[p + "attn/out/kernel"].T
    out[q + "attn.o_proj.bias"] = v1[p + "attn/out/bias"]
    out[q + "mlp.up.weight"] = v1[p + "mlp/fc1/kernel"].T
    out[q + "mlp.up.bias"] = v1[p + "mlp/fc1/bias"]
    out[q + "mlp.down.weight"] = v1[p + "mlp/fc2/kernel"].T
    out[q + "mlp.down.bias"] = v1[p + "mlp/fc2/bias"]
    for a, b in (("ln1", "norm1"), ("ln2", "norm2")):
        out[q + b + ".weight"] = v1[p + a + "/gamma"]
        out[q + b + ".bias"] = v1[p + a + "/beta"]
    i += 1
np.savez("model_v2.npz", **{k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()})
PY
