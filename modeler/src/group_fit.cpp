// SPDX-License-Identifier: BSD-3-Clause
// The laws of a phase's groups but message sizes (group_sizes.cpp): call counts, calls kept as measured,
// communicators, collectives, completions.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "comm_model.hpp"
#include "group_fit.hpp"

namespace p3s::modeler::detail {
namespace {

/// Index of an event's call within the rank's shape: (shape position, call index in the group).
std::map<std::size_t, std::pair<std::size_t, std::size_t>> event_positions(const RankData& d) {
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> out;
  for (std::size_t g = 0; g < d.at.size(); ++g) {
    if (d.at[g] == nullptr) continue;
    for (std::size_t k = 0; k < d.at[g]->calls.size(); ++k) out[d.at[g]->calls[k].event] = {g, k};
  }
  return out;
}

/// The most calls any rank makes in a group.
std::size_t most_calls(const std::vector<RankData>& ranks, std::size_t g) {
  std::size_t most = 0;
  for (const RankData& d : ranks) most = std::max(most, d.at[g] ? d.at[g]->calls.size() : 0);
  return most;
}

/// How completion group g's calls follow the requests that the terms it completes started (their entries with a
/// peer, in the groups that start requests): one call per request at every rank of every run (an MPI_Wait after
/// each MPI_Irecv), or one call wherever some were started and none elsewhere (an MPI_Waitall after the exchange
/// along a side that is 1 at some n); neither when some rank calls otherwise.
enum class FollowsRequests : std::uint8_t { No, PerRequest, PerBatch };

FollowsRequests follows_requests(const GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g,
                                 const std::vector<GroupModel>& groups) {
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> refs;
  for (const auto& call : gm.completes) {
    for (const RequestRef& r : call) refs.insert({r.group, r.pattern_case, r.term});
  }
  if (refs.empty()) return FollowsRequests::No;
  bool per_request = true;
  bool per_batch = true;
  for (const RankData& d : ranks) {
    std::size_t requests = 0;
    std::map<std::uint32_t, std::pair<std::size_t, std::vector<Entry>>> generated;
    for (const auto& [sg, c, t] : refs) {
      if (!groups[sg].starts_requests) return FollowsRequests::No;
      auto it = generated.find(sg);
      if (it == generated.end()) {
        std::size_t which = 0;
        std::vector<Entry> e = groups[sg].entries(d.r, d.n, &which);
        it = generated.emplace(sg, std::make_pair(which, std::move(e))).first;
      }
      if (it->second.first != c) continue;
      for (const Entry& e : it->second.second) requests += e.term == t && !e.null() ? 1 : 0;
    }
    const std::size_t calls = d.at[g] == nullptr ? 0 : d.at[g]->calls.size();
    per_request = per_request && calls == requests;
    per_batch = per_batch && calls == (requests > 0 ? 1 : 0);
  }
  return per_request ? FollowsRequests::PerRequest : per_batch ? FollowsRequests::PerBatch : FollowsRequests::No;
}

/// The requests each completion call completes, as references to the groups, cases and terms that started
/// them (a reference covers every request of its term: which ones exist is the pattern's business).
void fit_completions(GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g,
                     const std::vector<GroupModel>& groups) {
  std::vector<std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>>> refs(most_calls(ranks, g));
  for (const RankData& d : ranks) {
    const RankGroup* rg = d.at[g];
    if (rg == nullptr) continue;
    const auto where = event_positions(d);
    std::map<std::size_t, std::pair<std::size_t, std::vector<Entry>>> generated;  // group -> (case, entries)
    for (std::size_t k = 0; k < rg->calls.size() && k < refs.size(); ++k) {
      for (const analyzer::SigAction& a : d.rank->events[rg->calls[k].event].actions) {
        if (!a.request || a.started < 0) continue;
        const auto it = where.find(static_cast<std::size_t>(a.started));
        if (it == where.end()) continue;
        const auto [sg, call] = it->second;
        if (groups[sg].role != Role::PointToPoint) continue;
        auto gen = generated.find(sg);
        if (gen == generated.end()) {
          std::size_t which = 0;
          std::vector<Entry> e = groups[sg].entries(d.r, d.n, &which);
          gen = generated.emplace(sg, std::make_pair(which, std::move(e))).first;
        }
        if (call >= gen->second.second.size()) continue;
        refs[k].insert({static_cast<std::uint32_t>(sg), static_cast<std::uint32_t>(gen->second.first),
                        gen->second.second[call].term});
      }
    }
  }
  for (const auto& set : refs) {
    std::vector<RequestRef> out;
    for (const auto& [sg, c, t] : set) out.push_back({sg, c, t, -1});
    gm.completes.push_back(std::move(out));
  }
  const FollowsRequests follows = follows_requests(gm, ranks, g, groups);
  gm.per_request = follows == FollowsRequests::PerRequest;
  // One call per batch where the count is no constant: where it is one at every rank, the law says as much.
  gm.per_batch = follows == FollowsRequests::PerBatch && !(gm.measured.empty() && gm.count.is_constant());
  if (gm.per_request || gm.per_batch) gm.measured = {};
}

/// What the ranks of all runs did in one collective call of a group.
struct CollectiveSamples {
  using Means = std::map<std::int64_t, std::pair<double, int>>;  ///< n -> (sum, count)
  mpi::Collective op = mpi::Collective::Unknown;
  std::vector<detail::CommObservation> comms;
  std::map<std::int64_t, double> root_rank;  ///< n -> the root as a rank of the communicator
  bool rooted = false;
  bool root_consistent = true;
  /// Samples from a scan's last member: how many sent nothing but received something (an in-place scan, which
  /// counts no block of its own), and how many sent a block. A zero-count scan or a nonblocking scan's request
  /// sends and receives nothing and tells neither.
  int last_in_place = 0, last_inclusive = 0;
  Means bytes_root, bytes_other, received_root, received_other;
  std::map<std::int64_t, double> comm_size;  ///< per n: the members of the communicator (of the last rank seen)

