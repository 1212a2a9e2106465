#pragma once
/// `sluice kafka-mock`: a developer tool that runs librdkafka's in-process mock Kafka cluster
/// (connectors/kafka/mock_cluster.h), so the Kafka examples and kcat work without a broker.
///
/// It starts the brokers, prints `bootstrap.servers=<host:port,...>`, creates the `--topic`s, loads each
/// `--load TOPIC=FILE` (one message per line, in file order), prints `ready`, then serves until SIGINT or
/// SIGTERM (Ctrl-C), or exits at once with `--exit-after-load`. Every stdout line is flushed as written, so
/// a script can wait on them. The brokers listen on 127.0.0.1 ports chosen by the OS (librdkafka 2.0's mock
/// takes no fixed port).
///
/// Keys: `--key-column N` takes the Nth field (1-based) of a CSV line (RFC 4180 quotes), `--key-field NAME`
/// the field NAME of a JSON line (a string unescaped, another value as its JSON text; missing or null: no
/// key), `--key-delimiter D` splits each line at the first D into key and value (as `kcat -K D`). Each
/// applies to every `--load` unless written `TOPIC=VALUE` with TOPIC a `--load` topic: then it applies to
/// the loads of that topic only, which then ignore the options without a topic (one key option per topic,
/// and one without a topic at most). `--null-empty` (every load) turns an empty value into a null one, an
/// upsert-kafka tombstone (as `kcat -Z`). Blank lines are skipped. A keyed message goes to the partition librdkafka's
/// partitioner picks from the key's hash; messages without a key go round-robin over the partitions. A bad line (too
/// few CSV fields, malformed JSON, no delimiter) is an error naming file:line, and nothing of that file is produced.
/// The mock keeps about 5 MB per partition and drops older messages: after loading, the tool counts each topic's
/// messages and fails (naming the topic) when some were dropped.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sluice::cli {

/// The options of `sluice kafka-mock`.
struct KafkaMockOptions {
  int brokers = 1;                  ///< --brokers
  std::vector<std::string> topics;  ///< --topic NAME[:PARTITIONS]
  int partitions = 1;               ///< --partitions: for topics first named by --load
  std::vector<std::string> loads;   ///< --load TOPIC=FILE
  std::vector<std::string> key_columns;     ///< --key-column [TOPIC=]N (1-based)
  std::vector<std::string> key_fields;      ///< --key-field [TOPIC=]NAME
  std::vector<std::string> key_delimiters;  ///< --key-delimiter [TOPIC=]D
  bool null_empty = false;          ///< --null-empty
  bool exit_after_load = false;     ///< --exit-after-load
};

/// Adds the `kafka-mock` subcommand to `app`, storing its options in `options` (which must outlive
/// parsing). Returns the subcommand.
CLI::App* addKafkaMockCommand(CLI::App& app, KafkaMockOptions& options);

/// Runs the tool; returns the exit code. Throws UserError on bad options or input (naming the option, file
/// and line), InternalError when the mock cluster fails. Called on the main thread before any other thread
/// starts: it blocks SIGINT and SIGTERM in every thread and waits for them.
int runKafkaMock(const KafkaMockOptions& options);

}  // namespace sluice::cli
