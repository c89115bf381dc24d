import csv
import io
import math
import subprocess

G = 9.80665


def run(src, dst):
    r = subprocess.run(["python3", "/app/energy.py", str(src), str(dst)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-1500:]
    rows = list(csv.reader(io.StringIO(dst.read_text())))
    return rows, r.stderr


def row(i, m, v, h):
    ke, pe = m * v * v / 2, m * G * h
    return [i, f"{ke:.3f}", f"{pe:.3f}", f"{ke + pe:.3f}", f"{math.sqrt(v * v + 2 * G * h):.3f}"]


def test_example_values(tmp_path):
    rows, _ = run("/app/throws.csv", tmp_path / "o.csv")
    assert rows == [["id", "kinetic_j", "potential_j", "total_j", "impact_speed_m_s"],
                    row("ball", 0.45, 20.0, 2.0), row("brick", 2.5, 3.0, 3.048),
                    row("puck", 0.375 * 0.45359237, 60 * 0.44704, 1.5)]
    assert rows[1] == ["ball", "90.000", "8.826", "98.826", "20.958"]


def test_hidden_units_and_errors(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("id,mass,speed,height\n"
                   "a,1 kg,1 m/s,0 m\n"
                   "b,2000 g,36 km/h,1000 cm\n"
                   "c,10 lb,88 ft/s,33 ft\n"
                   "d,5 kg,10 knots,1 m\n"
                   "e,5 m,10 m/s,1 m\n"
                   "f,0.07 kg,120 mph,0.5 m\n"
                   "g,3 kg,2 m/s,4 kg\n")
    rows, err = run(src, tmp_path / "o.csv")
    assert rows[1:] == [row("a", 1, 1, 0), row("b", 2, 10, 10), row("c", 4.5359237, 88 * 0.3048, 33 * 0.3048),
                        row("f", 0.07, 120 * 0.44704, 0.5)]
    assert rows[2] == ["b", "100.000", "196.133", "296.133", "17.209"]
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    assert lines == ["line 5: bad unit knots", "line 6: bad unit m", "line 8: bad unit kg"]
