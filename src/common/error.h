#pragma once
/// Errors of the whole engine (DuckDB/Velox style): a small typed hierarchy.
///  - UserError and subclasses: bad SQL, bad config, bad input data. They carry the place
///    (SQL line:column, file:line, option key) inside the message, which is shown as-is.
///  - TransientError: a failure outside the user's input that may go away (a peer, a connection);
///    restart strategies restart the job on it, never on a UserError.
///  - InternalError: a broken invariant inside the engine.
/// A task catches at its boundary and fails the job with the message intact.

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace sluice {

/// Base of every error the engine throws on purpose.
class SluiceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The user's fault: SQL, validation, configuration, input data, missing files.
class UserError : public SluiceError {
 public:
  using SluiceError::SluiceError;
};

/// A SQL syntax or validation error. `line`/`column` are 1-based; 0 when unknown.
class SqlError : public UserError {
 public:
  SqlError(const std::string& message, int line, int column)
      : UserError(message), line_(line), column_(column) {}
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

/// A configuration error (unknown key, ill-typed value). The message names the key.
class ConfigError : public UserError {
 public:
  using UserError::UserError;
};

/// Bad input data (e.g. a CSV row that does not parse). The message names file:line.
class InputError : public UserError {
 public:
  using UserError::UserError;
};

/// A peer or connection failed (a TaskManager's data connection, a broker); retrying may succeed.
/// The message names the peer.
class TransientError : public SluiceError {
 public:
  using SluiceError::SluiceError;
};

/// A broken engine invariant.
class InternalError : public SluiceError {
 public:
  using SluiceError::SluiceError;
};

}  // namespace sluice

/// Checks an engine invariant; throws InternalError with file:line and a formatted message.
#define SLUICE_CHECK(cond, ...)                                                              \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      throw ::sluice::InternalError(fmt::format("internal error at {}:{}: {} ({})", __FILE__, \
                                                __LINE__, fmt::format(__VA_ARGS__), #cond)); \
    }                                                                                        \
  } while (0)

/// Checks user input; throws UserError with the formatted message (which must name the place).
#define SLUICE_USER_CHECK(cond, ...)                          \
  do {                                                        \
    if (!(cond)) {                                            \
      throw ::sluice::UserError(fmt::format(__VA_ARGS__));    \
    }                                                         \
  } while (0)
