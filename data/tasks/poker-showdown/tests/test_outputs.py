import subprocess


def show(tmp_path, hands):
    p = tmp_path / "t.txt"
    p.write_text("".join(f"{n}: {h}\n" for n, h in hands))
    r = subprocess.run(["python3", "/app/showdown.py", str(p)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr[-1500:]
    return r.stdout.splitlines()


def test_categories(tmp_path):
    r = subprocess.run(["python3", "/app/showdown.py", "/app/table.txt"], capture_output=True, text=True, timeout=30)
    assert r.stdout.splitlines() == ["1. straight flush: alice", "2. full house: bob", "3. straight: carol",
                                     "4. two pair: dave"]
    hands = [("hc", "2d 5h 9s Jh Kh"), ("op", "3c 3d 9d Js Ks"), ("tp", "4s 4d 8s 8d As"), ("tk", "6s 6d 6c 2s 3h"),
             ("st", "9h Ts Jc Qh Kc"), ("fl", "2c 4c 8c 9c Ac"), ("fh", "5s 5c 5d Th Tc"), ("fk", "7h 7c 7s 7d 2h"),
             ("sf", "Td Jd Qd Kd Ad")]
    assert show(tmp_path, hands[::-1][3:] + hands[::-1][:3]) == [
        "1. straight flush: sf", "2. four of a kind: fk", "3. full house: fh", "4. flush: fl", "5. straight: st",
        "6. three of a kind: tk", "7. two pair: tp", "8. one pair: op", "9. high card: hc"]
    assert show(tmp_path, [("wheel", "Ad 2c 3h 4c 5d"), ("wrap", "Qd Kc Ah 2h 3d"), ("steel", "As 2s 3s 4s 5s")]) == [
        "1. straight flush: steel", "2. straight: wheel", "3. high card: wrap"]


def test_tie_breaks(tmp_path):
    assert show(tmp_path, [("a", "Ah 2c 3d 4s 5h"), ("b", "2d 3c 4h 5c 6d")]) == ["1. straight: b", "2. straight: a"]
    assert show(tmp_path, [("a", "Kh Kc 3d 3s 9h"), ("b", "Kd Ks 4h 4c 2d")]) == ["1. two pair: b", "2. two pair: a"]
    assert show(tmp_path, [("a", "Qh Qc 8d 7s 2h"), ("b", "Qd Qs 8h 6c 5d")]) == ["1. one pair: a", "2. one pair: b"]
    assert show(tmp_path, [("a", "3h 3c 3d Ks Kh"), ("b", "2d 2s 2h As Ad")]) == ["1. full house: a", "2. full house: b"]
    assert show(tmp_path, [("a", "2h 2c 2d 2s 4h"), ("b", "3d 3s 3c 3h 5s")]) == ["1. four of a kind: b",
                                                                                 "2. four of a kind: a"]
    assert show(tmp_path, [("a", "Ah Kh 4h 3h 2h"), ("b", "Ac Qc Jc Tc 8c")]) == ["1. flush: a", "2. flush: b"]
    assert show(tmp_path, [("a", "9h 9c Ad Ks 2h"), ("b", "9d 9s Ah Kc 3d")]) == ["1. one pair: b", "2. one pair: a"]
    assert show(tmp_path, [("a", "7h 7c 7d As 2h"), ("b", "7s 8s 8h 8c 2d")]) == ["1. three of a kind: b",
                                                                                 "2. three of a kind: a"]
    assert show(tmp_path, [("x", "Ah Qc 9d 5s 3h"), ("y", "As Qd 9c 5h 2h")]) == ["1. high card: x", "2. high card: y"]


def test_ties_and_places(tmp_path):
    hands = [("zoe", "Ah Kd 8c 4s 2h"), ("amy", "As Kc 8d 4h 2c"), ("ned", "Qc Qd 7h 7s 9c"),
             ("bob", "Qh Qs 7c 7d 9h"), ("cat", "2d 3c 4c 5c 6c"), ("dan", "Jc Jd 3s 4d 8s")]
    assert show(tmp_path, hands) == [
        "1. straight: cat", "2. two pair: bob, ned", "4. one pair: dan", "5. high card: amy, zoe"]
    hands = [("b", "9c 9d 9h 4s 4d"), ("a", "9s Tc Th 4c 4h"), ("c", "Qs Qh Qd 2c 2d")]
    assert show(tmp_path, hands) == ["1. full house: c", "2. full house: b", "3. two pair: a"]
