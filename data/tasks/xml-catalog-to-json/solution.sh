#!/bin/bash
set -e
python3 - <<'PY'
import json
import xml.etree.ElementTree as ET

ns = {"b": "urn:example:books"}
books = []
for el in ET.parse("/app/catalog.xml").getroot().findall("b:book", ns):
    price = el.find("b:price", ns)
    books.append({
        "id": el.get("id"),
        "title": el.findtext("b:title", namespaces=ns),
        "authors": [a.text for a in el.findall("b:author", ns)],
        "price": float(price.text) if price is not None else None,
        "currency": price.get("currency") if price is not None else None,
        "year": int(el.findtext("b:published", namespaces=ns)),
        "tags": [t.text for t in el.findall("b:tags/b:tag", ns)],
    })
books.sort(key=lambda b: b["id"])
json.dump(books, open("/app/books.json", "w"), indent=2)
PY
