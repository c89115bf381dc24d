set -e
mkdir -p /app/photos && cd /app/photos
python3 - <<'PY'
import hashlib
names = ["IMG_0001.JPG", "IMG_0002.jpeg", "IMG_0003.Jpeg", "beach day.JPEG", "IMG_0005.jpg", "sunset.JpG",
         "notes.txt", "IMG_0006.PNG", "clip.MOV", "jpeg_readme.md", "scan.jpeg.bak"]
for n in names:
    open(n, "wb").write(hashlib.sha256(n.encode()).digest() * 40)
PY
