// SPDX-License-Identifier: BSD-3-Clause
// Fitting an application model: phases related across runs, each phase's shape (groups of calls), and per group
// the laws of its communications; then the work of the bursts per class of ranks.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>

#include "comm_model.hpp"
#include "grid_seen.hpp"
#include "orient.hpp"
#include "p3s/error.hpp"
#include "p3s/hash.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"
#include "phase_grid.hpp"
#include "rank_data.hpp"
#include "shape.hpp"
#include "side_analogy.hpp"
#include "work_model.hpp"

namespace p3s::modeler {
namespace {

using detail::Call;
using detail::first_call;
using detail::learn_phase_peers;
using detail::LearntPeers;
using detail::one_iteration;
using detail::phase_boxes;
using detail::PhaseBox;
using detail::RankData;
using detail::RankGroup;

std::vector<Sample> samples_of(const std::map<std::int64_t, double>& by_n) {
  std::vector<Sample> s;
  for (const auto& [n, v] : by_n) s.push_back({static_cast<double>(n), v});
  return s;
}

/// Calls per rank in a group, the same for every rank of a run: an exact law in n.
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

/// Regression options for message sizes in a frame: a grid's own dimensions come first, since sizes on a
/// process grid are the global size over a side (several bases agree on powers of two; they differ elsewhere),
/// and on a 3-D grid over the processes of a face (a block's halo across x is 1 / (p_y p_z) of the global face);
/// a step along one dimension (`axis`) tries the face it crosses before all (at 4, 8, 16 a halo across x is also
/// c/dims3(n)[2], which 32 tells apart). Likewise the sides of the 2^floor(k/2) x 2^ceil(k/2) grid for the frames
/// of power-of-two codes (xor, transpose): at 4, 8, 16 a row's 2, 4, 4 columns are also floor(cbrt(n)) + ....
RegressionOptions volume_fit(Frame frame, std::optional<std::size_t> axis = std::nullopt) {
  RegressionOptions o;
  const int dims = frame_dims(frame);
  const bool pow2 = frame == Frame::Xor || frame == Frame::Transpose;
  if (dims == 1 && !pow2) return o;
  std::vector<Basis> first = pow2        ? std::vector<Basis>{Basis::Pow2CeilHalfLog2, Basis::Pow2FloorHalfLog2}
                             : dims == 2 ? std::vector<Basis>{Basis::Dims2Minor, Basis::Dims2Major}
                                         : std::vector<Basis>{Basis::Dims3Third, Basis::Dims3Second, Basis::Dims3First,
                                                              Basis::Dims3Face0, Basis::Dims3Face1,  Basis::Dims3Face2};
  if (dims == 3 && axis && *axis < 3) {
    const Basis face = face_basis(*axis);
    first.erase(std::find(first.begin(), first.end(), face));
    first.insert(first.begin(), face);
    o.halo = face;
  }
  o.bases = first;
  for (const Basis b : all_bases()) {
    if (!counts_only(b) && !sizes_only(b) && std::find(first.begin(), first.end(), b) == first.end()) {
      o.bases.push_back(b);
    }
  }
  return o;
}

/// The one dimension a term's constant label steps along in slot s of a grid program, or nullopt.
std::optional<std::size_t> crossed_axis(const Program& p, std::size_t term, std::size_t slot) {
  if (frame_dims(p.frame) < 2 || term >= p.terms.size() || slot >= p.terms[term].slots.size()) return std::nullopt;
  const std::vector<IndexedLaw>& label = p.terms[term].slots[slot];
  if (!std::all_of(label.begin(), label.end(),
                   [](const IndexedLaw& l) { return l.step == 0 && l.base.is_constant(); })) {
    return std::nullopt;
  }
  return label_axis(label);
}

/// A term's slot: (pattern case, term, slot).
using SlotKey = std::tuple<std::size_t, std::uint32_t, int>;
/// The messages of each slot whose sizes follow no law in n: what a block law is fitted to (fit_block_laws()).
using BlockSamples = std::map<SlotKey, std::vector<BlockSample>>;

/// The most ghost layers a coarse grid's face is tried with along each of its sides (a stencil's halo is 1 or 2).
constexpr int kMaxGhostLayers = 2;

/// The ghost layers to try along a face's two sides, fewest first: none, then up to `most` each.
std::vector<std::array<int, 2>> ghost_margins(int most) {
  std::vector<std::array<int, 2>> out;
  for (int sum = 0; sum <= 2 * most; ++sum) {
    for (int a = 0; a <= most; ++a) {
      if (sum - a >= 0 && sum - a <= most) out.push_back({a, sum - a});
    }
  }
  return out;
}

/// Mean message size per (case, term, slot) and n, and the ratio between consecutive repetitions. Returns the
/// messages of the slots whose sizes no law in n reproduces, or that differ from rank to rank or step to step.
BlockSamples fit_traits(GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g) {
  struct Acc {
    std::map<std::int64_t, std::pair<double, std::int64_t>> bytes;  // n -> (sum, count)
    std::map<std::int64_t, std::pair<double, double>> range;        // n -> (smallest, largest)
    std::map<std::int64_t, std::vector<double>> first_row;          // n -> bytes by index, one rank
    std::map<std::int64_t, std::int64_t> tags;                      // tag -> occurrences
    std::vector<BlockSample> samples;                               // every message, for a block law
  };
  std::map<SlotKey, Acc> acc;
  BlockSamples wanting;
  for (const RankData& d : ranks) {
    const RankGroup* rg = d.at[g];
    if (rg == nullptr) continue;
    std::size_t which = 0;
    const std::vector<Entry> entries = gm.entries(d.r, d.n, &which);
    if (entries.size() != rg->calls.size()) continue;
    std::set<std::tuple<std::size_t, std::uint32_t, int>> first_seen;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      for (int s = 0; s < gm.slots; ++s) {
        if (rg->calls[k].peers[static_cast<std::size_t>(s)] < 0) continue;
        const auto key = std::make_tuple(which, entries[k].term, s);
        Acc& a = acc[key];
        const double bytes = rg->calls[k].bytes[static_cast<std::size_t>(s)];
        a.samples.push_back({d.n, d.r, gm.size_index(entries[k]), bytes});
        auto& b = a.bytes[d.n];
        b.first += bytes;
        ++b.second;
        const auto [range, added] = a.range.try_emplace(d.n, bytes, bytes);
        range->second.first = std::min(range->second.first, bytes);
        range->second.second = std::max(range->second.second, bytes);
        ++a.tags[rg->calls[k].tags[static_cast<std::size_t>(s)]];
        if (d.r == 0 || first_seen.insert(key).second) {
          auto& row = a.first_row[d.n];
          if (static_cast<std::int64_t>(row.size()) == gm.size_index(entries[k])) {
            row.push_back(rg->calls[k].bytes[static_cast<std::size_t>(s)]);
          }
        }
      }
    }
  }
  // A measured group is one case of one term.
  const bool measured = !gm.measured.empty();
  gm.traits.assign(measured ? 1 : gm.pattern.cases.size(), {});
  for (std::size_t c = 0; c < gm.traits.size(); ++c) {
    gm.traits[c].resize(measured ? 1 : gm.pattern.cases[c].program.terms.size());
  }
  for (auto& [key, a] : acc) {
    const auto [c, t, s] = key;
    TermTraits& tt = gm.traits[c][t];
    const auto slot = static_cast<std::size_t>(s);
    // Sizes within a repetition: equal, or halving / doubling step by step (recursive halving, doubling).
    double factor = 1;
    for (const auto& [n, row] : a.first_row) {
      if (row.size() < 2 || row[0] <= 0) continue;
      factor = row[1] / row[0];
      break;
    }
    if (std::abs(factor - 0.5) > 1e-9 && std::abs(factor - 2) > 1e-9) factor = 1;
    tt.bytes_step_factor[slot] = factor;
    std::map<std::int64_t, double> first;  // size of the first repetition (the mean when all are equal)
    for (const auto& [n, sc] : a.bytes) first[n] = sc.first / static_cast<double>(sc.second);
    for (const auto& [n, r] : a.range) {
      if (factor == 1 && first[n] > 0) {
        tt.rank_spread[slot] = std::max(tt.rank_spread[slot], (r.second - r.first) / first[n]);
      }
    }
    if (factor != 1) {
      for (const auto& [n, row] : a.first_row) {
        if (!row.empty()) first[n] = row[0];
      }
    }
    const std::optional<std::size_t> axis =
        measured ? std::nullopt : crossed_axis(gm.pattern.cases[c].program, t, slot);
    tt.bytes[slot] = fit_regression(samples_of(first),
                                    volume_fit(measured ? Frame::Offset : gm.pattern.cases[c].program.frame, axis));
    // A step across one axis of MPI_Dims_create's 3-D grid whose sizes no one-parameter law reproduces: a block's face
    // with its ghost layers, (L/p_b + g_b)(L/p_c + g_c) points, where it reproduces them. It comes before laws of
    // any other form, which fit as well where the fitted grids tell too little apart (at 4 to 32 ranks, 1 x 2 x 2 to
    // 2 x 4 x 4, a margin along both sides is also c/face + d, which misses 4 x 4 x 4 by 5 %).
    if (axis && *axis < 3 && frame_dims(gm.pattern.cases[c].program.frame) == 3 &&
        gm.pattern.cases[c].program.layout.grain == 0 && !gm.pattern.cases[c].program.layout.boxed() &&
        (tt.bytes[slot].parameters() > 1 || tt.bytes[slot].max_rel_error > kSizeTolerance)) {
      if (std::optional<RegressionLaw> block = fit_block_face(samples_of(first), face_basis(*axis))) {
        tt.bytes[slot] = std::move(*block);
      }
    }
    // A halo across one axis of a 3-D grid whose sizes no simpler law reproduces: the block's face with a margin
    // of ghost cells or atoms, (L_b/p_b + m)(L_c/p_c + m) expanded, where it reproduces them (a molecular dynamics
    // code's ghost atoms: 79512, 45672, 26232, 26232 bytes at 2-16 ranks, and 16512 at 32).
    if (axis && *axis < 3 && frame_dims(gm.pattern.cases[c].program.frame) == 3 &&
        tt.bytes[slot].max_rel_error > kSizeTolerance) {
      const Basis face = face_basis(*axis);
      RegressionLaw halo = fit_regression(
          samples_of(first),
          RegressionOptions{.allow_power = false, .bases = {face}, .allow_linear_inverse = false, .halo = face});
      if (halo.form == RegressionForm::Halo && halo.max_rel_error <= kSizeTolerance) tt.bytes[slot] = std::move(halo);
    }
    // On a grid of the program's own layout, sizes that are the same per point of the block's face at every n are
    // that: on a coarse grid (a grain) a face is grain / p points along each other side but one plane where a side
    // has more processes than points (16, 8, 8, 8 bytes at 4 to 32 ranks, not 16/dims3(n)[2], which gives 4 at 64);
    // on the grid an application cuts for its box, the global face over the processes of the face. A coarse grid's
    // face may carry ghost layers along its other sides (a code that exchanges its dimensions one after the other
    // sends the ghost rows the earlier ones filled): the fewest that make the size per point the same at every n
    // (3 x 3 points of a 1-point block with two ghost layers each way).
    if (axis && (gm.pattern.cases[c].program.layout.grain > 0 || gm.pattern.cases[c].program.layout.boxed())) {
      const Program& p = gm.pattern.cases[c].program;
      for (const std::array<int, 2>& margins : ghost_margins(p.layout.grain > 0 ? kMaxGhostLayers : 0)) {
        std::map<std::int64_t, double> per_point;
        for (const auto& [n, b] : first) per_point[n] = b / face_points(p.frame, p.layout, n, *axis, margins);
        RegressionLaw law = fit_regression(samples_of(per_point),
                                           RegressionOptions{.allow_power = false, .allow_linear_inverse = false});
        if (law.max_rel_error <= kSizeTolerance) {
          tt.bytes[slot] = std::move(law);
          tt.face_axis[slot] = static_cast<int>(*axis);
          tt.face_margins[slot] = margins;
          break;
        }
      }
    }
    if (!measured && factor == 1 && tt.face_axis[slot] < 0 &&
        (tt.bytes[slot].max_rel_error > kSizeTolerance || tt.rank_spread[slot] > 0)) {
      wanting[key] = std::move(a.samples);
    }
    const auto most = std::max_element(a.tags.begin(), a.tags.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
    tt.tag[slot] = most->first;
    tt.tag_varies[slot] = a.tags.size() > 1;
  }
  return wanting;
}

/// Sizes no law in n reproduces, or that differ from rank to rank or step to step, as the blocks of data each rank
/// holds (block.hpp), where the application splits a side of its grid unevenly. All the messages of a phase are of
/// one application's grid: where the runs leave several laws open for one slot (a trimmed block of 36 points over 5
/// is a block of 34), the extent and trims the phase's other laws show most come first.
void fit_block_laws(std::vector<GroupModel>& groups, const std::vector<BlockSamples>& wanting) {
  std::map<BlockGrid, std::size_t> seen;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& [key, samples] : wanting[g]) {
      const auto [c, t, s] = key;
      const Program& p = groups[g].pattern.cases[c].program;
      std::optional<BlockLaw>& law = groups[g].traits[c][t].block[static_cast<std::size_t>(s)];
      law = fit_block_law(samples, p.frame, p.layout);
      if (law) {
        for (const BlockGrid& grid : block_grids(*law)) seen[grid] += samples.size();
      }
    }
  }
  std::vector<std::pair<std::size_t, BlockGrid>> ranked;
  for (const auto& [grid, count] : seen) ranked.emplace_back(count, grid);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<BlockGrid> prefer;
  for (const auto& [count, grid] : ranked) prefer.push_back(grid);
  if (prefer.size() < 2) return;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& [key, samples] : wanting[g]) {
      const auto [c, t, s] = key;
      const Program& p = groups[g].pattern.cases[c].program;
      std::optional<BlockLaw>& law = groups[g].traits[c][t].block[static_cast<std::size_t>(s)];
      if (law && block_grids(*law).front() == prefer.front()) continue;
      if (std::optional<BlockLaw> better = fit_block_law(samples, p.frame, p.layout, prefer, true)) law = better;
    }
  }
}

