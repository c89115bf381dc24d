import json
import math
from pathlib import Path

EXPECTED = [{'id': 'bk112', 'title': 'Night', 'authors': ['S. Haddad', 'K. Tanaka', "P. O'Neill"], 'price': 59.8, 'currency': 'EUR', 'year': 1965, 'tags': []}, {'id': 'bk133', 'title': 'Quiet Stone Harbor', 'authors': ['S. Haddad', 'A. Rossi'], 'price': 27.98, 'currency': 'EUR', 'year': 2011, 'tags': []}, {'id': 'bk144', 'title': 'River Night Harbor', 'authors': ['J. Lindqvist', 'S. Haddad'], 'price': None, 'currency': None, 'year': 2013, 'tags': ['travel', 'tech']}, {'id': 'bk162', 'title': 'Signal', 'authors': ['L. Chen & Co'], 'price': 47.26, 'currency': 'EUR', 'year': 2023, 'tags': ['history', 'fiction']}, {'id': 'bk215', 'title': 'Atlas', 'authors': ['J. Lindqvist'], 'price': 48.78, 'currency': 'USD', 'year': 1953, 'tags': []}, {'id': 'bk242', 'title': 'Stone Harbor Signal', 'authors': ['L. Chen & Co'], 'price': 12.59, 'currency': 'USD', 'year': 1953, 'tags': ['poetry']}, {'id': 'bk244', 'title': 'Night', 'authors': ['L. Chen & Co'], 'price': 43.25, 'currency': 'EUR', 'year': 2001, 'tags': ['tech']}, {'id': 'bk250', 'title': 'Stone', 'authors': ['L. Chen & Co', 'A. Rossi', 'S. Haddad'], 'price': 28.92, 'currency': 'USD', 'year': 1976, 'tags': ['fiction']}, {'id': 'bk337', 'title': 'Night', 'authors': ['S. Haddad', 'J. Lindqvist'], 'price': 35.72, 'currency': 'USD', 'year': 1979, 'tags': ['history', 'poetry']}, {'id': 'bk502', 'title': 'Paper Stone Atlas', 'authors': ['S. Haddad'], 'price': None, 'currency': None, 'year': 1972, 'tags': ['travel', 'tech']}, {'id': 'bk580', 'title': 'Atlas', 'authors': ['A. Rossi', "P. O'Neill"], 'price': None, 'currency': None, 'year': 2003, 'tags': ['travel', 'fiction']}, {'id': 'bk648', 'title': 'Night Silent', 'authors': ['K. Tanaka'], 'price': 29.52, 'currency': 'EUR', 'year': 1966, 'tags': []}, {'id': 'bk778', 'title': 'Silent', 'authors': ['K. Tanaka', 'A. Rossi'], 'price': 21.53, 'currency': 'EUR', 'year': 2024, 'tags': ['poetry']}, {'id': 'bk800', 'title': 'Stone', 'authors': ['L. Chen & Co'], 'price': 27.16, 'currency': 'EUR', 'year': 2021, 'tags': ['fiction', 'tech']}, {'id': 'bk828', 'title': 'Stone Atlas Code', 'authors': ['M. Okafor', "P. O'Neill"], 'price': 45.97, 'currency': 'USD', 'year': 1998, 'tags': ['history', 'fiction']}, {'id': 'bk858', 'title': 'Quiet Night', 'authors': ['J. Lindqvist'], 'price': 21.34, 'currency': 'USD', 'year': 1964, 'tags': []}, {'id': 'bk875', 'title': 'Paper Night Code', 'authors': ['K. Tanaka'], 'price': None, 'currency': None, 'year': 2019, 'tags': ['history', 'tech']}, {'id': 'bk882', 'title': 'Fish & Chips <A Memoir>', 'authors': ['A. Rossi', 'J. Lindqvist', 'L. Chen & Co'], 'price': 17.06, 'currency': 'EUR', 'year': 1983, 'tags': ['tech']}]


def load():
    data = json.loads(Path("/app/books.json").read_text())
    assert isinstance(data, list)
    return data


def test_ids_titles_authors():
    got = load()
    assert [b["id"] for b in got] == [b["id"] for b in EXPECTED]
    for g, e in zip(got, EXPECTED):
        assert g["title"] == e["title"]
        assert g["authors"] == e["authors"]


def test_prices_and_currency():
    got = load()
    assert len(got) == len(EXPECTED)
    for g, e in zip(got, EXPECTED):
        if e["price"] is None:
            assert g["price"] is None and g["currency"] is None, g
        else:
            assert isinstance(g["price"], (int, float)) and not isinstance(g["price"], bool), g
            assert math.isclose(g["price"], e["price"], abs_tol=1e-9) and g["currency"] == e["currency"], g


def test_year_and_tags():
    got = load()
    assert len(got) == len(EXPECTED)
    for g, e in zip(got, EXPECTED):
        assert g["year"] == e["year"] and isinstance(g["year"], int), g
        assert g["tags"] == e["tags"], g
