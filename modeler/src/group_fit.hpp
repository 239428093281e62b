// SPDX-License-Identifier: BSD-3-Clause
// The laws of the groups of a phase's shape: how many calls each rank makes, the calls kept as measured where no law
// holds, the sizes, tags and communicators of point-to-point messages (group_sizes.cpp), collectives, and the requests
// each completion completes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "p3s/modeler/block.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/law.hpp"
#include "p3s/modeler/model.hpp"
#include "rank_data.hpp"

namespace p3s::modeler::detail {

/// Samples of a value per n, for a law in n.
inline std::vector<Sample> samples_of(const std::map<std::int64_t, double>& by_n) {
  std::vector<Sample> s;
  for (const auto& [n, v] : by_n) s.push_back({static_cast<double>(n), v});
  return s;
}

/// Regression options for message sizes in a frame: a grid's own dimensions come first, since sizes on a
/// process grid are the global size over a side (several bases agree on powers of two; they differ elsewhere),
/// and on a 3-D grid over the processes of a face (a block's halo across x is 1 / (p_y p_z) of the global face);
/// a step along one dimension (`axis`) tries the face it crosses before all (at 4, 8, 16 a halo across x is also
/// c/dims3(n)[2], which 32 tells apart). Likewise the sides of the 2^floor(k/2) x 2^ceil(k/2) grid for the frames
/// of power-of-two codes (xor, transpose): at 4, 8, 16 a row's 2, 4, 4 columns are also floor(cbrt(n)) + ....
[[nodiscard]] RegressionOptions volume_fit(Frame frame, std::optional<std::size_t> axis = std::nullopt);

/// A term's slot: (pattern case, term, slot).
using SlotKey = std::tuple<std::size_t, std::uint32_t, int>;
/// The messages of each slot whose sizes follow no law in n: what a block law is fitted to (fit_block_laws()).
using BlockSamples = std::map<SlotKey, std::vector<BlockSample>>;

/// Calls per rank in a group, the same for every rank of a run: an exact law in n.
[[nodiscard]] std::optional<ExactLaw> count_law(const std::vector<RankData>& ranks, std::size_t g, const WholeAt& whole,
                                                std::string& why);

/// What every rank did in group g in each run, for a group no law reproduces: its calls' peers (with_peers),
/// or only how many calls it made.
[[nodiscard]] MeasuredCalls measure(const std::vector<RankData>& ranks, std::size_t g, bool with_peers,
                                    const std::optional<ExactLaw>& iterations);

/// The note's end for a group kept as measured.
[[nodiscard]] std::string kept_as_measured(const MeasuredCalls& m);

/// Mean message size per (case, term, slot) and n, and the ratio between consecutive repetitions. Returns the
/// messages of the slots whose sizes no law in n reproduces, or that differ from rank to rank or step to step.
BlockSamples fit_traits(GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g);

/// Sizes no law in n reproduces, or that differ from rank to rank or step to step, as the blocks of data each rank
/// holds (block.hpp), where the application splits a side of its grid unevenly. All the messages of a phase are of
/// one application's grid: where the runs leave several laws open for one slot (a trimmed block of 36 points over 5
/// is a block of 34), the extent and trims the phase's other laws show most come first.
void fit_block_laws(std::vector<GroupModel>& groups, const std::vector<BlockSamples>& wanting);

/// The communicator of a point-to-point group's messages: learnt from the communicator each rank's calls use
/// (world when no message says, or when the communicators follow no law, which is noted).
void fit_p2p_comm(GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g, const WholeAt& whole,
                  std::vector<std::string>& notes);

/// The laws of each group of the shape: sizes and communicators of point-to-point groups, collectives, completions.
/// `completion_notes`: per completion group whose number of calls follows no law, the note kept unless one call per
/// request holds.
void fit_groups(PhaseModel& pm, PhaseReport& pr, const std::vector<RankData>& ranks,
                const std::map<std::size_t, std::string>& completion_notes, const WholeAt& whole);

}  // namespace p3s::modeler::detail