/// What every rank did in group g in each run, for a group no law reproduces: its calls' peers (with_peers),
/// or only how many calls it made.
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

/// The note's end for a group kept as measured.
std::string kept_as_measured(const MeasuredCalls& m) {
  return "kept as measured at n = " + m.fitted_n() +
         " (exact there; at any other n the nearest fitted run's calls, not extrapolated: approximate)";
}

/// Index of an event's call within the rank's shape: (shape position, call index in the group).
std::map<std::size_t, std::pair<std::size_t, std::size_t>> event_positions(const RankData& d) {
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> out;
  for (std::size_t g = 0; g < d.at.size(); ++g) {
    if (d.at[g] == nullptr) continue;
    for (std::size_t k = 0; k < d.at[g]->calls.size(); ++k) out[d.at[g]->calls[k].event] = {g, k};
  }
  return out;
}

/// The requests each completion call completes, as references to the groups, cases and terms that started
/// them (a reference covers every request of its term: which ones exist is the pattern's business).
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

/// The communicator of a point-to-point group's messages: learnt from the communicator each rank's calls use
/// (world when no message says, or when the communicators follow no law, which is noted).
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

/// What the ranks of all runs did in one collective call of a group.
struct CollectiveSamples {
  using Means = std::map<std::int64_t, std::pair<double, int>>;  ///< n -> (sum, count)
  mpi::Collective op = mpi::Collective::Unknown;
  std::vector<detail::CommObservation> comms;
  std::map<std::int64_t, double> root_rank;  ///< n -> the root as a rank of the communicator
  bool rooted = false;
  bool root_consistent = true;
  Means bytes_root, bytes_other, received_root, received_other;
  std::map<std::int64_t, double> comm_size;  ///< per n: the members of the communicator (of the last rank seen)

