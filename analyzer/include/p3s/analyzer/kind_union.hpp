// SPDX-License-Identifier: BSD-3-Clause
// Two kinds of one phase that are one kind with some of its messages empty. An MPI code often makes no call for a
// message it has nothing to put in (no particles near that boundary yet, none left there): the step is the same
// program point, and which of its messages a rank makes is the run's data, changing as the data move. Such kinds
// are one, its calls the union of theirs and each message's size its mean over all their instances, an empty one
// counted as 0 bytes.
#pragma once

#include <cstdint>
#include <optional>

#include "p3s/analyzer/signature.hpp"

namespace p3s::analyzer {

/// `from` merged into `into` as one kind, or nothing where some rank's calls differ by more than messages. On every
/// rank, the calls one kind makes and the other does not must all be messages (sends, receives and completions of
/// those requests; never a collective or another call). The instances add up, each rank's calls are the union of
/// both kinds' in their order (a completion of messages by one function is one call whichever of its messages it
/// completes), and every statistic (sizes, bursts, call times) is the mean over all the instances, a call or message an
/// instance did not make counted as 0. `into` keeps its id and everything else of its own; the ranks in their order.
[[nodiscard]] std::optional<SigPhase> united_kinds(const SigPhase& into, const SigPhase& from);

/// One rank's calls in two kinds merged as united_kinds does (`a` of `a_weight` instances, `b` of `b_weight`), or
/// nothing where they differ by more than messages, or aligning them would take more than `most_cells` cells.
[[nodiscard]] std::optional<SigRank> merge_rank_calls(const SigRank& a, std::uint64_t a_weight, const SigRank& b,
                                                      std::uint64_t b_weight, std::uint64_t most_cells = 1u << 22);

}  // namespace p3s::analyzer
