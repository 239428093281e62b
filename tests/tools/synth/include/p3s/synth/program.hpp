// SPDX-License-Identifier: BSD-3-Clause
// The PROGRAM.json language of p3s-synth, parsed: an SPMD program of compute bursts, loops and MPI steps.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace p3s::synth {

/// Distribution of the relative noise of a compute burst.
enum class NoiseDist : std::uint8_t { None, Uniform, Normal };

/// Relative noise: the duration is multiplied by 1 + rel·U(-1, 1) (uniform) or 1 + rel·N(0, 1) (normal, clamped
/// at 0).
struct Noise {
  NoiseDist dist = NoiseDist::None;
  double rel = 0.0;
};

/// The ranks a factor applies to: all, even or odd ranks, or a list (negative entries count from the end).
struct RankSelector {
  enum class Kind : std::uint8_t { All, Even, Odd, List };
  Kind kind = Kind::All;
  std::vector<std::int64_t> ranks;
  /// Whether rank `rank` of `size` ranks is selected.
  [[nodiscard]] bool matches(int rank, int size) const noexcept;
};

/// A compute multiplier for some ranks (load imbalance).
struct RankFactor {
  RankSelector ranks;
  double factor = 1.0;
};

/// A quantity that shrinks (or grows) with the process count n: value · (reference_ranks / n)^exponent.
/// Exponent 1 is perfect strong scaling of work, 0.5 the face of a 2-D domain, 0 a constant.
struct Scaled {
  double value = 0.0;
  double exponent = 0.0;
  [[nodiscard]] double at(int reference_ranks, int ranks) const noexcept;
};

/// `compute`: a burst of `ns` nanoseconds of work on every rank.
struct Compute {
  Scaled ns;
  Noise noise;
  std::vector<RankFactor> factors;  ///< multiplied together where several select a rank
  double gradient = 0.0;            ///< rank r of n also gets factor 1 + gradient · r / (n - 1)
};

/// Bytes of one message (or one collective block), with optional relative jitter ±jitter.
struct Volume {
  Scaled bytes;
  double jitter = 0.0;
};

/// How a halo's requests are completed: one MPI_Waitall, or calls that complete them in an order and a number of
/// calls the run decides (MPI_Waitsome, MPI_Waitany, MPI_Testany polling with failed tests in between).
enum class Completion : std::uint8_t { Waitall, Waitsome, Waitany, Testany };

/// `halo`: Irecv from every offset, Isend to every offset, then their completion.
struct Halo {
  std::vector<std::array<int, 2>> offsets;  ///< 1-D: {d, 0}; 2-D: {dx, dy} on the process grid
  bool two_d = false;
  bool periodic = true;       ///< false: MPI_PROC_NULL beyond the edges (calls recorded, no messages)
  std::vector<Volume> bytes;  ///< one per offset
  int tag = 0;
  bool distinct_tags = false;  ///< offset i uses tag + i
  std::size_t comm = 0;
  Completion complete = Completion::Waitall;
};

/// `sendrecv`: one MPI_Sendrecv per peer value: to r + d / from r - d (offset) or with r XOR m.
struct SendRecv {
  enum class Rule : std::uint8_t { Offset, Xor };
  Rule rule = Rule::Offset;
  std::vector<std::int64_t> values;  ///< offsets or masks, one call each
  bool butterfly = false;            ///< XOR with 1, 2, 4, ... below the communicator size
  bool periodic = true;
  Volume bytes;
  int tag = 0;
  std::size_t comm = 0;
};

/// `pipeline`: MPI_Recv from the previous rank, optional work, MPI_Send to the next (a wavefront).
struct Pipeline {
  bool reverse = false;    ///< true: from r + 1 to r - 1
  bool proc_null = false;  ///< true: the end ranks call Recv/Send with MPI_PROC_NULL instead of skipping them
  Volume bytes;
  int tag = 0;
  std::optional<Compute> work;
  std::size_t comm = 0;
};

/// The blocking collectives p3s-synth writes.
enum class CollKind : std::uint8_t { Barrier, Bcast, Reduce, Allreduce, Gather, Scatter, Allgather, Alltoall, Scan };

/// A blocking collective; `bytes` is the per-rank block (sendcount × type size).
struct Collective {
  CollKind kind = CollKind::Barrier;
  Volume bytes;
  int root = 0;
  bool in_place = false;
  std::size_t comm = 0;
};

struct Step;

/// `loop`: `body` repeated `counts[i % counts.size()]` times in iteration i of the enclosing loop.
struct Loop {
  std::vector<std::uint64_t> counts;
  std::vector<Step> body;
  bool scale = false;  ///< the loop --target-events resizes (top level only)
};

/// One element of a body.
struct Step {
  std::variant<Compute, Loop, Halo, SendRecv, Pipeline, Collective> op;
  std::string where;  ///< "body[2].body[0] (halo)", for messages
};

/// The cost model of the simulated machine.
struct Network {
  double latency_ns = 1000.0;
  double bytes_per_ns = 10.0;  ///< 10 GB/s
  double call_ns = 300.0;      ///< shortest duration of an MPI call
  double gap_ns = 50.0;        ///< application work between two MPI calls with no compute step between them
  double init_ns = 2.0e6;      ///< MPI_Init after the last rank arrived
  double finalize_ns = 5.0e5;  ///< MPI_Finalize after the last rank arrived
  double skew_ns = 5.0e4;      ///< ranks enter MPI_Init up to this much apart
};

/// A communicator made by MPI_Comm_split right after MPI_Init (and freed before MPI_Finalize).
struct CommSpec {
  enum class Split : std::uint8_t { Row, Col, Block, Modulo };
  std::string name;
  Split split = Split::Row;
  int k = 1;  ///< block size or modulus
};

/// A whole program. Communicator index 0 is MPI_COMM_WORLD, index i > 0 is comms[i - 1].
struct Program {
  std::string source;  ///< file name, for messages
  std::string comment;
  int ranks = 8;                           ///< default process count, and the reference count of scaled quantities
  std::optional<std::array<int, 2>> grid;  ///< process grid of 2-D halos; default: as MPI_Dims_create
  int ranks_per_node = 0;                  ///< 0: all ranks on one node
  Network network;
  std::vector<CommSpec> comms;
  std::vector<Step> body;
};

/// Parses a program. `source` names it in messages.
/// @throws InputError with a one-line message naming the source, the step and the field.
[[nodiscard]] Program parse_program(std::string_view json_text, const std::string& source);

/// Reads and parses a program file.
/// @throws InputError when the file cannot be read or is not a valid program.
[[nodiscard]] Program load_program(const std::filesystem::path& path);

/// The process grid of `ranks` processes: program.grid when given (it must hold `ranks` processes), else the
/// most nearly square px × py with px ≥ py, as MPI_Dims_create chooses.
/// @throws InputError when the program's grid does not hold `ranks` processes.
[[nodiscard]] std::array<int, 2> process_grid(const Program& program, int ranks);

}  // namespace p3s::synth
