import json
from pathlib import Path

EXPECTED = {'added': ['SKU-10379', 'SKU-10471', 'SKU-10781', 'SKU-10936'], 'removed': ['SKU-1276', 'SKU-1612', 'SKU-6189', 'SKU-7842', 'SKU-8510'], 'changed': {'SKU-1087': {'price': ['10.80', '12.05']}, 'SKU-2713': {'supplier': ['Nordic, AB', 'Acme']}, 'SKU-5590': {'supplier': ['Bolt & Co', 'Nordic, AB']}, 'SKU-6525': {'supplier': ['Acme', 'Nordic, AB']}, 'SKU-7298': {'supplier': ['Bolt & Co', 'Nordic, AB']}, 'SKU-8209': {'name': ['gear 3mm', 'gear 3mm (v2)']}, 'SKU-8472': {'name': ['axle 10mm', 'axle 10mm (v2)']}, 'SKU-8974': {'supplier': ['Acme', 'Nordic, AB']}, 'SKU-9399': {'supplier': ['Nordic, AB', 'Acme']}}}


def load():
    return json.loads(Path("/app/diff.json").read_text())


def test_added_removed():
    got = load()
    assert got["added"] == EXPECTED["added"]
    assert got["removed"] == EXPECTED["removed"]


def test_changed_fields():
    got = load()["changed"]
    assert sorted(got) == sorted(EXPECTED["changed"])
    for sku, fields in EXPECTED["changed"].items():
        assert sorted(got[sku]) == sorted(fields), sku
        for f, (old, new) in fields.items():
            g_old, g_new = got[sku][f]
            if f == "price":
                assert abs(float(g_old) - float(old)) < 1e-9 and abs(float(g_new) - float(new)) < 1e-9, (sku, f)
            else:
                assert [str(g_old).strip(), str(g_new).strip()] == [old, new], (sku, f)