  void add(const RankData& d, const analyzer::SigAction& a) {
    op = a.collective;
    comms.push_back(detail::observe_comm(*d.signature, d.n, d.r, a.comm, a.comm_size));
    const std::vector<std::int64_t>& members = comms.back().members;
    comm_size[d.n] = static_cast<double>(std::max<std::size_t>(members.size(), 1));
    const bool is_root = a.root >= 0 && a.root == d.r;
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
    ce.bytes_root = samples.size_law(samples.bytes_root, samples.bytes_other, options, ce.per_member[0]);
    ce.bytes_other = samples.size_law(samples.bytes_other, samples.bytes_root, options, ce.per_member[1]);
    ce.received_root = samples.size_law(samples.received_root, samples.received_other, options, ce.per_member[2]);
    ce.received_other = samples.size_law(samples.received_other, samples.received_root, options, ce.per_member[3]);
    gm.collectives.push_back(std::move(ce));
  }
}

/// A rank's calls of one phase with the burst positions each may stand for (detail::call_candidates).
struct RankPositions {
  std::vector<std::uint32_t> cases;  ///< the rank's pattern case per group
  std::vector<const Call*> calls;    ///< group by group
  std::vector<std::vector<detail::BurstKey>> candidates;
};

RankPositions rank_positions(const RankData& d, const PhaseModel& pm) {
  const std::vector<GroupModel>& groups = pm.groups;
  RankPositions out;
  out.cases.assign(groups.size(), 0);
  std::vector<detail::BurstKey> own;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const RankGroup* rg = d.at[g];
    const auto group = static_cast<std::int32_t>(g);
    if (groups[g].role == Role::PointToPoint) {
      std::size_t which = 0;
      const std::vector<Entry> entries = groups[g].entries(d.r, d.n, &which);
      out.cases[g] = static_cast<std::uint32_t>(which);
      if (rg == nullptr) continue;
      for (std::size_t k = 0; k < rg->calls.size() && k < entries.size(); ++k) {
        own.push_back({group, out.cases[g], entries[k].term});
        out.calls.push_back(&rg->calls[k]);
      }
    } else if (rg != nullptr) {
      for (std::size_t k = 0; k < rg->calls.size(); ++k) {
        // A loop's calls: one burst position, whatever their number.
        own.push_back({group, 0, pm.in_loop(g) ? 0 : static_cast<std::uint32_t>(k)});
        out.calls.push_back(&rg->calls[k]);
      }
    }
  }
  out.candidates = detail::rank_candidates(pm, own, out.cases);
  return out;
}

