import csv
from pathlib import Path

EXPECTED = {'P001': (7.36, 225.302, 45.0604), 'P002': (0.7370876012500001, 82.16, 16.432), 'P003': (12.110916279, 25.543336009999997, 12.110916279), 'P004': (4.087, 11.4, 4.087), 'P005': (7.03, 60.48, 12.096), 'P006': (4.34, 126.15155156736, 25.230310313472), 'P007': (26.53, 48.279830149824, 26.53), 'P008': (1.8597287169999999, 85.89241905352799, 17.178483810705597), 'P009': (1.057, 327.81895468336006, 65.563790936672), 'P010': (1.4458256793750002, 40.78330553000001, 8.156661106000001), 'P011': (1.409, 14.628895903440002, 2.9257791806880005), 'P012': (3.265865064, 2.8, 3.265865064), 'P013': (12.24699399, 74.037, 14.8074), 'P014': (3.136, 129.168, 25.8336), 'P015': (4.783, 91.656, 18.3312), 'P016': (4.281, 196.098, 39.2196), 'P017': (1.088621688, 16.101224442648004, 3.2202448885296007), 'P018': (6.406992226250001, 77.625, 15.525), 'P019': (1.0205828325000001, 26.138809141632006, 5.227761828326401), 'P020': (1.269, 208.07638384639998, 41.615276769279994), 'P021': (2.996, 30.81, 6.162), 'P022': (5.1709530180000005, 21.8144595968, 5.1709530180000005), 'P023': (9.071847400000001, 2.3007437856, 9.071847400000001), 'P024': (24.84, 40.9156310718, 24.84), 'P025': (9.18, 107.352, 21.4704), 'P026': (2.993709642, 81.94349714493603, 16.388699428987206), 'P027': (16.556121505, 103.04775777504003, 20.609551555008004), 'P028': (0.7937866475, 25.795, 5.159), 'P029': (16.057169898, 71.35255406879999, 16.057169898), 'P030': (14.02, 278.208, 55.6416)}  # parcel_id -> (weight_kg, volume_l, billable_kg)


def load():
    rows = list(csv.DictReader(Path("/app/parcels_metric.csv").read_text().splitlines()))
    assert rows and list(rows[0].keys()) == ["parcel_id", "weight_kg", "volume_l", "billable_kg"]
    return rows


def close(got, want, tol):
    return abs(float(got) - want) <= tol


def test_weights_kg():
    rows = load()
    assert [r["parcel_id"] for r in rows] == list(EXPECTED)
    for r in rows:
        assert close(r["weight_kg"], EXPECTED[r["parcel_id"]][0], 0.0011), (r, EXPECTED[r["parcel_id"]])


def test_volume_litres():
    rows = load()
    assert [r["parcel_id"] for r in rows] == list(EXPECTED)
    for r in rows:
        assert close(r["volume_l"], EXPECTED[r["parcel_id"]][1], 0.011), (r, EXPECTED[r["parcel_id"]])


def test_billable_weight():
    rows = load()
    assert [r["parcel_id"] for r in rows] == list(EXPECTED)
    for r in rows:
        assert close(r["billable_kg"], EXPECTED[r["parcel_id"]][2], 0.0011), (r, EXPECTED[r["parcel_id"]])
