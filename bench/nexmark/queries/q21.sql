-- q21 add channel id: a channel's id from its name, or from the channel_id parameter of the URL.
CREATE TABLE nexmark_q21 (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, channel_id VARCHAR)
WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q21
SELECT auction, bidder, price, channel,
       CASE
         WHEN lower(channel) = 'apple' THEN '0'
         WHEN lower(channel) = 'google' THEN '1'
         WHEN lower(channel) = 'facebook' THEN '2'
         WHEN lower(channel) = 'baidu' THEN '3'
         ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)
       END AS channel_id
FROM bid
WHERE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) IS NOT NULL
   OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu');
