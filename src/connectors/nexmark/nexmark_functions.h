#pragma once
/// The user-defined functions of the Nexmark benchmark's Flink queries, registered under the Java class
/// names its scripts give (`CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar'`, q14),
/// so those scripts run unmodified. Thread-safe; idempotent.

namespace sluice::connectors::nexmark {

/// Registers `com.github.nexmark.flink.udf.CountChar`: count_char(s STRING, c STRING) BIGINT NOT NULL,
/// the number of bytes of s equal to c's first byte (0 for a NULL s), as Nexmark's CountChar. An empty c
/// fails the job (Nexmark's would throw too).
void registerNexmarkFunctions();

}  // namespace sluice::connectors::nexmark