/// Per run (n) and pattern cases (the work class a rank is in, but for splits by work), the time per rank at each
/// position of the calls that stand for nothing but their own: what the class computes there, as its time law at
/// a position is per rank (every call at it summed), for the calls that follow skipped ones to choose between.
using ClassKey = std::pair<std::int64_t, std::vector<std::uint32_t>>;
using PositionTimes = std::map<ClassKey, std::map<detail::BurstKey, double>>;

PositionTimes position_times(const std::vector<RankData>& ranks, const std::vector<RankPositions>& positions) {
  PositionTimes sums;
  std::map<ClassKey, double> members;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankPositions& p = positions[i];
    const ClassKey cls{ranks[i].n, p.cases};
    members[cls] += 1;
    std::map<detail::BurstKey, double>& at = sums[cls];
    for (std::size_t k = 0; k < p.calls.size(); ++k) {
      if (p.candidates[k].size() == 1) at[p.candidates[k].front()] += p.calls[k]->burst_ns;
    }
  }
  for (auto& [cls, at] : sums) {
    for (auto& [key, t] : at) t /= members.at(cls);
  }
  return sums;
}

/// Burst work of one rank by burst position, with its work class.
detail::RankWork rank_work(const RankData& d, const RankPositions& p, const std::map<detail::BurstKey, double>& times) {
  detail::RankWork w;
  w.n = d.n;
  w.r = d.r;
  w.cases = p.cases;
  const auto time_at = [&](const detail::BurstKey& key) {
    const auto it = times.find(key);
    return it == times.end() ? 0.0 : it->second;
  };
  std::size_t first = SIZE_MAX;  // the rank's first call in the phase
  detail::BurstKey first_key;
  for (std::size_t k = 0; k < p.calls.size(); ++k) {
    const detail::BurstKey key = detail::stands_for(p.candidates[k], time_at);
    w.work[key] += p.calls[k]->burst_work;
    w.time[key] += p.calls[k]->burst_ns;
    if (p.calls[k]->event < first) {
      first = p.calls[k]->event;
      first_key = key;
    }
  }
  // A trailing phase's tail is the computation before its next instance's first call: it goes with that call,
  // so that the burst positions mean the same in every run (the analyzer's leading/trailing choice can differ
  // between runs of one application).
  if (d.rank->tail_work.n != 0) {
    w.work[first_key] += d.rank->tail_work.mean;
    w.time[first_key] += d.rank->tail_ns.mean;
  }
  return w;
}

/// A phase's ranks cut into the groups of one shape, with the groups' models.
struct Shaped {
  std::vector<RankData> ranks;
  std::vector<GroupModel> groups;
  std::vector<PhaseLoop> loops;
  std::vector<std::string> notes;
  /// Per completion group whose number of calls follows no law: the note, unless one call per request holds.
  std::map<std::size_t, std::string> completion_notes;
  /// How good the shape is for modelling: point-to-point groups left unmodelled, then pattern cases in all,
  /// then the patterns' description length, then groups (fewer and shorter is better).
  [[nodiscard]] std::tuple<std::size_t, std::size_t, int, std::size_t> cost() const {
    std::size_t failed = 0;
    std::size_t cases = 0;
    int length = 0;
    for (const GroupModel& g : groups) {
      if (g.role != Role::PointToPoint) continue;
      failed += g.pattern.cases.empty() ? 1 : 0;
      cases += g.pattern.cases.size();
      for (const Pattern::Case& c : g.pattern.cases) length += description_length(c.program);
    }
    return {failed, cases, length, groups.size()};
  }
  /// Whether every point-to-point group is one case whose peers are constant offsets: nothing aligns better.
  [[nodiscard]] bool constant_offsets() const {
    for (const GroupModel& g : groups) {
      if (g.role != Role::PointToPoint) continue;
      if (g.pattern.cases.size() != 1 || !constant_in_n(g.pattern.cases.front().program)) return false;
    }
    return true;
  }
};

/// Sets each point-to-point call's label in `frame` (Alignment::Label): its first peer's stable label, without
/// signs (on a side of 2 the sign is not known; the dimension and the distance are).
void label_calls(RankData& d, Frame frame) {
  std::vector<std::int64_t> peers;
  for (const RankGroup& g : d.groups) {
    for (const Call& c : g.calls) {
      const std::int64_t first = c.peers[0] >= 0 ? c.peers[0] : c.peers[1];
      peers.push_back(g.role == Role::PointToPoint ? first : -1);
    }
  }
  const std::vector<std::optional<Label>> labels = stable_labels(frame, d.r, d.n, peers);
  // A code that exchanges along every side talks to itself along a side of 1: that call is the step along it (the
  // last such side, where MPI_Dims_create puts them), to align with the same exchange at n where the side is longer.
  Label self{0, 0, 0};
  if (frame_dims(frame) >= 2) {
    const std::vector<int> sides = grid_sides(frame, d.n);
    for (std::size_t dim = sides.size(); dim-- > 0;) {
      if (sides[dim] == 1) {
        self[dim] = 1;
        break;
      }
    }
  }
  std::size_t k = 0;
  for (RankGroup& g : d.groups) {
    for (Call& c : g.calls) {
      const std::optional<Label>& l = labels[k];
      c.label = l ? Label{std::abs((*l)[0]), std::abs((*l)[1]), std::abs((*l)[2])} : Label{0, 0, 0};
      if (peers[k++] == d.r && c.label == Label{0, 0, 0}) c.label = self;
    }
  }
}

/// Whether rank d makes the same calls to the same peers in each of `times` iterations of group g.
bool repeats_calls(const RankData& d, std::size_t g, std::int64_t times) {
  if (d.at[g] == nullptr) return true;
  const std::vector<Call>& calls = d.at[g]->calls;
  if (times < 1 || calls.size() % static_cast<std::size_t>(times) != 0) return false;
  const std::size_t each = calls.size() / static_cast<std::size_t>(times);
  for (std::size_t k = each; k < calls.size(); ++k) {
    if (calls[k].peers != calls[k % each].peers) return false;
  }
  return true;
}

