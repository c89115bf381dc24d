import subprocess

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def build():
    r = subprocess.run(["make", "-C", "/app"], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]


def perft(fen, depth):
    r = subprocess.run(["/app/perft", fen, str(depth)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1000:]
    return int(r.stdout.strip())


def test_build_and_start_position():
    build()
    assert [perft(START, d) for d in range(5)] == [1, 20, 400, 8902, 197281]
    assert perft("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", 3) == 13160
    assert perft("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", 3) == 45695
    assert perft("2kr3r/p1p2ppp/2n1b3/2bqp3/8/2P2N2/PP1NBPPP/R2Q1RK1 b - - 3 13", 3) == 70969
    r = subprocess.run(["/app/perft", START], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and r.stderr.strip()


def test_castling():
    build()
    kiwi = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -"
    assert [perft(kiwi, d) for d in (1, 2, 3)] == [48, 2039, 97862]
    assert perft(kiwi, 4) == 4085603
    assert perft("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", 4) == 314346
    assert perft("r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1", 4) == 1274206
    assert perft("r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1", 1) == 24


def test_en_passant_and_pins():
    build()
    p3 = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
    assert [perft(p3, d) for d in (1, 2, 3, 4, 5)] == [14, 191, 2812, 43238, 674624]
    assert perft("8/8/8/KPp4r/8/8/8/7k w - c6 0 1", 1) == 4
    assert perft("8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1", 4) == 13931
    assert perft("4k3/8/8/2KpP2r/8/8/8/8 w - d6 0 1", 3) == 853
    assert perft("8/3k4/8/2pP4/8/8/4K3/8 w - c6 0 2", 4) == 3541


def test_promotions():
    build()
    p4 = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"
    assert [perft(p4, d) for d in (1, 2, 3, 4)] == [6, 264, 9467, 422333]
    assert perft("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 4) == 422333
    assert perft("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 4) == 2103487
    assert perft("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 3) == 89890
    assert perft("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", 4) == 182838
    assert perft("8/P1k5/K7/8/8/8/8/8 w - - 0 1", 4) == 1329
    assert perft("r3k3/1P6/8/8/8/8/6p1/R3K2R b KQq - 0 1", 4) == 227984
