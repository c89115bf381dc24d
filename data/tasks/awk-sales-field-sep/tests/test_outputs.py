import subprocess


def run(path):
    r = subprocess.run(["awk", "-f", "/app/region_totals.awk", path], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return sorted(line.split() for line in r.stdout.splitlines() if line.strip())


def test_hidden_sales_file(tmp_path):
    rows = ["date,region,product,amount",
            "2025-01-02,west,Big Red Box,10.25",
            "2025-01-02,west,Cup,0.75",
            "2025-01-03,central,Hand Held Fan,3.10",
            "2025-01-04,south-east,Cup,1000.00",
            "2025-01-05,central,Lamp,6.90",
            "2025-01-06,west,Desk Lamp Pro,89.00"]
    p = tmp_path / "s.csv"
    p.write_text("\n".join(rows) + "\n")
    assert run(str(p)) == [["central", "10.00"], ["south-east", "1000.00"], ["west", "100.00"]]
    assert run("/app/sales.csv") == [["east", "19.99"], ["north", "119.99"], ["south", "5.50"]]