/// Per group of the shape, the iterations of the loop it is in where that loop's iterations each make the same
/// calls to the same peers at every rank (GroupModel::iterations): the loop's count is the iterations its ranks made
/// at each n where they folded it, an exact law in n that also splits the calls of the runs where none did (one
/// plane per call at 2 ranks, a grid of one column). nullopt elsewhere: a loop whose peers change from one iteration
/// to the next is a repetition its patterns count.
std::vector<std::optional<ExactLaw>> fixed_loops(const detail::Shape& shape, const std::vector<RankData>& ranks,
                                                 const WholeAt& whole) {
  std::vector<std::optional<ExactLaw>> out(shape.groups.size());
  for (std::size_t k = 0; k < shape.loops.size(); ++k) {
    const PhaseLoop& loop = shape.loops[k];
    std::map<std::int64_t, std::set<std::uint32_t>> seen;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const std::uint32_t it = shape.loop_iterations[k][i];
      if (it != 0) seen[ranks[i].n].insert(it);
    }
    std::map<std::int64_t, double> by_n;
    for (const auto& [n, its] : seen) {
      if (its.size() == 1 && *its.begin() != detail::kNoIterations) by_n[n] = *its.begin();
    }
    if (by_n.empty() || by_n.size() != seen.size()) continue;
    WholeAt whole_count = whole;
    whole_count.non_negative = true;
    const std::optional<ExactLaw> law = fit_exact(samples_of(by_n), whole_count);
    if (!law) continue;
    const bool repeats = std::all_of(ranks.begin(), ranks.end(), [&](const RankData& d) {
      const std::optional<std::int64_t> times = law->integer_at(d.n);
      if (!times || *times < 1) return false;
      for (std::size_t g = loop.first; g < loop.first + loop.groups; ++g) {
        if (!repeats_calls(d, g, *times)) return false;
      }
      return true;
    });
    if (!repeats) continue;
    for (std::size_t g = loop.first; g < loop.first + loop.groups; ++g) out[g] = law;
  }
  return out;
}

/// The phase's shape with the calls aligned as `alignment` says (on their labels in `frame` for
/// Alignment::Label), each rank's loops folded first when `fold` is set (detail::fold_loops()); nullopt, before any
/// law is learnt, where it has more point-to-point groups than `most_cases`: every such group is a pattern case at
/// least, so that shape cannot model the phase with fewer cases than a shape found already. nullopt too where the
/// alignment split a rank's step of a folded loop among groups (detail::Shape::steps_split): the loop's groups would
/// not hold one call per iteration, and a prediction would pair one iteration's receive with another's send.
std::optional<Shaped> shape_phase(std::span<const Run> runs, const RelatedPhase& rel, std::span<const PhaseBox> boxes,
                                  detail::Alignment alignment, const FitOptions& options, Frame frame, bool fold,
                                  const detail::FoldRules& rules, std::size_t most_cases) {
  Shaped out;
  const WholeAt whole{options.evaluate_at};
  std::vector<RankData>& ranks = out.ranks;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const analyzer::SigPhase& p = runs[k].signature.phases[rel.ids[k]];
    for (const analyzer::SigRank& r : p.ranks) {
      if (r.thread != 0) continue;
      std::vector<RankGroup> groups = detail::rank_groups(r);
      if (fold) groups = detail::fold_loops(std::move(groups), rules);
      ranks.push_back({runs[k].n(), r.rank, &runs[k].signature, &r, std::move(groups), {}});
      if (alignment == detail::Alignment::Label) label_calls(ranks.back(), frame);
    }
  }
  std::vector<const std::vector<RankGroup>*> seqs;
  std::vector<std::int64_t> runs_of;
  for (const RankData& d : ranks) {
    seqs.push_back(&d.groups);
    runs_of.push_back(d.n);
  }
  detail::Shape shape = detail::merge_shapes(seqs, alignment, runs_of);
  const auto p2p = static_cast<std::size_t>(std::count_if(
      shape.groups.begin(), shape.groups.end(), [](const auto& g) { return g.second == Role::PointToPoint; }));
  if (p2p > most_cases || shape.steps_split) return std::nullopt;
  out.loops = shape.loops;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].groups = std::move(shape.ranks[i]);
    ranks[i].at.assign(shape.groups.size(), nullptr);
    for (std::size_t g = 0; g < ranks[i].groups.size(); ++g) {
      if (!ranks[i].groups[g].calls.empty()) ranks[i].at[g] = &ranks[i].groups[g];
    }
  }
  const std::vector<std::optional<ExactLaw>> iterations = fixed_loops(shape, ranks, whole);
  const std::vector<LearntPeers> peers = learn_phase_peers(ranks, shape, iterations, boxes, options.search, whole);
  for (std::size_t g = 0; g < shape.groups.size(); ++g) {
    GroupModel gm;
    gm.function = shape.groups[g].first.function;
    gm.call = shape.groups[g].first.call;
    gm.role = shape.groups[g].second;
    gm.iterations = iterations[g];
    const std::string where = "group " + std::to_string(g) + " (" + gm.call + ")";
    if (gm.role == Role::PointToPoint) {
      const analyzer::SigEvent& example = first_call(ranks, g);
      gm.slot_kinds = detail::slot_kinds(example);
      gm.slots = gm.slot_kinds[1] ? 2 : 1;
      gm.starts_requests = detail::starts_requests(example);
      const std::string& why = peers[g].why;
      if (peers[g].pattern) {
        gm.pattern = *peers[g].pattern;
      } else {
        gm.measured = measure(ranks, g, true, gm.iterations);
        out.notes.push_back(where + ": peers not modelled: " + why + "; " + kept_as_measured(gm.measured));
      }
      (void)fit_traits(gm, ranks, g);  // block laws are searched for the shape chosen only
      fit_p2p_comm(gm, ranks, g, whole, out.notes);
    } else {
      std::string why;
      if (std::optional<ExactLaw> c = count_law(ranks, g, whole, why)) {
        gm.count = *c;
      } else {
        gm.measured = measure(ranks, g, false, std::nullopt);
        std::string note = where + ": " + why + "; " + kept_as_measured(gm.measured);
        if (gm.role == Role::Completion) {
          out.completion_notes[g] = std::move(note);  // unless one call per request holds (fit_completions())
        } else {
          out.notes.push_back(std::move(note));
        }
        gm.count = ExactLaw::constant(Rational::make(0));
      }
    }
    out.groups.push_back(std::move(gm));
  }
  return out;
}

