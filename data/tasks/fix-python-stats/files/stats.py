"""Small statistics helpers used by the nightly report."""
import sys


def mean(xs):
    return sum(xs) / len(xs)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    mid = n // 2
    if n % 2 == 0:
        return xs[mid]
    return (xs[mid - 1] + xs[mid]) / 2


def variance(xs):
    """Sample variance (divides by n - 1)."""
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)


def main(path):
    xs = [float(line) for line in open(path) if line.strip()]
    print(f"mean={mean(xs):.3f} median={median(xs):.3f} variance={variance(xs):.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
