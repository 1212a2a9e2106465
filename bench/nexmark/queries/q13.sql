-- q13 bounded side input join: bids enriched from a static file by a processing-time lookup.
-- (The reference's legacy 'connector.type' / 'connector.path' / 'format.type' options in their current
-- names; run.py writes ${FLINK_HOME}/data/side_input.txt.)
CREATE TABLE side_input (key BIGINT, `value` VARCHAR) WITH (
  'connector' = 'filesystem',
  'path' = 'file://${FLINK_HOME}/data/side_input.txt',
  'format' = 'csv'
);

CREATE TABLE nexmark_q13 (auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), `value` VARCHAR)
WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q13
SELECT B.auction, B.bidder, B.price, B.`dateTime`, S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON mod(B.auction, 10000) = S.key;
