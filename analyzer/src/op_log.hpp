// SPDX-License-Identifier: BSD-3-Clause
// The analyzer's working representation of a run: per location, the sequence of MPI operations (one per MPI
// call) with the burst before each and the communication actions inside. Written once from the OTF2 archive
// into a compact temporary file, then read sequentially by the Lamport and signature passes, so no pass holds
// a whole trace in memory. The file stores times as deltas and every field as a variable-length integer (about a
// quarter of the in-memory size for typical calls; its I/O dominated the analysis of long traces), except the actions
// that are patched after they were written, which keep their fixed in-memory layout.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "p3s/mpi/vocabulary.hpp"

namespace p3s::analyzer {

inline constexpr std::uint32_t kNoSeq = 0xffffffffu;

/// One action. Peers and roots are MPI_COMM_WORLD ranks (kNoRank / kUnresolvedRank as in definitions.hpp).
struct Action {
  mpi::ActionKind kind = mpi::ActionKind::Send;
  mpi::Collective op = mpi::Collective::None;  ///< collectives: the operation
  std::uint16_t reserved = 0;
  std::uint32_t comm = 0xffffffffu;
  std::int32_t peer = -1;  ///< the other side of a message
  std::int32_t root = -1;  ///< world rank of a collective's root, -1 when none
  std::uint32_t tag = 0;
  /// Collectives of a process with several threads: the call's number among the process's collectives on
  /// its communicator (MPI orders collectives per process, not per thread); kNoSeq otherwise.
  std::uint32_t seq = 0xffffffffu;
  std::uint64_t bytes = 0;  ///< message length, or bytes sent by a collective
  std::uint64_t bytes_received = 0;
  std::uint64_t request = 0;
};
static_assert(sizeof(Action) == 48);

/// One MPI call of one location.
struct OpHeader {
  std::uint64_t enter_ns = 0;
  std::uint64_t leave_ns = 0;
  std::uint64_t burst_ns = 0;    ///< time since the previous call's leave (0 for the first call)
  std::uint64_t burst_work = 0;  ///< work metric over the same interval (burst_ns when no metric)
  std::uint64_t call_work = 0;   ///< work metric inside the call (0: not recorded; time where no metric is)
  std::uint32_t region = 0xffffffffu;
  std::uint32_t callsite = 0xffffffffu;  ///< string id of the call site, if recorded
  std::uint32_t actions = 0;
  /// The MPI calls the operation stands for: 1, or more where consecutive polls or completions of one exchange
  /// were taken as one (extract.hpp).
  std::uint32_t calls = 1;
};
static_assert(sizeof(OpHeader) == 56);

/// An operation with its actions (the reader reuses the vector).
struct Op {
  OpHeader header;
  std::vector<Action> actions;
  [[nodiscard]] std::uint64_t call_ns() const noexcept { return header.leave_ns - header.enter_ns; }
};

/// Appends operations to a temporary file. Memory: one buffer (grown only for an operation larger than it).
class OpWriter {
 public:
  /// `patchable_collectives`: collective actions will get their sequence number patched in later (processes
  /// with several threads), so they are stored in fixed layout too.
  explicit OpWriter(std::filesystem::path path, bool patchable_collectives = false);
  ~OpWriter();
  OpWriter(const OpWriter&) = delete;
  OpWriter& operator=(const OpWriter&) = delete;

  /// Appends an operation. The actions' `reserved` fields are not stored.
  void append(const OpHeader& header, const Action* actions, std::uint32_t count);
  /// The file offsets of the patchable actions of the last append (non-blocking collective requests, and
  /// collectives when `patchable_collectives`), in action order; kNotPatchable for the others.
  [[nodiscard]] const std::vector<std::uint64_t>& action_offsets() const noexcept { return offsets_; }
  static constexpr std::uint64_t kNotPatchable = ~std::uint64_t{0};
  /// Overwrites the patchable action at `offset` (a non-blocking collective's request learns its communicator
  /// only at completion). Works whether the action is still buffered or already on disk.
  void patch_action(std::uint64_t offset, const Action& action);
  /// Writes everything out and closes the file.
  void finish();
  [[nodiscard]] std::uint64_t operations() const noexcept { return ops_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return flushed_ + used_; }

 private:
  void flush();
  void reserve(std::size_t bytes);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  bool patchable_collectives_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
  std::uint64_t flushed_ = 0;  ///< bytes already in the file
  std::uint64_t ops_ = 0;
  std::uint64_t prev_leave_ = 0;  ///< times are stored relative to the previous operation
  std::vector<std::uint64_t> offsets_;
};

/// Reads an operation file sequentially.
class OpReader {
 public:
  explicit OpReader(const std::filesystem::path& path);
  ~OpReader();
  OpReader(const OpReader&) = delete;
  OpReader& operator=(const OpReader&) = delete;
  /// The next operation, or false at the end.
  bool next(Op& op);

 private:
  /// Makes at least `bytes` bytes available at begin_ unless the file ends first; returns how many are.
  std::size_t fill(std::size_t bytes);
  [[noreturn]] void corrupt() const;
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<std::byte[]> buffer_;  ///< not zero-filled: every pass opens a reader per location
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t prev_leave_ = 0;
};

/// A scratch directory removed with everything in it when the object goes away.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace p3s::analyzer
