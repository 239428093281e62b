// SPDX-License-Identifier: BSD-3-Clause
// Test helpers (see archive_check.hpp).
#include "archive_check.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "p3s/analyzer/trace_reader.hpp"

namespace p3s::synth::testing {
namespace fs = std::filesystem;
using analyzer::Event;
using analyzer::EventKind;
using analyzer::Location;

fs::path scratch_dir(const std::string& name) {
  // ctest runs each test case as its own process, possibly in parallel: each gets its own directory.
  const fs::path dir = fs::path(P3S_TEST_TMP) / (name + "." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path programs_dir() { return fs::path(P3S_SYNTH_PROGRAMS); }

GenerateResult generate_text(const std::string& program_json, const std::string& name, int ranks, std::uint64_t seed) {
  const Program p = parse_program(program_json, name + ".json");
  return generate(p, GenerateOptions{.out_dir = scratch_dir(name), .ranks = ranks, .seed = seed});
}

namespace {

/// One end of a message as recorded.
struct End {
  std::int32_t rank = 0;  ///< the recording rank
  std::int32_t peer = 0;
  std::uint64_t bytes = 0;
  std::uint64_t time_ns = 0;
};

/// (communicator, source, destination, tag): MPI's non-overtaking order holds per key.
using Key = std::tuple<std::uint32_t, std::int32_t, std::int32_t, std::uint32_t>;

/// One rank's part in a collective.
struct CollPart {
  std::int32_t rank = 0;
  mpi::Collective op = mpi::Collective::Unknown;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
};

class Checker final : public analyzer::EventVisitor {
 public:
  explicit Checker(const analyzer::TraceDefinitions& defs) : defs_(defs) {}

  void on_location_begin(const Location& l) override {
    last_ns_ = 0;
    stack_.clear();
    last_work_.reset();
    leave_work_.reset();
    coll_begin_ns_ = 0;
    per_comm_.clear();
    rank_ = l.rank;
  }

  void on_location_end(const Location& l, std::uint64_t records) override {
    facts_.events += records;
    EXPECT_TRUE(stack_.empty()) << "rank " << l.rank << " ends inside " << stack_.size() << " region(s)";
  }

  void on_event(const Location& l, const Event& e) override {
    EXPECT_GE(e.time_ns, last_ns_) << "rank " << l.rank << ": time goes backwards";
    last_ns_ = e.time_ns;
    switch (e.kind) {
      case EventKind::Enter:
        stack_.push_back(e.region);
        if (e.work) {
          if (last_work_) {
            EXPECT_GE(*e.work, *last_work_) << "rank " << l.rank << ": work metric decreases";
          }
          if (leave_work_) facts_.bursts_ns.push_back(*e.work - *leave_work_);
          last_work_ = e.work;
        }
        break;
      case EventKind::Leave:
        EXPECT_FALSE(stack_.empty()) << "rank " << l.rank << ": Leave without Enter";
        if (!stack_.empty()) {
          EXPECT_EQ(stack_.back(), e.region) << "rank " << l.rank << ": Leave of another region";
          stack_.pop_back();
        }
        if (e.work) {
          if (last_work_) {
            EXPECT_GE(*e.work, *last_work_) << "rank " << l.rank << ": work metric decreases";
          }
          last_work_ = leave_work_ = e.work;
        }
        break;
      case EventKind::MpiSend:
      case EventKind::MpiIsend:
        EXPECT_GE(e.peer, 0) << "rank " << l.rank << ": unresolved send peer";
        sends_[Key{e.comm, rank_, e.peer, e.tag}].push_back({rank_, e.peer, e.bytes, e.time_ns});
        break;
      case EventKind::MpiRecv:
      case EventKind::MpiIrecv:
        EXPECT_GE(e.peer, 0) << "rank " << l.rank << ": unresolved receive peer";
        recvs_[Key{e.comm, e.peer, rank_, e.tag}].push_back({rank_, e.peer, e.bytes, e.time_ns});
        break;
      case EventKind::CollectiveBegin:
        coll_begin_ns_ = e.time_ns;
        break;
      case EventKind::CollectiveEnd: {
        const std::size_t index = per_comm_[e.comm]++;
        auto& parts = collectives_[{e.comm, index}];
        parts.push_back({rank_, e.op, coll_begin_ns_, e.time_ns});
        break;
      }
      default:
        break;
    }
  }

  ArchiveFacts finish() {
    // Messages: the k-th receive of a key matches the k-th send of that key.
    for (auto& [key, sends] : sends_) {
      auto it = recvs_.find(key);
      const std::size_t received = it == recvs_.end() ? 0 : it->second.size();
      EXPECT_EQ(sends.size(), received) << "comm " << std::get<0>(key) << ", " << std::get<1>(key) << " -> "
                                        << std::get<2>(key) << ", tag " << std::get<3>(key)
                                        << ": sends and receives differ";
      for (std::size_t k = 0; k < std::min(sends.size(), received); ++k) {
        const End& s = sends[k];
        const End& r = it->second[k];
        EXPECT_EQ(s.bytes, r.bytes) << "message " << k << " " << s.rank << " -> " << r.rank;
        EXPECT_GE(r.time_ns, s.time_ns) << "message " << k << " " << s.rank << " -> " << r.rank
                                        << " is received before it is sent";
        facts_.messages.push_back(MatchedMessage{.source = s.rank,
                                                 .dest = r.rank,
                                                 .comm = std::get<0>(key),
                                                 .tag = std::get<3>(key),
                                                 .sent_bytes = s.bytes,
                                                 .received_bytes = r.bytes,
                                                 .send_ns = s.time_ns,
                                                 .recv_ns = r.time_ns});
      }
    }
    for (const auto& [key, recvs] : recvs_) {
      EXPECT_TRUE(sends_.contains(key)) << recvs.size() << " receive(s) on comm " << std::get<0>(key) << " from "
                                        << std::get<1>(key) << " at " << std::get<2>(key) << " with no send";
    }
    // Collectives: every member takes part, with the same operation, and the calls overlap.
    for (const auto& [key, parts] : collectives_) {
      const analyzer::Communicator* c = defs_.comm(key.first);
      EXPECT_NE(c, nullptr);
      if (c != nullptr && c->kind == analyzer::CommKind::Group) {
        EXPECT_EQ(parts.size(), c->world_ranks.size()) << "collective " << key.second << " on comm " << key.first;
      }
      std::uint64_t last_begin = 0;
      std::uint64_t first_end = UINT64_MAX;
      for (const CollPart& p : parts) {
        EXPECT_EQ(p.op, parts.front().op) << "collective " << key.second << " on comm " << key.first;
        last_begin = std::max(last_begin, p.begin_ns);
        first_end = std::min(first_end, p.end_ns);
      }
      EXPECT_LE(last_begin, first_end) << "collective " << key.second << " on comm " << key.first
                                       << ": a member left before the last one entered";
      ++facts_.collectives;
    }
    return std::move(facts_);
  }

 private:
  const analyzer::TraceDefinitions& defs_;
  std::int32_t rank_ = 0;
  std::uint64_t last_ns_ = 0;
  std::vector<std::uint32_t> stack_;
  std::optional<std::uint64_t> last_work_;
  std::optional<std::uint64_t> leave_work_;
  std::uint64_t coll_begin_ns_ = 0;
  std::map<std::uint32_t, std::size_t> per_comm_;
  std::map<Key, std::vector<End>> sends_;
  std::map<Key, std::vector<End>> recvs_;
  std::map<std::pair<std::uint32_t, std::size_t>, std::vector<CollPart>> collectives_;
  ArchiveFacts facts_;
};

}  // namespace

ArchiveFacts check_archive(const fs::path& dir) {
  analyzer::TraceReader reader(dir);
  Checker checker(reader.definitions());
  reader.read_all(checker);
  return checker.finish();
}

}  // namespace p3s::synth::testing
