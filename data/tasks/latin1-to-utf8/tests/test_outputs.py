TEXTS = {
    "customers.txt": "id;name;city\n1;José Muñoz;Málaga\n2;Zoë Brontë;Genève\n3;Jürgen Groß;München\n4;François Læs;Besançon\n",
    "products.txt": "Crème brûlée £4.50\nCafé au lait ¥300\nJalapeño ½ price ©2019\nSmørbrød «special»\n",
    "readme.txt": "Données exportées à partir de l'ancien système.\nNe pas modifier à la main ¡por favor!\n",
}


def test_converted_to_utf8():
    for name, text in TEXTS.items():
        with open("/app/legacy/" + name, "rb") as f:
            data = f.read()
        assert data.decode("utf-8") == text, name


def test_binary_untouched():
    with open("/app/legacy/logo.bin", "rb") as f:
        assert f.read() == bytes(range(256)) * 3
    with open("/app/legacy/readme.txt", "rb") as f:
        assert f.read().decode("utf-8") == TEXTS["readme.txt"]
