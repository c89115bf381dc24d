set -e
mkdir -p /app/legacy
python3 - <<'PY'
texts = {
    "customers.txt": "id;name;city\n1;José Muñoz;Málaga\n2;Zoë Brontë;Genève\n3;Jürgen Groß;München\n4;François Læs;Besançon\n",
    "products.txt": "Crème brûlée £4.50\nCafé au lait ¥300\nJalapeño ½ price ©2019\nSmørbrød «special»\n",
    "readme.txt": "Données exportées à partir de l'ancien système.\nNe pas modifier à la main ¡por favor!\n",
}
for n, t in texts.items():
    open("/app/legacy/" + n, "wb").write(t.encode("latin-1"))
open("/app/legacy/logo.bin", "wb").write(bytes(range(256)) * 3)
PY
