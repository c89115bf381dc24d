set -e
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com" GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
n=0
commit() { n=$((n+1)); d="$((1709283600 + n * 86400)) +0000"; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$1"; }
mkdir -p /app/mathlib && cd /app/mathlib && git init -q -b main
cat > mathlib.py <<'P'
"""Integer helpers."""


def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def gcd(a, b):
    while b:
        a, b = b, a % b
    return abs(a)
P
cat > check.py <<'P'
"""Regression check: exits 0 when mathlib is correct."""
import sys
import mathlib

primes = [n for n in range(100) if mathlib.is_prime(n)]
ok = primes == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97]
ok = ok and mathlib.gcd(84, 36) == 12 and mathlib.gcd(-4, 6) == 2
print("OK" if ok else "FAIL")
sys.exit(0 if ok else 1)
P
printf '# mathlib\n' > README.md
git add . && commit "Initial mathlib"
for i in $(seq 1 40); do
    case $i in
        27) sed -i 's/    while i \* i <= n:/    while i * i < n:/' mathlib.py
            printf '\n\ndef lcm(a, b):\n    return abs(a * b) // gcd(a, b)\n' >> mathlib.py
            git add . && commit "Add lcm helper" ;;
        *) if [ $((i % 3)) -eq 0 ]; then
               printf '\n\ndef double_%s(x):\n    return 2 * x\n' $i >> mathlib.py
           else
               printf -- '- note %s\n' $i >> README.md
           fi
           git add . && commit "Maintenance update $i" ;;
    esac
done
