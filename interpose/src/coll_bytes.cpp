// SPDX-License-Identifier: BSD-3-Clause
// Collective byte rules; the MPI layer (collectives.cpp) only turns a call's arguments into a CollShape.
#include "coll_bytes.hpp"

namespace p3s::interpose {
namespace {

std::uint64_t u(int v) noexcept { return v > 0 ? static_cast<std::uint64_t>(v) : 0; }

std::uint64_t sum(std::span<const int> counts) noexcept {
  std::uint64_t total = 0;
  for (int c : counts) total += u(c);
  return total;
}

std::uint64_t at(std::span<const int> counts, int i) noexcept {
  return i >= 0 && static_cast<std::size_t>(i) < counts.size() ? u(counts[static_cast<std::size_t>(i)]) : 0;
}

}  // namespace

bool is_rooted(OTF2_CollectiveOp op) noexcept {
  return op == OTF2_COLLECTIVE_OP_BCAST || op == OTF2_COLLECTIVE_OP_REDUCE || op == OTF2_COLLECTIVE_OP_GATHER ||
         op == OTF2_COLLECTIVE_OP_GATHERV || op == OTF2_COLLECTIVE_OP_SCATTER || op == OTF2_COLLECTIVE_OP_SCATTERV;
}

CollBytes collective_bytes(OTF2_CollectiveOp op, const CollShape& c) noexcept {
  const bool root = c.me == c.root;
  const std::uint64_t n = u(c.size);
  const std::uint64_t others = n > 0 ? n - 1 : 0;
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER:
      return {};
    case OTF2_COLLECTIVE_OP_BCAST:
      return root ? CollBytes{n * c.sblock, c.sblock} : CollBytes{0, c.sblock};
    case OTF2_COLLECTIVE_OP_SCATTER:
      if (!root) return {0, c.rblock};
      return c.in_place ? CollBytes{others * c.sblock, 0} : CollBytes{n * c.sblock, c.sblock};
    case OTF2_COLLECTIVE_OP_SCATTERV: {
      if (!root) return {0, c.rblock};
      const std::uint64_t total = sum(c.scounts) * c.stype;
      const std::uint64_t mine = at(c.scounts, c.me) * c.stype;
      return c.in_place ? CollBytes{total - mine, 0} : CollBytes{total, mine};
    }
    case OTF2_COLLECTIVE_OP_GATHER:
    case OTF2_COLLECTIVE_OP_REDUCE:
      if (!root) return {c.sblock, 0};
      return c.in_place ? CollBytes{0, others * c.rblock} : CollBytes{c.rblock, n * c.rblock};
    case OTF2_COLLECTIVE_OP_GATHERV: {
      if (!root) return {c.sblock, 0};
      const std::uint64_t total = sum(c.rcounts) * c.rtype;
      const std::uint64_t mine = at(c.rcounts, c.me) * c.rtype;
      return c.in_place ? CollBytes{0, total - mine} : CollBytes{mine, total};
    }
    case OTF2_COLLECTIVE_OP_ALLGATHER:
    case OTF2_COLLECTIVE_OP_ALLTOALL:
    case OTF2_COLLECTIVE_OP_ALLREDUCE:
      if (c.in_place) return {others * c.rblock, others * c.rblock};
      return {n * c.sblock, n * c.rblock};
    case OTF2_COLLECTIVE_OP_ALLGATHERV: {
      const std::uint64_t total = sum(c.rcounts) * c.rtype;
      const std::uint64_t mine = at(c.rcounts, c.me) * c.rtype;
      if (c.in_place) return {others * mine, total - mine};
      return {n * c.sblock, total};
    }
    case OTF2_COLLECTIVE_OP_ALLTOALLV: {
      const std::uint64_t received = sum(c.rcounts) * c.rtype;
      if (c.in_place) {
        // The same amount travels each way between any two ranks.
        const std::uint64_t exchanged = received - at(c.rcounts, c.me) * c.rtype;
        return {exchanged, exchanged};
      }
      return {sum(c.scounts) * c.stype, received};
    }
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: {
      const std::uint64_t b = (c.in_place ? others : n) * c.rblock;
      return {b, b};
    }
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: {
      const std::uint64_t total = sum(c.rcounts);
      const std::uint64_t mine = at(c.rcounts, c.me);
      if (c.in_place) return {(total - mine) * c.stype, others * mine * c.stype};
      return {total * c.stype, n * mine * c.stype};
    }
    case OTF2_COLLECTIVE_OP_SCAN:
    case OTF2_COLLECTIVE_OP_EXSCAN: {
      // Rank r contributes to ranks r..n-1 and receives from ranks 0..r; an exclusive scan (like an
      // in-place scan) leaves out the rank's own block.
      const std::uint64_t me = u(c.me);
      if (c.in_place || op == OTF2_COLLECTIVE_OP_EXSCAN) return {(n - me - 1) * c.sblock, me * c.sblock};
      return {(n - me) * c.sblock, (me + 1) * c.sblock};
    }
    default:
      return {};
  }
}

}  // namespace p3s::interpose
