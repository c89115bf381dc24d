import os

L = "/app/library"


def body(n):
    return "content of " + n + "\n"


def check(rel, orig):
    p = os.path.join(L, rel)
    assert os.path.isfile(p), rel
    assert open(p).read() == body(orig), rel


def test_simple_files_moved():
    check("2023/04/2023-04-15_101500.mp4", "VID_20230415_101500.MP4")
    check("2022/12/2022-12-31_235959.jpg", "PXL_20221231_235959123.jpg")
    check("2024/02/2024-02-29_140509.png", "Screenshot 2024-02-29 at 14.05.09.PNG")
    check("2021/01/2021-01-01_000001.heic", "IMG_20210101_000001.heic")
    check("2019/07/2019-07-04_120000.jpeg", "IMG_20190704_120000.jpeg")


def test_collisions_suffixed():
    # byte-wise order: IMG_..._093012.JPG < IMG_..._093012.jpg < PXL_...
    check("2023/04/2023-04-15_093012.jpg", "IMG_20230415_093012.JPG")
    check("2023/04/2023-04-15_093012_1.jpg", "IMG_20230415_093012.jpg")
    check("2023/04/2023-04-15_093012_2.jpg", "PXL_20230415_093012450.jpg")
    all_files = sorted(os.path.relpath(os.path.join(d, f), L) for d, _, fs in os.walk(L) for f in fs)
    assert len(all_files) == 8, all_files


def test_unmatched_stay():
    left = sorted(os.listdir("/app/inbox"))
    expected = sorted(["holiday.jpg", "IMG_2023_0415.jpg", "VID_20230415_1015.mp4", "Screenshot 2024-02-29 at 14.05.png",
                       "notes.txt"])
    assert left == expected
    for n in expected:
        assert open("/app/inbox/" + n).read() == body(n)
