"""Moving average used by the sensor dashboard.

    python3 smooth.py K < values.txt     # one number per line in, one average per line out
"""
import sys


def moving_average(xs, k):
    """Averages of every window of k consecutive values of xs, in order.

    A list of n values has n - k + 1 windows (none when k > n).
    """
    if k <= 0:
        raise ValueError("k must be positive")
    out = []
    for i in range(len(xs) - k):
        window = xs[i:i + k]
        out.append(sum(window) / k)
    return out


if __name__ == "__main__":
    k = int(sys.argv[1])
    values = [float(line) for line in sys.stdin if line.strip()]
    for v in moving_average(values, k):
        print(f"{v:.4f}")
