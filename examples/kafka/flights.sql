-- The main job (examples/flights.sql) reading the flights from a Kafka topic instead of the CSV file:
-- topic `flights` of 3 partitions (one CSV line per message), read with 'scan.parallelism' = '3' while the
-- aggregations run at the default parallelism 2 (FLIP-367; `sluice explain -p 2` shows the vertices, their
-- parallelism and the exchange between them).
-- 'scan.bounded.mode' = 'latest-offset' makes the read bounded: the job ends at the end of the topic.
-- @BOOTSTRAP@ is replaced by the address `sluice kafka-mock` prints; examples/kafka/run.sh does it all.

CREATE TABLE flights (
  `YEAR`              INT,
  `MONTH`             INT,
  `DAY`               INT,
  DAY_OF_WEEK         INT,
  AIRLINE             STRING,
  FLIGHT_NUMBER       INT,
  TAIL_NUMBER         STRING,
  ORIGIN_AIRPORT      STRING,
  DESTINATION_AIRPORT STRING,
  SCHEDULED_DEPARTURE STRING,
  DEPARTURE_TIME      STRING,
  DEPARTURE_DELAY     INT,
  TAXI_OUT            INT,
  WHEELS_OFF          STRING,
  SCHEDULED_TIME      INT,
  ELAPSED_TIME        INT,
  AIR_TIME            INT,
  DISTANCE            INT,
  WHEELS_ON           STRING,
  TAXI_IN             INT,
  SCHEDULED_ARRIVAL   STRING,
  ARRIVAL_TIME        STRING,
  ARRIVAL_DELAY       INT,
  DIVERTED            INT,
  CANCELLED           INT,
  CANCELLATION_REASON STRING,
  AIR_SYSTEM_DELAY    INT,
  SECURITY_DELAY      INT,
  AIRLINE_DELAY       INT,
  LATE_AIRCRAFT_DELAY INT,
  WEATHER_DELAY       INT,
  -- event time: the date parts and the HHmm scheduled departure
  sched_dep AS TO_TIMESTAMP(
      CAST(`YEAR` AS STRING) || '-' || LPAD(CAST(`MONTH` AS STRING), 2, '0') || '-' ||
      LPAD(CAST(`DAY` AS STRING), 2, '0') || ' ' ||
      SUBSTRING(SCHEDULED_DEPARTURE FROM 1 FOR 2) || ':' ||
      SUBSTRING(SCHEDULED_DEPARTURE FROM 3 FOR 2) || ':00'),
  WATERMARK FOR sched_dep AS sched_dep - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'kafka',
  'topic' = 'flights',
  'properties.bootstrap.servers' = '@BOOTSTRAP@',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'scan.parallelism' = '3',
  'format' = 'csv',
  -- empty numeric fields (e.g. the delay of a cancelled flight) are read as NULL
  'csv.ignore-parse-errors' = 'true'
);

CREATE TABLE hourly_airline_stats (
  window_start  TIMESTAMP(3),
  window_end    TIMESTAMP(3),
  airline       STRING,
  flights       BIGINT,
  cancelled     INT,
  avg_dep_delay INT,
  max_dep_delay INT
) WITH (
  'connector' = 'print',
  'print-identifier' = 'hourly'
);

CREATE TABLE flights_per_destination (
  destination STRING,
  flights     BIGINT
) WITH (
  'connector' = 'print',
  'print-identifier' = 'per_destination'
);

INSERT INTO hourly_airline_stats
SELECT window_start, window_end, AIRLINE, COUNT(*), SUM(CANCELLED), AVG(DEPARTURE_DELAY), MAX(DEPARTURE_DELAY)
FROM TABLE(TUMBLE(TABLE flights, DESCRIPTOR(sched_dep), INTERVAL '1' HOUR))
GROUP BY window_start, window_end, AIRLINE;

INSERT INTO flights_per_destination
SELECT DESTINATION_AIRPORT, COUNT(*)
FROM flights
WHERE ORIGIN_AIRPORT = 'ANC'
GROUP BY DESTINATION_AIRPORT;