  void add(const RankData& d, const analyzer::SigAction& a) {
    op = a.collective;
    comms.push_back(detail::observe_comm(*d.signature, d.n, d.r, a.comm, a.comm_size));
    const std::vector<std::int64_t>& members = comms.back().members;
    comm_size[d.n] = static_cast<double>(std::max<std::size_t>(members.size(), 1));
    const bool is_root = a.root >= 0 && a.root == d.r;
    if (members.size() > 1 && members.back() == d.r) {
      if (a.bytes == 0 && a.bytes_received > 0) ++last_in_place;
      if (a.bytes > 0) ++last_inclusive;
    }
    if (a.root >= 0) {
      rooted = true;
      const auto pos = std::find(members.begin(), members.end(), a.root);
      const double cr = pos == members.end() ? -1 : static_cast<double>(pos - members.begin());
      auto [it, fresh] = root_rank.emplace(d.n, cr);
      root_consistent = root_consistent && (fresh || it->second == cr) && cr >= 0;
    }
    auto& bytes = is_root || a.root < 0 ? bytes_root[d.n] : bytes_other[d.n];
    bytes.first += a.bytes;
    ++bytes.second;
    auto& recv = is_root || a.root < 0 ? received_root[d.n] : received_other[d.n];
    recv.first += a.bytes_received;
    ++recv.second;
  }

