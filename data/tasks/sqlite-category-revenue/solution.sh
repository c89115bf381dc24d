#!/bin/bash
set -e
cd /app
WHERE="o.status = 'complete' AND o.placed_at >= '2024-01-01' AND o.placed_at < '2025-01-01'"
sqlite3 -header -csv shop.db "
SELECT p.category AS category, COUNT(DISTINCT o.id) AS orders,
       printf('%d.%02d', SUM(oi.quantity * oi.unit_price_cents) / 100, SUM(oi.quantity * oi.unit_price_cents) % 100) AS revenue
FROM orders o JOIN order_items oi ON oi.order_id = o.id JOIN products p ON p.id = oi.product_id
WHERE $WHERE GROUP BY p.category ORDER BY SUM(oi.quantity * oi.unit_price_cents) DESC;" > category_revenue.csv
sqlite3 -header -csv shop.db "
SELECT c.email AS email,
       printf('%d.%02d', SUM(oi.quantity * oi.unit_price_cents) / 100, SUM(oi.quantity * oi.unit_price_cents) % 100) AS revenue
FROM orders o JOIN order_items oi ON oi.order_id = o.id JOIN customers c ON c.id = o.customer_id
WHERE $WHERE GROUP BY c.id ORDER BY SUM(oi.quantity * oi.unit_price_cents) DESC LIMIT 3;" > top_customers.csv