/// Whether some rank of some run repeats a loop body in the phase, its steps' tags as `tags` says
/// (detail::fold_loops() folds something).
bool has_loops(std::span<const Run> runs, const RelatedPhase& rel, detail::LoopTags tags) {
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      const std::vector<RankGroup> groups = detail::rank_groups(r);
      if (detail::fold_loops(groups, {true, tags, nullptr}).size() != groups.size()) return true;
    }
  }
  return false;
}

/// The loops of the same exchanges (detail::exchange_bodies()) that ranks of two process counts at least repeat,
/// by the functions their bodies call: a body that repeats at one count only is as likely a sequence that happens
/// to repeat there (a rank of a grid of one column makes the exchanges of both its ends, one after the other).
std::set<detail::BodyKey> repeated_exchanges(std::span<const Run> runs, const RelatedPhase& rel) {
  std::map<detail::BodyKey, std::set<std::int64_t>> seen;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      if (r.thread != 0) continue;
      for (const detail::BodyKey& key : detail::exchange_bodies(detail::rank_groups(r))) seen[key].insert(runs[k].n());
    }
  }
  std::set<detail::BodyKey> out;
  for (const auto& [key, ns] : seen) {
    if (ns.size() >= 2) out.insert(key);
  }
  return out;
}

/// A phase's model and what its fit saw.
struct PhaseFit {
  PhaseModel model;
  PhaseReport report;
};

/// The most calls of one rank in one instance whose ranks the modeler aligns: an alignment costs the product of two
/// ranks' calls in time and memory (4096 x 4096 cells, 128 MiB), and is made for every rank of every run.
constexpr std::uint64_t kMostAlignedCalls = 4096;

/// The most calls a rank makes in one instance of the phase, over the runs.
std::uint64_t longest_instance(std::span<const Run> runs, const RelatedPhase& rel) {
  std::uint64_t most = 0;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      most = std::max<std::uint64_t>(most, r.events.size());
    }
  }
  return most;
}

/// A phase too long to align, kept as measured: its work and time per rank and instance, as one burst each rank
/// makes (the phase's tail), learnt as any phase's work is; no groups. Its weight is learnt already.
void kept_as_work(std::span<const Run> runs, const RelatedPhase& rel,
                  const std::map<std::int64_t, std::int64_t>& weight_by_n, std::uint64_t longest, PhaseFit& out) {
  std::vector<detail::RankWork> work;
  const detail::BurstKey tail{-1, 0, 0};
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      if (r.thread != 0) continue;
      detail::RankWork& w = work.emplace_back(detail::RankWork{runs[k].n(), r.rank, {}, {}, {}});
      double& units = w.work[tail];
      double& ns = w.time[tail];
      for (const analyzer::SigEvent& e : r.events) {
        units += e.burst_work.mean;
        ns += e.burst_ns.mean;
      }
      units += r.tail_work.mean;
      ns += r.tail_ns.mean;
    }
  }
  detail::LearntWork learnt = detail::learn_work(work, weight_by_n);
  out.model.work = std::move(learnt.classes);
  out.model.calls_left_out = longest;
  out.report.measured = std::move(learnt.measured);
  out.report.laws = law_fits(out.model);
  out.report.notes.push_back("an instance holds up to " + std::to_string(longest) +
                             " calls on one rank, more than the " + std::to_string(kMostAlignedCalls) +
                             " whose ranks the model aligns (no loop folds them: analyze the runs with "
                             "--phase-level outermost-loops, or fewer iterations per instance); kept as measured: "
                             "its work and time per rank, its calls left out of predictions");
}

/// The phase's weight: an exact law of its instances in n where one reproduces the runs, else a rounded regression.
/// Returns the instances per fitted n.
std::map<std::int64_t, std::int64_t> fit_weight(std::span<const Run> runs, const RelatedPhase& rel,
                                                const WholeAt& whole, PhaseModel& pm, PhaseReport& pr) {
  std::map<std::int64_t, double> weights;
  std::map<std::int64_t, std::int64_t> weight_by_n;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto w = static_cast<std::int64_t>(runs[k].signature.phases[rel.ids[k]].weight);
    weights[runs[k].n()] = static_cast<double>(w);
    weight_by_n[runs[k].n()] = w;
  }
  if (std::optional<ExactLaw> w = fit_exact(samples_of(weights), whole)) {
    pm.weight = *w;
  } else {
    pm.weight_exact = false;
    pm.weight_fit = fit_regression(samples_of(weights));
    pr.notes.push_back("the weight follows no exact law in n; fitted " + pm.weight_fit.to_string() + " (rounded)");
  }
  return weight_by_n;
}

