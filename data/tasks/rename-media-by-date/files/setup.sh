set -e
mkdir -p /app/inbox
python3 - <<'PY'
names = ["IMG_20230415_093012.jpg", "VID_20230415_101500.MP4", "PXL_20221231_235959123.jpg",
         "Screenshot 2024-02-29 at 14.05.09.PNG", "IMG_20230415_093012.JPG", "PXL_20230415_093012450.jpg",
         "IMG_20210101_000001.heic", "holiday.jpg", "IMG_2023_0415.jpg", "VID_20230415_1015.mp4",
         "Screenshot 2024-02-29 at 14.05.png", "notes.txt", "IMG_20190704_120000.jpeg"]
for n in names:
    open("/app/inbox/" + n, "w").write("content of " + n + "\n")
PY
