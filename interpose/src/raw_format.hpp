// SPDX-License-Identifier: BSD-3-Clause
// Layout of the raw per-thread event logs the recorder appends to while the application runs.
//
// A log is a 256-byte FileHeader followed by records, each encoded compactly (raw_codec.hpp: a length, then the
// kind, region, time and payload as varints), so a reader can skip kinds it does not know and stop cleanly at a
// torn last record of a killed process. A reader gives every record back as a RecordHeader and the payload
// structure below. Times are the rank's CLOCK_MONOTONIC in ns.
#pragma once

#include <cstdint>

namespace p3s::interpose::raw {

inline constexpr char kMagic[8] = {'P', '3', 'S', 'R', 'A', 'W', '0', '1'};
/// 3: the header says where the events are (FileHeader::event_file); 2: records encoded compactly (raw_codec.hpp),
/// events among them; 1 stored RecordHeader and payload as they are.
inline constexpr std::uint32_t kVersion = 3;
inline constexpr std::uint32_t kOldestVersion = 2;  ///< the oldest a reader still reads

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;  ///< sizeof(FileHeader)
  std::int32_t rank;
  std::int32_t world_size;
  std::uint32_t thread_index;  ///< 0 for the thread that called MPI_Init
  std::uint32_t metric_count;  ///< values after every Enter/Leave
  std::uint8_t counter_mode;   ///< CounterMode
  std::uint8_t thread_level;   ///< MPI_THREAD_* as provided
  std::uint8_t callsites;      ///< 1 when Enter records may carry a call site
  /// 1: the events are in an OTF2 event file beside the log (event_file_path()), written during the run with local
  /// communicator and call-site ids and local times; the log holds the definitions. 0: the events are records here.
  std::uint8_t event_file;
  std::uint32_t pid;
  std::int64_t clock_offset_ns;      ///< add to local times to get rank 0's clock (measured at MPI_Init)
  std::uint64_t init_ns;             ///< local clock when recording started
  std::int64_t realtime_at_init_ns;  ///< CLOCK_REALTIME at the same moment (dates in provenance)
  char host[64];
  char metric_names[3][24];
  std::uint64_t run_id;  ///< the same in every log of one run (rank 0's, broadcast at MPI_Init); 0 in older logs
  char reserved[48];
};
static_assert(sizeof(FileHeader) == 256);

/// Record kinds. A log with an event file (version 3, FileHeader::event_file) holds only CommDef, CallsiteDef, Meta
/// and Finalized; the event kinds are read from older logs and from logs written without one.
enum class Kind : std::uint8_t {
  Enter = 1,              ///< region; payload: [callsite id if kFlagCallsite] metrics[metric_count]
  Leave = 2,              ///< region; payload: metrics[metric_count]
  Send = 3,               ///< Msg, request 0
  Isend = 4,              ///< Msg
  IsendComplete = 5,      ///< Request
  IrecvRequest = 6,       ///< Request
  Irecv = 7,              ///< Msg
  Recv = 8,               ///< Msg, request 0
  CollBegin = 9,          ///< no payload
  CollEnd = 10,           ///< Coll, request 0
  NbCollRequest = 11,     ///< Request
  NbCollComplete = 12,    ///< Coll
  RequestCancelled = 13,  ///< Request
  CommCreate = 14,        ///< CommRef
  CommDestroy = 15,       ///< CommRef
  CommDef = 16,           ///< CommDefinition + int32 members[size] when kCommHasMembers
  CallsiteDef = 17,       ///< CallsiteDefinition + NUL-terminated text
  Meta = 18,              ///< "key\0value\0"
  Finalized = 19,         ///< the rank reached MPI_Finalize: this log is complete; payload: ClockSync
};

inline constexpr std::uint8_t kFlagCallsite = 1;

/// A record as a reader gives it back; `bytes` is the decoded size (this header and the payload padded to 8).
struct RecordHeader {
  Kind kind;
  std::uint8_t flags;
  std::uint16_t region;
  std::uint32_t bytes;
  std::uint64_t time_ns;
};
static_assert(sizeof(RecordHeader) == 16);

/// Point-to-point message; `peer` is the rank in `comm` (a local communicator index), as in OTF2.
struct Msg {
  std::uint32_t comm;
  std::int32_t peer;
  std::int32_t tag;
  std::uint32_t reserved;
  std::uint64_t bytes;
  std::uint64_t request;
};
static_assert(sizeof(Msg) == 32);

struct Request {
  std::uint64_t request;
};

/// Collective end; `root` is the rank in `comm`, or -1 for none. `op` is an OTF2_CollectiveOp.
struct Coll {
  std::uint32_t comm;
  std::uint32_t op;
  std::int32_t root;
  std::uint32_t reserved;
  std::uint64_t sent;
  std::uint64_t received;
  std::uint64_t request;
};
static_assert(sizeof(Coll) == 40);

struct CommRef {
  std::uint32_t comm;
  std::uint32_t reserved;
};

inline constexpr std::uint32_t kCommHasMembers = 1;  ///< this record lists the members (world ranks)
inline constexpr std::uint32_t kCommWorld = 2;
inline constexpr std::uint32_t kCommSelf = 4;
inline constexpr std::uint32_t kCommInter = 8;  ///< members are the remote group
inline constexpr std::uint32_t kCommLazy = 16;  ///< discovered in use; key derived from the members
inline constexpr std::uint32_t kNoParent = 0xffffffffu;

/// A communicator known to this rank. `key` is the same on every member: (world rank of the member with
/// rank 0) << 32 | (that rank's creation counter), agreed with a broadcast when the communicator is created.
/// Every member logs its own `my_rank`, so the member list (world rank by communicator rank) is rebuilt
/// from the members' logs without any rank writing the whole list. Communicators discovered in use
/// (kCommLazy) and inter-communicators list their members instead.
struct CommDefinition {
  std::uint32_t local;
  std::uint32_t parent_local;
  std::uint64_t key;
  std::uint32_t size;
  std::uint32_t flags;
  std::int32_t my_rank;
  std::uint32_t reserved;
};
static_assert(sizeof(CommDefinition) == 32);

struct CallsiteDefinition {
  std::uint64_t id;
};

/// Clock offset measured at MPI_Finalize (offsets are interpolated between init and finalize).
struct ClockSyncAtEnd {
  std::uint64_t local_ns;
  std::int64_t offset_ns;
};

/// Well-known communicator keys.
inline constexpr std::uint64_t kWorldKey = 0xffffffff00000000ULL;
inline constexpr std::uint64_t kSelfKey = 0xffffffff00000001ULL;

[[nodiscard]] constexpr std::uint32_t padded(std::uint32_t bytes) noexcept { return (bytes + 7u) & ~7u; }

}  // namespace p3s::interpose::raw
