// SPDX-License-Identifier: BSD-3-Clause
// Groups of calls per rank, and the shape they merge into.
#include "shape.hpp"

#include <algorithm>
#include <set>

namespace p3s::modeler::detail {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

bool is_send_function(const std::string& call) {
  static const std::set<std::string> sends = {"MPI_Send",  "MPI_Bsend",  "MPI_Ssend",  "MPI_Rsend",
                                              "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"};
  return sends.count(call) != 0;
}

bool is_recv_function(const std::string& call) {
  return call == "MPI_Recv" || call == "MPI_Irecv" || call == "MPI_Mrecv" || call == "MPI_Imrecv";
}

bool is_sendrecv(const std::string& call) { return call == "MPI_Sendrecv" || call == "MPI_Sendrecv_replace"; }

}  // namespace

Role role_of(const analyzer::SigEvent& e) {
  for (const analyzer::SigAction& a : e.actions) {
    if (a.kind == "coll" || a.kind == "icoll") return Role::Collective;
  }
  if (starts_with(e.call, "MPI_Wait") || starts_with(e.call, "MPI_Test")) return Role::Completion;
  if (is_send_function(e.call) || is_recv_function(e.call) || is_sendrecv(e.call)) return Role::PointToPoint;
  for (const analyzer::SigAction& a : e.actions) {
    if (a.kind == "send" || a.kind == "recv" || a.kind == "irecv") return Role::PointToPoint;
  }
  return Role::Local;
}

std::array<std::string, 2> slot_kinds(const std::string& call) {
  if (is_sendrecv(call)) return {"send", "recv"};
  if (call == "MPI_Irecv" || call == "MPI_Imrecv") return {"irecv", ""};
  if (is_recv_function(call)) return {"recv", ""};
  return {"send", ""};  // sends, and persistent starts, whose actions say more
}

bool starts_requests(const std::string& call) {
  return call.size() > 5 && call[4] == 'I' && (is_send_function(call) || is_recv_function(call));
}

std::vector<RankGroup> rank_groups(const analyzer::SigRank& rank) {
  std::vector<RankGroup> out;
  for (std::size_t i = 0; i < rank.events.size(); ++i) {
    const analyzer::SigEvent& e = rank.events[i];
    const Role role = role_of(e);
    if (out.empty() || out.back().call != e.call || out.back().role != role) out.push_back({e.call, role, {}});
    Call c;
    c.event = i;
    c.burst_work = e.burst_work.mean;
    if (role == Role::PointToPoint) {
      const std::array<std::string, 2> kinds = slot_kinds(e.call);
      for (std::size_t s = 0; s < 2; ++s) {
        for (const analyzer::SigAction& a : e.actions) {
          const bool match = kinds[s] == "send" ? a.kind == "send" : (a.kind == "recv" || a.kind == "irecv");
          if (kinds[s].empty() || !match || a.peer < 0) continue;
          c.peers[s] = a.peer;
          c.tags[s] = a.tag;
          c.bytes[s] = a.bytes;
          break;
        }
      }
    }
    out.back().calls.push_back(c);
  }
  return out;
}

Shape merge_shapes(const std::vector<const std::vector<RankGroup>*>& ranks) {
  // Progressive shortest common supersequence: each rank's sequence is aligned with the shape so far on a longest
  // common subsequence of (function, role); its other groups are inserted where they occur, and the positions of
  // the ranks merged before are renumbered. A master's [Send][Recv] and a worker's [Recv][Send] become
  // [Send][Recv][Send].
  Shape shape;
  for (const std::vector<RankGroup>* rank : ranks) {
    const std::vector<RankGroup>& seq = *rank;
    const std::size_t a = shape.groups.size();
    const std::size_t b = seq.size();
    const auto same = [&](std::size_t i, std::size_t j) {
      return shape.groups[i].first == seq[j].call && shape.groups[i].second == seq[j].role;
    };
    std::vector<std::vector<std::size_t>> lcs(a + 1, std::vector<std::size_t>(b + 1, 0));
    for (std::size_t i = a; i-- > 0;) {
      for (std::size_t j = b; j-- > 0;) {
        lcs[i][j] = same(i, j) ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    std::vector<std::pair<std::string, Role>> merged;
    std::vector<std::size_t> old_to_new(a);
    std::vector<std::size_t> mine(b);
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a || j < b) {
      if (i < a && j < b && same(i, j) && lcs[i][j] == lcs[i + 1][j + 1] + 1) {
        old_to_new[i++] = merged.size();
        mine[j++] = merged.size();
        merged.push_back(shape.groups[i - 1]);
      } else if (i < a && (j == b || lcs[i + 1][j] >= lcs[i][j + 1])) {
        old_to_new[i] = merged.size();
        merged.push_back(shape.groups[i++]);
      } else {
        mine[j] = merged.size();
        merged.emplace_back(seq[j].call, seq[j].role);
        ++j;
      }
    }
    for (std::vector<std::size_t>& p : shape.positions) {
      for (std::size_t& x : p) x = old_to_new[x];
    }
    shape.groups = std::move(merged);
    shape.positions.push_back(std::move(mine));
  }
  return shape;
}

}  // namespace p3s::modeler::detail