  /// A size law from the mean per n (of `m`, else of `fallback`): as it is, or per member of the communicator
  /// when that follows a simpler law. The recorded bytes of most collectives count one block per member (an
  /// Allreduce of c bytes on a row of py ranks records c*py, which is neither c nor py alone when both change
  /// with n).
  RegressionLaw size_law(const Means& m, const Means& fallback, const RegressionOptions& options,
                         bool& per_member) const {
    std::map<std::int64_t, double> by_n;
    std::map<std::int64_t, double> per;
    for (const auto& [n, v] : (m.empty() ? fallback : m)) {
      by_n[n] = v.first / v.second;
      per[n] = by_n[n] / comm_size.at(n);
    }
    if (by_n.empty()) by_n[1] = per[1] = 0;
    const RegressionLaw raw = fit_regression(samples_of(by_n), options);
    const RegressionLaw scaled = fit_regression(samples_of(per), options);
    per_member = scaled.max_rel_error + 1e-9 < raw.max_rel_error;
    return per_member ? scaled : raw;
  }
};

/// Collective calls: operation, communicator, root and sizes per call of the group.
void fit_collectives(GroupModel& gm, std::vector<std::string>& notes, const std::vector<RankData>& ranks, std::size_t g,
                     const WholeAt& whole) {
  const auto calls = most_calls(ranks, g);
  for (std::size_t k = 0; k < calls; ++k) {
    const std::string where = "group " + std::to_string(g) + " (" + gm.call + "), call " + std::to_string(k);
    CollectiveSamples samples;
    for (const RankData& d : ranks) {
      const RankGroup* rg = d.at[g];
      if (rg == nullptr || k >= rg->calls.size()) continue;
      const analyzer::SigAction* a = nullptr;
      for (const analyzer::SigAction& x : d.rank->events[rg->calls[k].event].actions) {
        if (x.kind == mpi::ActionKind::Collective || x.kind == mpi::ActionKind::NbCollRequest) a = &x;
      }
      if (a != nullptr) samples.add(d, *a);
    }
    CollectiveEntry ce;
    ce.op = samples.op;
    if (const std::optional<CommModel> cm = detail::learn_comm(samples.comms, whole)) {
      ce.comm = *cm;
    } else {
      notes.push_back(where + ": its communicator's members follow no world/self/block/strided law; world assumed");
    }
    if (samples.rooted) {
      std::optional<ExactLaw> law =
          samples.root_consistent ? fit_exact(samples_of(samples.root_rank), whole) : std::nullopt;
      if (!law) {
        notes.push_back(where + ": the root follows no exact law; rank 0 of the communicator assumed");
        law = ExactLaw::constant(Rational::make(0));
      }
      ce.root = *law;
    }
    // Sizes on a sub-communicator of a grid are a global size over a side of the grid.
    const bool grid_comm = ce.comm.kind == CommModel::Kind::Block || ce.comm.kind == CommModel::Kind::Strided;
    const RegressionOptions options = volume_fit(grid_comm ? Frame::Grid2 : Frame::Offset);
    ce.exclusive = ce.op == mpi::Collective::Exscan ||
                   (ce.op == mpi::Collective::Scan && samples.last_in_place > samples.last_inclusive);
    ce.bytes_root = samples.size_law(samples.bytes_root, samples.bytes_other, options, ce.per_member[0]);
    ce.bytes_other = samples.size_law(samples.bytes_other, samples.bytes_root, options, ce.per_member[1]);
    ce.received_root = samples.size_law(samples.received_root, samples.received_other, options, ce.per_member[2]);
    ce.received_other = samples.size_law(samples.received_other, samples.received_root, options, ce.per_member[3]);
    gm.collectives.push_back(std::move(ce));
  }
}

}  // namespace

std::optional<ExactLaw> count_law(const std::vector<RankData>& ranks, std::size_t g, const WholeAt& whole,
                                  std::string& why) {
  std::map<std::int64_t, std::set<std::size_t>> counts;
  for (const RankData& d : ranks) counts[d.n].insert(d.at[g] ? d.at[g]->calls.size() : 0);
  std::map<std::int64_t, double> by_n;
  for (const auto& [n, c] : counts) {
    if (c.size() != 1) {
      why = "ranks of the run at " + std::to_string(n) + " processes make different numbers of these calls";
      return std::nullopt;
    }
    by_n[n] = static_cast<double>(*c.begin());
  }
  WholeAt whole_count = whole;
  whole_count.non_negative = true;
  std::optional<ExactLaw> law = fit_exact(samples_of(by_n), whole_count);
  if (!law) why = "the number of calls follows no exact law in n";
  return law;
}

MeasuredCalls measure(const std::vector<RankData>& ranks, std::size_t g, bool with_peers,
                      const std::optional<ExactLaw>& iterations) {
  std::map<std::int64_t, std::vector<MeasuredCalls::Calls>> by_n;
  for (const RankData& d : ranks) {
    std::vector<MeasuredCalls::Calls>& run = by_n[d.n];
    if (run.size() < static_cast<std::size_t>(d.n)) run.resize(static_cast<std::size_t>(d.n));
    if (d.at[g] == nullptr || d.r < 0 || d.r >= d.n) continue;
    for (const Call& c : one_iteration(d, g, iterations)) {
      run[static_cast<std::size_t>(d.r)].push_back(with_peers ? c.peers : std::array<std::int64_t, 2>{-1, -1});
    }
  }
  MeasuredCalls m;
  for (auto& [n, calls] : by_n) m.runs.push_back({n, std::move(calls)});
  return m;
}

std::string kept_as_measured(const MeasuredCalls& m) {
  return "kept as measured at n = " + m.fitted_n() +
         " (exact there; at any other n the nearest fitted run's calls, not extrapolated: approximate)";
}

void fit_p2p_comm(GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g, const WholeAt& whole,
                  std::vector<std::string>& notes) {
  std::vector<detail::CommObservation> obs;
  for (const RankData& d : ranks) {
    const RankGroup* rg = d.at[g];
    if (rg == nullptr) continue;
    std::set<std::pair<std::uint32_t, std::uint32_t>> used;  // (comm, size)
    for (const Call& c : rg->calls) {
      for (const analyzer::SigAction& a : d.rank->events[c.event].actions) {
        if (a.peer >= 0 && (a.kind == mpi::ActionKind::Send || a.kind == mpi::ActionKind::Recv ||
                            a.kind == mpi::ActionKind::IrecvPost)) {
          used.insert({a.comm, a.comm_size});
        }
      }
    }
    if (used.size() > 1) {
      notes.push_back("group " + std::to_string(g) + " (" + gm.call + "): rank " + std::to_string(d.r) + " at " +
                      std::to_string(d.n) + " processes sends on several communicators; world assumed");
      return;
    }
    if (used.size() == 1)
      obs.push_back(detail::observe_comm(*d.signature, d.n, d.r, used.begin()->first, used.begin()->second));
  }
  if (obs.empty()) return;
  if (const std::optional<CommModel> cm = detail::learn_comm(obs, whole)) {
    gm.comm = *cm;
  } else {
    notes.push_back("group " + std::to_string(g) + " (" + gm.call +
                    "): its communicator's members follow no world/self/block/strided law; world assumed");
  }
}

void fit_groups(PhaseModel& pm, PhaseReport& pr, const std::vector<RankData>& ranks,
                const std::map<std::size_t, std::string>& completion_notes, const WholeAt& whole) {
  std::vector<BlockSamples> wanting(pm.groups.size());
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    if (pm.groups[g].role == Role::PointToPoint) wanting[g] = fit_traits(pm.groups[g], ranks, g);
  }
  fit_block_laws(pm.groups, wanting);
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    if (pm.groups[g].role == Role::Collective) fit_collectives(pm.groups[g], pr.notes, ranks, g, whole);
    if (pm.groups[g].role != Role::Completion) continue;
    fit_completions(pm.groups[g], ranks, g, pm.groups);
    const auto note = completion_notes.find(g);
    if (note != completion_notes.end() && !pm.groups[g].measured.empty()) pr.notes.push_back(note->second);
  }
}

}  // namespace p3s::modeler::detail
