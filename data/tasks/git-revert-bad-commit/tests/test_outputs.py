import subprocess

REPO = "/app/shop"
ORIGINAL_HEAD = "4c177f7bcd1b9d491ffdf5f46320314e6958e70e"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)


def py(expr):
    out = subprocess.run(["python3", "-c", f"import pricing, shipping; print({expr})"], cwd=REPO,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_prices_fixed():
    check_later_changes_kept()
    assert py("pricing.total(100, member=True)") == "108.0"
    assert py("pricing.total(50)") == "60.0"
    # the fix must be committed, not only in the working tree
    committed = git("show", "HEAD:pricing.py").stdout
    assert "DISCOUNT_RATE = 0.10" in committed and "TAX_RATE = 0.20" in committed


def test_history_not_rewritten():
    check_later_changes_kept()
    assert git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip() == "main"
    assert git("merge-base", "--is-ancestor", ORIGINAL_HEAD, "HEAD").returncode == 0
    assert git("rev-parse", "HEAD").stdout.strip() != ORIGINAL_HEAD


def check_later_changes_kept():
    # a guard, not a scored test: every scored test calls it, so an empty or destructive attempt scores 0
    assert py("shipping.shipping(10)") == "9.99"
    assert "smoke-test" in git("show", "HEAD:README.md").stdout