/// The phase's shape (its calls merged into groups) that models best, with each rank's groups.
Shaped best_shape(std::span<const Run> runs, const RelatedPhase& rel, const FitOptions& options) {
  // The shape: the alignment (function only, or also the peers' direction and step) that models best. Where
  // these leave laws in n that a grid's constant offsets might explain, the calls are also aligned on their
  // peers' labels in each grid frame: a code that skips the directions along a side of 1 (at 2 and 4 ranks) makes its
  // first exchange along z there and along x at 8, and only the label tells them apart. Where ranks repeat steps of a
  // loop, each rank's loops are folded (a recursive halving whose number of steps grows with n is then one repetition
  // per call of its body) and the plain alignments are tried again: the cheaper shape wins (at 4, 8, 16 a row's 1, 2, 2
  // halving steps are also a torus's constant neighbours, two pattern cases where the loop needs one).
  std::optional<Shaped> best;
  const std::vector<PhaseBox> boxes = phase_boxes(runs, rel);
  // A loop may number its iterations in its tags (tag = the loop counter) or tag them all alike; the loops of a
  // phase are folded either way, and the cheaper shape wins. Where a loop of counted tags has one iteration, the
  // exchange after it with the same tag (a transpose after a halving of one step, tags 1 and 1) is no second
  // iteration, which only the counter's rule, seen stepping at larger n, tells.
  std::vector<detail::LoopTags> loop_tags;
  for (const detail::LoopTags tags : {detail::LoopTags::Equal, detail::LoopTags::Counter}) {
    if (has_loops(runs, rel, tags)) loop_tags.push_back(tags);
  }
  const bool loops = !loop_tags.empty();
  // Where some loop of the same exchanges repeats at several counts, no rank folds single calls over such loops.
  const std::set<detail::BodyKey> exchanges = loops ? repeated_exchanges(runs, rel) : std::set<detail::BodyKey>{};
  const auto consider = [&](detail::Alignment a, Frame f, std::optional<detail::LoopTags> fold) {
    const std::size_t most_cases =
        best && std::get<0>(best->cost()) == 0 ? std::get<1>(best->cost()) : std::numeric_limits<std::size_t>::max();
    const detail::FoldRules rules{exchanges.empty(), fold.value_or(detail::LoopTags::Equal), &exchanges};
    std::optional<Shaped> s = shape_phase(runs, rel, boxes, a, options, f, fold.has_value(), rules, most_cases);
    if (s && (!best || s->cost() < best->cost())) best = std::move(s);
  };
  const auto perfect = [&best] {
    return best && std::get<0>(best->cost()) == 0 && std::get<1>(best->cost()) <= best->groups.size() &&
           best->constant_offsets();
  };
  // Where ranks repeat a loop body, the folded shapes come first: one whose every group is a single case of constant
  // offsets is as brief as the phase can be written, and the unfolded alignments (a wavefront's 31 planes are 124
  // groups) are not tried.
  for (const detail::LoopTags tags : loop_tags) {
    for (const detail::Alignment a :
         {detail::Alignment::Direction, detail::Alignment::Step, detail::Alignment::Function}) {
      consider(a, Frame::Offset, tags);
      if (perfect()) break;
    }
    if (perfect()) break;
  }
  if (!loops || !perfect()) {
    for (const detail::Alignment a : {detail::Alignment::Function, detail::Alignment::Direction,
                                      detail::Alignment::Step, detail::Alignment::Tag, detail::Alignment::TagRuns}) {
      consider(a, Frame::Offset, std::nullopt);
      if (perfect()) break;
    }
    if (!best->constant_offsets()) {
      for (const Frame f : {Frame::Grid2, Frame::Torus2, Frame::Grid2C, Frame::Torus2C, Frame::Grid3, Frame::Torus3,
                            Frame::Grid3C, Frame::Torus3C}) {
        consider(detail::Alignment::Label, f, std::nullopt);
        if (best->constant_offsets()) break;
      }
    }
  }
  return std::move(*best);
}

/// The laws of each group of the shape: sizes and communicators of point-to-point groups, collectives, completions.
void fit_groups(PhaseModel& pm, PhaseReport& pr, const Shaped& shaped, const WholeAt& whole) {
  const std::vector<RankData>& ranks = shaped.ranks;
  std::vector<BlockSamples> wanting(pm.groups.size());
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    if (pm.groups[g].role == Role::PointToPoint) wanting[g] = fit_traits(pm.groups[g], ranks, g);
  }
  fit_block_laws(pm.groups, wanting);
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    if (pm.groups[g].role == Role::Collective) fit_collectives(pm.groups[g], pr.notes, ranks, g, whole);
    if (pm.groups[g].role != Role::Completion) continue;
    fit_completions(pm.groups[g], ranks, g, pm.groups);
    const auto note = shaped.completion_notes.find(g);
    if (note != shaped.completion_notes.end() && !pm.groups[g].measured.empty()) pr.notes.push_back(note->second);
  }
}

/// The work of the phase's bursts per class of ranks (the method's SCIC).
void fit_work(PhaseModel& pm, PhaseReport& pr, const std::vector<RankData>& ranks,
              const std::map<std::int64_t, std::int64_t>& weight_by_n) {
  std::vector<RankPositions> positions;
  for (const RankData& d : ranks) positions.push_back(rank_positions(d, pm));
  const PositionTimes times = position_times(ranks, positions);
  std::vector<detail::RankWork> work;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    work.push_back(rank_work(ranks[i], positions[i], times.at({ranks[i].n, positions[i].cases})));
  }
  detail::LearntWork learnt = detail::learn_work(work, weight_by_n);
  pm.work = std::move(learnt.classes);
  pr.measured = std::move(learnt.measured);
}

/// How many calls each rank of each run made in each group.
std::vector<detail::RankCalls> rank_calls(const std::vector<RankData>& ranks, std::size_t groups) {
  std::vector<detail::RankCalls> calls;
  for (const RankData& d : ranks) {
    detail::RankCalls& c = calls.emplace_back(detail::RankCalls{d.n, std::vector<std::size_t>(groups, 0)});
    for (std::size_t g = 0; g < groups; ++g) c.calls[g] = d.at[g] != nullptr ? d.at[g]->calls.size() : 0;
  }
  return calls;
}

