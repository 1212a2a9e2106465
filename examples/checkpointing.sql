-- Fault tolerance walk-through (README "Fault tolerance"): ids 1..20000 at 2000 rows per second, every
-- third one written to a filesystem sink, which is exactly-once with checkpoints. Kill the job while it
-- runs, restore it from its latest checkpoint, and the output still holds 6666 rows, each id once.
SET 'execution.checkpointing.interval' = '1 s';
SET 'execution.checkpointing.dir' = '/tmp/sluice-checkpoints';

CREATE TABLE ids (id BIGINT) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '2000',
  'number-of-rows' = '20000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000'
);

CREATE TABLE every_third (id BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/sluice-every-third',
  'format' = 'csv'
);

INSERT INTO every_third SELECT id FROM ids WHERE id % 3 = 0;
