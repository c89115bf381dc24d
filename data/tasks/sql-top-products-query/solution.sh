#!/bin/bash
set -e
cat > /app/top_products.sql <<'SQL'
WITH rev AS (
  SELECT p.id, p.category, p.name, SUM(s.qty * s.unit_price_cents) AS revenue_cents
  FROM sales s JOIN products p ON p.id = s.product_id
  WHERE s.refunded = 0 AND s.sold_on BETWEEN '2024-01-01' AND '2024-06-30'
  GROUP BY p.id
), ranked AS (
  SELECT category, name, revenue_cents,
         ROW_NUMBER() OVER (PARTITION BY category ORDER BY revenue_cents DESC, id) AS rank
  FROM rev
)
SELECT category, name, revenue_cents, rank FROM ranked WHERE rank <= 2 ORDER BY category, rank;
SQL
