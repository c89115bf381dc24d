
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

def shapes():
    s = {"embed.weight": (V, D), "norm.weight": (D,), "norm.bias": (D,), "lm_head.weight": (V, D)}
    for i in range(L):
        q = f"layers.{i}."
        for n in ("q", "k", "v", "o"):
            s[q + f"attn.{n}_proj.weight"], s[q + f"attn.{n}_proj.bias"] = (D, D), (D,)
        s[q + "mlp.up.weight"], s[q + "mlp.up.bias"] = (F, D), (F,)
        s[q + "mlp.down.weight"], s[q + "mlp.down.bias"] = (D, F), (D,)
        for n in ("norm1", "norm2"):
            s[q + n + ".weight"], s[q + n + ".bias"] = (D,), (D,)
    return s

def v2():
    z = np.load("/app/ckpt/model_v2.npz")
    return {k: z[k] for k in z.files}

def v1_unchanged():
    z = np.load("/app/ckpt/model_v1.npz")
    ref = make_v1()
    assert set(z.files) == set(ref) and all(np.array_equal(z[k], ref[k]) for k in ref)

def test_keys_shapes_dtype():
    got = v2()
    want = shapes()
    assert set(got) == set(want), (sorted(set(got) ^ set(want)))[:10]
    for k, s in want.items():
        assert got[k].shape == s and got[k].dtype == np.float32, (k, got[k].shape, got[k].dtype)
    # whatever the layout, each v2 array (q/k/v together) holds exactly the values of its v1 source
    ref = make_v1()
    srcs = {"embed.weight": ["embedding/table"], "lm_head.weight": ["lm_head/kernel"],
            "norm.weight": ["final_ln/gamma"], "norm.bias": ["final_ln/beta"]}
    for i in range(L):
        p, q = f"block_{i}/", f"layers.{i}."
        for a, b in (("attn/out", "attn.o_proj"), ("mlp/fc1", "mlp.up"), ("mlp/fc2", "mlp.down")):
            srcs[q + b + ".weight"], srcs[q + b + ".bias"] = [p + a + "/kernel"], [p + a + "/bias"]
        for a, b in (("ln1", "norm1"), ("ln2", "norm2")):
            srcs[q + b + ".weight"], srcs[q + b + ".bias"] = [p + a + "/gamma"], [p + a + "/beta"]
    for k, src in srcs.items():
        assert np.array_equal(np.sort(got[k], axis=None), np.sort(ref[src[0]], axis=None)), k
    for i in range(L):
        for part in ("weight", "bias"):
            mine = np.concatenate([got[f"layers.{i}.attn.{n}_proj.{part}"].ravel() for n in "qkv"])
            src = ref[f"block_{i}/attn/qkv/" + ("kernel" if part == "weight" else "bias")]
            assert np.array_equal(np.sort(mine), np.sort(src, axis=None)), (i, part)
    v1_unchanged()

def test_qkv_split():
    got, ref = v2(), make_v1()
    x = np.random.default_rng(0).normal(size=(5, D)).astype(np.float32)
    for i in range(L):
        fused = x @ ref[f"block_{i}/attn/qkv/kernel"] + ref[f"block_{i}/attn/qkv/bias"]  # (5, 3D)
        per_head = fused.reshape(5, H, 3, D // H)
        for j, n in enumerate("qkv"):
            want = per_head[:, :, j, :].reshape(5, D)
            out = x @ got[f"layers.{i}.attn.{n}_proj.weight"].T + got[f"layers.{i}.attn.{n}_proj.bias"]
            assert np.allclose(out, want, atol=1e-4), (i, n)

def test_other_weights():
    got, ref = v2(), make_v1()
    assert np.array_equal(got["embed.weight"], ref["embedding/table"])
    assert np.array_equal(got["lm_head.weight"], ref["lm_head/kernel"].T)
    assert np.array_equal(got["norm.weight"], ref["final_ln/gamma"])
    assert np.array_equal(got["norm.bias"], ref["final_ln/beta"])
    for i in range(L):
        p, q = f"block_{i}/", f"layers.{i}."
        pairs = [("attn/out", "attn.o_proj"), ("mlp/fc1", "mlp.up"), ("mlp/fc2", "mlp.down")]
        for a, b in pairs:
            assert np.array_equal(got[q + b + ".weight"], ref[p + a + "/kernel"].T), (i, b)
            assert np.array_equal(got[q + b + ".bias"], ref[p + a + "/bias"]), (i, b)
        for a, b in (("ln1", "norm1"), ("ln2", "norm2")):
            assert np.array_equal(got[q + b + ".weight"], ref[p + a + "/gamma"])
            assert np.array_equal(got[q + b + ".bias"], ref[p + a + "/beta"])
    v1_unchanged()
