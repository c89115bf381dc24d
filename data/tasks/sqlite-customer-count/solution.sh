#!/bin/bash
set -e
python3 -c "
import sqlite3
db = sqlite3.connect('/app/shop.db')
print(db.execute(\"SELECT COUNT(DISTINCT c.id) FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = 'Germany' AND o.ordered_at LIKE '2023-%'\").fetchone()[0])
" > /app/answer.txt
