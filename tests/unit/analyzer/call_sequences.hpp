// SPDX-License-Identifier: BSD-3-Clause
// One location's calls built by hand, for the tests of the by-rank phases and of the choice between methods.
#pragma once

#include <cstdint>

#include "rank_phases.hpp"

namespace p3s::analyzer {

/// Appends a call of `region` after a burst of `burst` (its work as much), with one action toward `peer` of `bytes`,
/// at the next tick; `everyone`: a blocking collective of all processes.
inline void add_call(CallSequence& s, std::uint32_t region, std::int32_t peer, std::uint64_t burst,
                     std::uint64_t bytes = 0, bool everyone = false) {
  Op op;
  op.header.region = region;
  op.header.burst_ns = burst;
  op.header.burst_work = burst;
  Action a;
  a.peer = peer;
  a.bytes = bytes;
  op.actions.push_back(a);
  s.add(op, s.ticks().size() + 1, everyone);
}

}  // namespace p3s::analyzer
