CREATE TABLE t (k INT, r ROW<id BIGINT, name VARCHAR, inner_row ROW(a INT NOT NULL, `b c` STRING 'note')> NOT NULL,
  e ROW<>, ts AS r.id, WATERMARK FOR ts AS ts) WITH ('connector' = 'nexmark');
SELECT r.id, t.r.inner_row.a, CAST(k AS ROW<x INT>) FROM t;
