// SPDX-License-Identifier: BSD-3-Clause
// Streaming OTF2 reader: global definitions up front, then each location's events in order through a
// visitor, a bounded batch at a time, so that traces of 10^8 events are never held in memory.
#pragma once

#include "p3s/analyzer/definitions.hpp"
#include "p3s/analyzer/event.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>

namespace p3s::analyzer {

namespace detail {
struct ReaderImpl;
struct StreamState;
}  // namespace detail

/// Receives events. Exceptions thrown by a visitor stop the read and propagate to the caller.
class EventVisitor {
 public:
  virtual ~EventVisitor() = default;
  /// Called for every event of `location`, in the order the location recorded them.
  virtual void on_event(const Location& location, const Event& event) = 0;
  /// Called by TraceReader::read_all before the first and after the last event of each location.
  virtual void on_location_begin(const Location& /*location*/) {}
  virtual void on_location_end(const Location& /*location*/, std::uint64_t /*records*/) {}
};

/// Resolves what the user passed to an anchor file: `DIR` (-> DIR/traces.otf2, or the only *.otf2 in it) or
/// the anchor itself. Returns an absolute, normalised path.
/// @throws InputError when the path does not exist, holds no archive, or is not an OTF2 anchor file.
[[nodiscard]] std::filesystem::path find_anchor(const std::filesystem::path& path);

class TraceReader;

/// The events of one location, read in bounded batches. Several streams of one reader may be open at once
/// (a merging consumer advances them independently). Holds at most one OTF2 chunk and a small buffer.
class LocationStream {
 public:
  LocationStream(LocationStream&&) noexcept;
  LocationStream& operator=(LocationStream&&) noexcept;
  LocationStream(const LocationStream&) = delete;
  LocationStream& operator=(const LocationStream&) = delete;
  ~LocationStream();

  /// Reads up to `max_records` OTF2 records and hands the events among them to `visitor`. Returns the number
  /// of records consumed; 0 once the location is exhausted.
  /// @throws TraceError when the archive is truncated or corrupt; whatever `visitor` throws.
  std::uint64_t read(EventVisitor& visitor, std::uint64_t max_records = kDefaultBatch);

  /// Pull interface: the next event, or false at the end. Do not mix with read() on one stream.
  /// @throws TraceError when the archive is truncated or corrupt.
  bool next(Event& event);

  /// True once every record of the location was read.
  [[nodiscard]] bool at_end() const noexcept;
  /// OTF2 records consumed so far (events delivered plus metric and skipped records).
  [[nodiscard]] std::uint64_t records() const noexcept;
  [[nodiscard]] const Location& location() const noexcept;

  /// Records read per batch by default.
  static constexpr std::uint64_t kDefaultBatch = 65536;

 private:
  friend class TraceReader;
  explicit LocationStream(std::unique_ptr<detail::StreamState> state);
  std::unique_ptr<detail::StreamState> state_;
};

/// An open OTF2 archive. Reads and resolves the global and local definitions on construction; events are read
/// on demand per location. A reader and its streams are used from one thread at a time.
class TraceReader {
 public:
  /// Opens `path` (a trace directory or an anchor file).
  /// @throws InputError for a path that is not an archive, or an archive without any MPI definitions;
  ///         TraceError for a truncated or corrupt one.
  explicit TraceReader(const std::filesystem::path& path);
  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;
  ~TraceReader();

  [[nodiscard]] const TraceDefinitions& definitions() const noexcept;

  /// Opens the event stream of location `location_id`. The reader must outlive the stream.
  /// @throws InputError for an unknown location; TraceError when OTF2 cannot open its events.
  [[nodiscard]] LocationStream open(std::uint64_t location_id);

  /// Reads every location, one after the other (in definitions().locations order), into `visitor`.
  /// Checks that each location holds as many records as its definition announces.
  /// @throws TraceError for truncated or corrupt event data; whatever `visitor` throws.
  void read_all(EventVisitor& visitor);

 private:
  std::unique_ptr<detail::ReaderImpl> impl_;
};

}  // namespace p3s::analyzer
