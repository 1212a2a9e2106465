-- Latest status per flight, from an upsert-kafka topic with updates and deletes.
-- Topic `flight_status` (examples/kafka/flight_status.tsv, keyed by flight_id): each flight out of Anchorage on
-- 1-4 January 2015 is first 'scheduled', then 'departed' (delay <= 15 min), 'delayed' or 'cancelled'; the flights
-- of 1 January are then deleted (tombstones: a key with a null value).
-- The job keeps the latest row per key (Flink's ChangelogNormalize after an upsert source) and
--  1) writes it to the upsert-kafka topic `latest_status` (an upsert per change, a tombstone per delete);
--  2) prints a running count of flights per status: its changelog retracts a flight from 'scheduled' when it
--     departs and from its last status when it is deleted.
-- @BOOTSTRAP@ is replaced by the address `sluice kafka-mock` prints; examples/kafka/run.sh does it all.

CREATE TABLE flight_status (
  flight_id   STRING,
  destination STRING,
  status      STRING,
  dep_delay   INT,
  PRIMARY KEY (flight_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'flight_status',
  'properties.bootstrap.servers' = '@BOOTSTRAP@',
  'scan.bounded.mode' = 'latest-offset',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE latest_status (
  flight_id   STRING,
  destination STRING,
  status      STRING,
  dep_delay   INT,
  PRIMARY KEY (flight_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'latest_status',
  'properties.bootstrap.servers' = '@BOOTSTRAP@',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE flights_per_status (
  status  STRING,
  flights BIGINT
) WITH (
  'connector' = 'print',
  'print-identifier' = 'per_status'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO latest_status SELECT flight_id, destination, status, dep_delay FROM flight_status;
INSERT INTO flights_per_status SELECT status, COUNT(*) FROM flight_status GROUP BY status;
END;