/// A phase's model: weight, shape, groups, grid, work (or its work alone where an instance holds more calls than are
/// aligned), and the fit's report on it.
PhaseFit model_phase(std::span<const Run> runs, const RelatedPhase& rel, std::uint32_t id, const FitOptions& options) {
  PhaseFit out;
  const WholeAt whole{options.evaluate_at};
  PhaseModel& pm = out.model;
  PhaseReport& pr = out.report;
  pm.id = pr.id = id;
  pm.calls = pr.calls = rel.calls;
  pr.total_work_spread = rel.total_work_spread();
  for (std::size_t k = 0; k < runs.size(); ++k) {
    pm.relevant = pm.relevant || runs[k].signature.phases[rel.ids[k]].relevant;
  }
  pr.relevant = pm.relevant;
  pr.share = runs.back().signature.phases[rel.ids.back()].share;
  const std::map<std::int64_t, std::int64_t> weight_by_n = fit_weight(runs, rel, whole, pm, pr);
  const std::uint64_t longest = longest_instance(runs, rel);
  if (longest > kMostAlignedCalls) {
    kept_as_work(runs, rel, weight_by_n, longest, out);
    return out;
  }
  Shaped shaped = best_shape(runs, rel, options);
  pm.groups = std::move(shaped.groups);
  pm.loops = std::move(shaped.loops);
  std::vector<std::int64_t> fitted_n;
  for (const Run& run : runs) fitted_n.push_back(run.n());
  detail::orient_steps(pm.groups, fitted_n);
  detail::meet_steps(pm.groups, fitted_n);
  pr.notes.insert(pr.notes.end(), shaped.notes.begin(), shaped.notes.end());
  fit_groups(pm, pr, shaped, whole);
  pm.grid_seen = detail::grid_seen(pm.groups, rank_calls(shaped.ranks, pm.groups.size()), fitted_n);
  fit_work(pm, pr, shaped.ranks, weight_by_n);
  const std::vector<std::string> extended = detail::extend_along_shorter_sides(pm, fitted_n);
  if (!extended.empty()) {
    // Steps that paired across exchanges where one was cut short now pair within them.
    detail::orient_steps(pm.groups, fitted_n);
    detail::meet_steps(pm.groups, fitted_n);
    pr.notes.insert(pr.notes.end(), extended.begin(), extended.end());
  }
  pr.laws = law_fits(pm);
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    if (!pm.groups[g].measured.empty()) pr.approximate_groups.push_back(static_cast<std::uint32_t>(g));
  }
  return out;
}

/// What the model leaves out: its threads, and the phases whose counts it takes from the largest run's order.
ModelLimits limits_of(const Model& m, std::span<const Run> runs) {
  ModelLimits l;
  l.order_from_n = runs.back().n();
  // The calls each run made, instances times calls per instance, and those of other threads than the first.
  for (const Run& run : runs) {
    double all = 0;
    double others = 0;
    for (const analyzer::SigPhase& p : run.signature.phases) {
      for (const analyzer::SigRank& r : p.ranks) {
        const double calls = static_cast<double>(p.weight) * static_cast<double>(r.events.size());
        all += calls;
        if (r.thread != 0) others += calls;
      }
    }
    if (all > 0) l.other_threads_share = std::max(l.other_threads_share, others / all);
  }
  std::map<std::uint32_t, int> stretches;
  for (const analyzer::PhaseRunEntry& e : m.order) ++stretches[e.phase];
  for (const auto& [phase, count] : stretches) {
    if (count > 1) l.fixed_count_phases.push_back(phase);
  }
  return l;
}

}  // namespace

bool PhaseModel::in_loop(std::size_t g) const {
  return std::any_of(loops.begin(), loops.end(),
                     [g](const PhaseLoop& l) { return g >= l.first && g - l.first < l.groups; });
}

std::int64_t PhaseModel::weight_at(std::int64_t n) const {
  if (weight_exact) return count_value(weight, n);
  return std::max<std::int64_t>(0, std::llround(weight_fit.value_at(static_cast<double>(n))));
}

Fit fit_model(std::span<const Run> runs, const FitOptions& options) {
  Fit fit;
  Model& m = fit.model;
  FitReport& report = fit.report;
  m.options = options;
  m.tool = report.tool = std::string("p3s ") + p3s::kVersion;
  m.date = report.date = utc_now();
  m.work_metric = runs.front().signature.work_metric;
  m.application = application_command(runs.front().signature.command);
  m.mpi_library = series_mpi_library(runs);
  m.dims_rule = dims_rule_of_library(m.mpi_library).value_or(DimsRule::OpenMpi);
  const ScopedDimsRule rule(m.dims_rule);
  for (const Run& r : runs) {
    m.inputs.push_back({std::filesystem::absolute(r.path).string(), r.n(), r.signature.command, r.signature.date});
    report.fitted_on.push_back(r.n());
  }
  const PhaseRelation rel = relate_phases(runs);
  report.unrelated = rel.unrelated;
  std::map<std::uint32_t, std::uint32_t> last_run_id;  // the largest run's phase id -> model phase id
  for (std::size_t p = 0; p < rel.phases.size(); ++p) {
    PhaseFit phase = model_phase(runs, rel.phases[p], static_cast<std::uint32_t>(p), options);
    m.phases.push_back(std::move(phase.model));
    report.phases.push_back(std::move(phase.report));
    last_run_id[rel.phases[p].ids.back()] = static_cast<std::uint32_t>(p);
  }
  for (const analyzer::PhaseRunEntry& e : runs.back().signature.order) {
    const auto it = last_run_id.find(e.phase);
    if (it != last_run_id.end()) m.order.push_back({it->second, e.count});
  }
  m.limits = limits_of(m, runs);
  return fit;
}

namespace {

/// The fit, calibrated with the far point when one is given.
Fit calibrated(Fit fit, const ModelOptions& options) {
  if (!options.far_point) return fit;
  const std::vector<Run> far = load_runs(std::span(&*options.far_point, 1), 1);
  calibrate_with_far_point(fit, far.front());
  return fit;
}

Fit fitted_and_validated(std::span<const std::filesystem::path> signatures, const ModelOptions& options);

}  // namespace

Fit build_model(std::span<const std::filesystem::path> signatures, const ModelOptions& options) {
  return calibrated(fitted_and_validated(signatures, options), options);
}

namespace {

Fit fitted_and_validated(std::span<const std::filesystem::path> signatures, const ModelOptions& options) {
  const std::vector<Run> runs = load_runs(signatures, 3);
  // The model compared with a run is evaluated at that run's n: its laws should be whole numbers there.
  const auto validating = [&options](std::int64_t n) {
    FitOptions o = options.fit;
    o.evaluate_at.push_back(n);
    return o;
  };
  if (options.validate_with) {
    const std::vector<Run> held = load_runs(std::span(&*options.validate_with, 1), 1);
    Fit fit = fit_model(runs, validating(held.front().n()));
    fit.report.validation = compare_with(fit.model, held.front());
    return fit;
  }
  if (!options.hold_out_largest) return fit_model(runs, options.fit);
  const std::vector<Run> fitted(runs.begin(), runs.end() - 1);
  const Fit first = fit_model(fitted, validating(runs.back().n()));
  Fit fit = fit_model(runs, options.fit);  // the held-out run folded in
  fit.report.validation = compare_with(first.model, runs.back());
  return fit;
}

}  // namespace
}  // namespace p3s::modeler
