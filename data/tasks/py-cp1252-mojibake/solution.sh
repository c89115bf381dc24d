#!/bin/bash
set -e
sed -i 's/encoding="utf-8", errors="replace", newline=""/encoding="cp1252", newline=""/; s/with open(dst, "w") as f:/with open(dst, "w", encoding="utf-8") as f:/; s/json.dump(out, f, indent=1)/json.dump(out, f, indent=1, ensure_ascii=False)/' /app/to_json.py
python3 /app/to_json.py /app/customers.csv /app/customers.json
