// SPDX-License-Identifier: BSD-3-Clause
// A phase's shape: the alignments, frames and loop foldings tried, each shape's groups fitted far enough to compare
// their cost, the cheapest kept.
#include "phase_shape.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "group_fit.hpp"
#include "phase_grid.hpp"

namespace p3s::modeler::detail {
namespace {

/// One rank of one run in the phase, its calls in groups: built once per phase, read by every shape tried.
struct PhaseRank {
  const Run* run = nullptr;
  const analyzer::SigRank* rank = nullptr;
  std::vector<RankGroup> groups;
};

std::vector<PhaseRank> ranks_of(std::span<const Run> runs, const RelatedPhase& rel) {
  std::vector<PhaseRank> out;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      out.push_back({&runs[k], &r, rank_groups(r)});
    }
  }
  return out;
}

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
std::vector<std::optional<ExactLaw>> fixed_loops(const Shape& shape, const std::vector<RankData>& ranks,
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
      if (its.size() == 1 && *its.begin() != kNoIterations) by_n[n] = *its.begin();
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
/// Alignment::Label), each rank's loops folded first when `fold` is set (fold_loops()); nullopt, before any
/// law is learnt, where it has more point-to-point groups than `most_cases`: every such group is a pattern case at
/// least, so that shape cannot model the phase with fewer cases than a shape found already. nullopt too where the
/// alignment split a rank's step of a folded loop among groups (Shape::steps_split): the loop's groups would
/// not hold one call per iteration, and a prediction would pair one iteration's receive with another's send.
std::optional<Shaped> shape_phase(const std::vector<PhaseRank>& phase_ranks, std::span<const PhaseBox> boxes,
                                  Alignment alignment, const FitOptions& options, Frame frame, bool fold,
                                  const FoldRules& rules, std::size_t most_cases) {
  Shaped out;
  const WholeAt whole{options.evaluate_at};
  std::vector<RankData>& ranks = out.ranks;
  for (const PhaseRank& pr : phase_ranks) {
    if (pr.rank->thread != 0) continue;
    std::vector<RankGroup> groups = fold ? fold_loops(pr.groups, rules) : pr.groups;
    ranks.push_back({pr.run->n(), pr.rank->rank, &pr.run->signature, pr.rank, std::move(groups), {}});
    if (alignment == Alignment::Label) label_calls(ranks.back(), frame);
  }
  std::vector<const std::vector<RankGroup>*> seqs;
  std::vector<std::int64_t> runs_of;
  for (const RankData& d : ranks) {
    seqs.push_back(&d.groups);
    runs_of.push_back(d.n);
  }
  Shape shape = merge_shapes(seqs, alignment, runs_of);
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
      gm.slot_kinds = slot_kinds(example);
      gm.slots = gm.slot_kinds[1] ? 2 : 1;
      gm.starts_requests = starts_requests(example);
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
/// (fold_loops() folds something).
bool has_loops(const std::vector<PhaseRank>& phase_ranks, LoopTags tags) {
  return std::any_of(phase_ranks.begin(), phase_ranks.end(), [tags](const PhaseRank& pr) {
    return fold_loops(pr.groups, {true, tags, nullptr}).size() != pr.groups.size();
  });
}

/// The loops of the same exchanges (exchange_bodies()) that ranks of two process counts at least repeat,
/// by the functions their bodies call: a body that repeats at one count only is as likely a sequence that happens
/// to repeat there (a rank of a grid of one column makes the exchanges of both its ends, one after the other).
std::set<BodyKey> repeated_exchanges(const std::vector<PhaseRank>& phase_ranks) {
  std::map<BodyKey, std::set<std::int64_t>> seen;
  for (const PhaseRank& pr : phase_ranks) {
    if (pr.rank->thread != 0) continue;
    for (const BodyKey& key : exchange_bodies(pr.groups)) seen[key].insert(pr.run->n());
  }
  std::set<BodyKey> out;
  for (const auto& [key, ns] : seen) {
    if (ns.size() >= 2) out.insert(key);
  }
  return out;
}

}  // namespace

Shaped best_shape(std::span<const Run> runs, const RelatedPhase& rel, const FitOptions& options) {
  // The shape: the alignment (function only, or also the peers' direction and step) that models best. Where
  // these leave laws in n that a grid's constant offsets might explain, the calls are also aligned on their
  // peers' labels in each grid frame: a code that skips the directions along a side of 1 (at 2 and 4 ranks) makes its
  // first exchange along z there and along x at 8, and only the label tells them apart. Where ranks repeat steps of a
  // loop, each rank's loops are folded (a recursive halving whose number of steps grows with n is then one repetition
  // per call of its body) and the plain alignments are tried again: the cheaper shape wins (at 4, 8, 16 a row's 1, 2, 2
  // halving steps are also a torus's constant neighbours, two pattern cases where the loop needs one). Calls are
  // also aligned only within the same kind of exchange (Alignment::TagExchange): where idle ranks of a coarse level
  // make half exchanges at some counts only, call-by-call pairing would fold them into other runs' full ones.
  std::optional<Shaped> best;
  const std::vector<PhaseBox> boxes = phase_boxes(runs, rel);
  const std::vector<PhaseRank> phase_ranks = ranks_of(runs, rel);
  // A loop may number its iterations in its tags (tag = the loop counter) or tag them all alike; the loops of a
  // phase are folded either way, and the cheaper shape wins. Where a loop of counted tags has one iteration, the
  // exchange after it with the same tag (a transpose after a halving of one step, tags 1 and 1) is no second
  // iteration, which only the counter's rule, seen stepping at larger n, tells.
  std::vector<LoopTags> loop_tags;
  for (const LoopTags tags : {LoopTags::Equal, LoopTags::Counter}) {
    if (has_loops(phase_ranks, tags)) loop_tags.push_back(tags);
  }
  const bool loops = !loop_tags.empty();
  // Where some loop of the same exchanges repeats at several counts, no rank folds single calls over such loops.
  const std::set<BodyKey> exchanges = loops ? repeated_exchanges(phase_ranks) : std::set<BodyKey>{};
  const auto consider = [&](Alignment a, Frame f, std::optional<LoopTags> fold) {
    const std::size_t most_cases =
        best && std::get<0>(best->cost()) == 0 ? std::get<1>(best->cost()) : std::numeric_limits<std::size_t>::max();
    const FoldRules rules{exchanges.empty(), fold.value_or(LoopTags::Equal), &exchanges};
    std::optional<Shaped> s = shape_phase(phase_ranks, boxes, a, options, f, fold.has_value(), rules, most_cases);
    if (s && (!best || s->cost() < best->cost())) best = std::move(s);
  };
  const auto perfect = [&best] {
    return best && std::get<0>(best->cost()) == 0 && std::get<1>(best->cost()) <= best->groups.size() &&
           best->constant_offsets();
  };
  // Where ranks repeat a loop body, the folded shapes come first: one whose every group is a single case of constant
  // offsets is as brief as the phase can be written, and the unfolded alignments (a wavefront's 31 planes are 124
  // groups) are not tried.
  for (const LoopTags tags : loop_tags) {
    for (const Alignment a : {Alignment::Direction, Alignment::Step, Alignment::Function}) {
      consider(a, Frame::Offset, tags);
      if (perfect()) break;
    }
    if (perfect()) break;
  }
  if (!loops || !perfect()) {
    for (const Alignment a : {Alignment::Function, Alignment::Direction, Alignment::Step, Alignment::Tag,
                              Alignment::TagRuns, Alignment::TagExchange}) {
      consider(a, Frame::Offset, std::nullopt);
      if (perfect()) break;
    }
    if (!best->constant_offsets()) {
      for (const Frame f : {Frame::Grid2, Frame::Torus2, Frame::Grid2C, Frame::Torus2C, Frame::Grid3, Frame::Torus3,
                            Frame::Grid3C, Frame::Torus3C}) {
        consider(Alignment::Label, f, std::nullopt);
        if (best->constant_offsets()) break;
      }
    }
  }
  return std::move(*best);
}

}  // namespace p3s::modeler::detail
