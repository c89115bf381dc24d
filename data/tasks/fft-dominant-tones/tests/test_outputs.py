import subprocess

import numpy as np


def run(path, k):
    r = subprocess.run(["python3", "/app/tones.py", str(path), str(k)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-1500:]
    return [tuple(float(v) for v in line.split()) for line in r.stdout.splitlines()]


def expected(x, fs, k):
    n = len(x)
    X = np.fft.rfft(x - x.mean())
    amp = 2 * np.abs(X) / n
    bins = [b for b in range(1, len(X)) if 2 * b < n]
    bins.sort(key=lambda b: -amp[b])
    return [(b * fs / n, amp[b]) for b in bins[:k]]


def write(tmp_path, x, fs):
    p = tmp_path / "s.csv"
    p.write_text(f"# sample_rate_hz={fs}\n" + "".join(f"{float(v)!r}\n" for v in x))
    return p


def same(got, want):
    assert len(got) == len(want)
    for (gf, ga), (wf, wa) in zip(got, want):
        assert abs(gf - wf) < 1.5e-3 and abs(ga - wa) < 1.5e-4, (got, want)


def test_example_signal():
    got = run("/app/signal.csv", 2)
    assert [round(f, 3) for f, _ in got] == [50.0, 120.5]
    assert abs(got[0][1] - 2.0) < 0.05 and abs(got[1][1] - 0.8) < 0.05


def test_hidden_signals(tmp_path):
    rng = np.random.default_rng(99)
    fs, n = 8000, 4000          # 2 Hz bins
    t = np.arange(n) / fs
    x = 5 + 1.5 * np.sin(2 * np.pi * 440 * t) + 3.0 * np.sin(2 * np.pi * 1002 * t + 1) + 0.7 * np.cos(2 * np.pi * 3998 * t)
    x += rng.normal(0, 0.05, n)
    got = run(write(tmp_path, x, fs), 3)
    same(got, expected(x, fs, 3))
    assert [round(f) for f, _ in got] == [1002, 440, 3998]
    fs, n = 250, 999            # odd length, frequencies off-bin
    t = np.arange(n) / fs
    x = np.sin(2 * np.pi * 12.3 * t) + 0.4 * np.sin(2 * np.pi * 77.7 * t) + rng.normal(0, 0.3, n)
    same(run(write(tmp_path, x, fs), 5), expected(x, fs, 5))
    x = np.zeros(64)
    x[::8] = 1.0                # impulse train: harmonics of fs/8, Nyquist excluded
    got = run(write(tmp_path, x, 64), 3)
    assert sorted(round(f, 3) for f, _ in got) == [8.0, 16.0, 24.0]
