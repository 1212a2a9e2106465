SET 'parallelism.default' = '4';
RESET;
-- comment ; here
/* block ; */ EXPLAIN PLAN FOR SELECT -a * 1.5e3 || 'it''s', TIMESTAMP '2015-01-01 00:00:00', `q``x` FROM t;
