// SPDX-License-Identifier: BSD-3-Clause
// Groups of calls per rank, and the shape they merge into.
#include "shape.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

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
      const std::int64_t peer = c.peers[0] >= 0 ? c.peers[0] : c.peers[1];
      if (peer >= 0) c.offset = peer - rank.rank;
    }
    out.back().calls.push_back(c);
  }
  return out;
}

Shape merge_shapes(const std::vector<const std::vector<RankGroup>*>& ranks, Alignment alignment) {
  // Progressive shortest common supersequence of the ranks' calls: each rank's calls are aligned with the shape
  // so far on a longest common subsequence of (function, role); its other calls are inserted where they occur,
  // and the positions of the ranks merged before are renumbered. The shape's groups are then its runs of one
  // function. Aligning calls rather than groups matters where boundary ranks skip calls: a corner rank's four
  // sends of two pipeline blocks are one run of its own, but two groups of the shape. Calls are aligned on their
  // function and direction (toward lower or higher ranks), so a sweep's receives are not taken for another's.
  using Key = std::tuple<std::string, Role, int>;
  std::vector<Key> shape;
  std::vector<std::vector<std::size_t>> positions(ranks.size());  // per rank, per call
  std::vector<std::vector<const Call*>> calls(ranks.size());
  // The ranks with the most calls first: they make the backbone the others are subsequences of (an interior
  // rank of a pipeline, not a corner that skips half its calls).
  std::vector<std::size_t> order(ranks.size());
  std::vector<std::size_t> sizes(ranks.size(), 0);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    order[r] = r;
    for (const RankGroup& g : *ranks[r]) sizes[r] += g.calls.size();
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  std::vector<std::size_t> merged_ranks;
  for (const std::size_t r : order) {
    std::vector<Key> seq;
    for (const RankGroup& g : *ranks[r]) {
      for (const Call& c : g.calls) {
        const int sign = c.offset > 0 ? 1 : c.offset < 0 ? -1 : 0;
        const int detail = alignment == Alignment::Function    ? 0
                           : alignment == Alignment::Direction ? sign
                                                               : sign * (std::abs(c.offset) == 1 ? 1 : 2);
        seq.emplace_back(g.call, g.role, detail);
        calls[r].push_back(&c);
      }
    }
    const std::size_t a = shape.size();
    const std::size_t b = seq.size();
    std::vector<std::vector<std::uint32_t>> lcs(a + 1, std::vector<std::uint32_t>(b + 1, 0));
    for (std::size_t i = a; i-- > 0;) {
      for (std::size_t j = b; j-- > 0;) {
        lcs[i][j] = shape[i] == seq[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    std::vector<Key> merged;
    std::vector<std::size_t> old_to_new(a);
    std::vector<std::size_t> mine(b);
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a || j < b) {
      if (i < a && j < b && shape[i] == seq[j] && lcs[i][j] == lcs[i + 1][j + 1] + 1) {
        old_to_new[i++] = merged.size();
        mine[j++] = merged.size();
        merged.push_back(shape[i - 1]);
      } else if (i < a && (j == b || lcs[i + 1][j] >= lcs[i][j + 1])) {
        old_to_new[i] = merged.size();
        merged.push_back(shape[i++]);
      } else {
        mine[j] = merged.size();
        merged.push_back(seq[j++]);
      }
    }
    for (const std::size_t done : merged_ranks) {
      for (std::size_t& x : positions[done]) x = old_to_new[x];
    }
    shape = std::move(merged);
    positions[r] = std::move(mine);
    merged_ranks.push_back(r);
  }
  Shape out;
  std::vector<std::size_t> group_of(shape.size());
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::pair<std::string, Role> fn{std::get<0>(shape[k]), std::get<1>(shape[k])};
    if (out.groups.empty() || out.groups.back() != fn) out.groups.push_back(fn);
    group_of[k] = out.groups.size() - 1;
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::vector<RankGroup> groups(out.groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      groups[g].call = out.groups[g].first;
      groups[g].role = out.groups[g].second;
    }
    for (std::size_t k = 0; k < calls[r].size(); ++k) groups[group_of[positions[r][k]]].calls.push_back(*calls[r][k]);
    out.ranks.push_back(std::move(groups));
  }
  return out;
}

}  // namespace p3s::modeler::detail
