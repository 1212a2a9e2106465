-- q11 user sessions: bids per bidder in sessions closed by 10 s without a bid.
CREATE TABLE nexmark_q11 (bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3))
WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q11
SELECT B.bidder, count(*) AS bid_count,
       SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) AS starttime,
       SESSION_END(B.`dateTime`, INTERVAL '10' SECOND) AS endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND);
