// SPDX-License-Identifier: BSD-3-Clause
// Exchanges along sides never longer than 2 given the calls a longer side added to the same exchange elsewhere.
#include "side_analogy.hpp"

#include <gtest/gtest.h>

namespace p3s::modeler::detail {
namespace {

const ExactLaw kOnce = ExactLaw::constant(Rational::make(1));

/// [dims3(n)[d] > 2]: one call where side d of the grid is longer than 2, none elsewhere.
ExactLaw where_longer(std::size_t d) { return ExactLaw{on_side(Basis::Dims3FirstOver2, d), Rational::make(1), {}}; }

/// A point-to-point group of one term, `count` calls to torus3c(r) + label, with message sizes of `bytes`.
GroupModel step(const char* call, mpi::Function function, const Label& label, const ExactLaw& count,
                double bytes = 100) {
  GroupModel g;
  g.call = call;
  g.function = function;
  g.role = Role::PointToPoint;
  g.slot_kinds = {function == mpi::Function::MPI_Send ? mpi::ActionKind::Send : mpi::ActionKind::IrecvPost,
                  std::nullopt};
  g.starts_requests = function == mpi::Function::MPI_Irecv;
  Program p;
  p.frame = Frame::Torus3C;
  Term t;
  t.count = count;
  t.slots.push_back({IndexedLaw::constant(label[0]), IndexedLaw::constant(label[1]), IndexedLaw::constant(label[2])});
  p.terms.push_back(t);
  g.pattern.cases.push_back({RankPredicate{}, p});
  TermTraits traits;
  traits.bytes[0] = RegressionLaw{RegressionForm::Constant, Basis::One, bytes};
  g.traits = {{traits}};
  return g;
}

/// An MPI_Wait after each request of group `of`.
GroupModel wait_for(std::uint32_t of) {
  GroupModel g;
  g.call = "MPI_Wait";
  g.function = mpi::Function::MPI_Wait;
  g.role = Role::Completion;
  g.per_request = true;
  g.completes = {{RequestRef{of, 0, 0, -1}}};
  return g;
}

/// A particle code's migration along y then x (dims3 sides 2x1x1, 2x2x1, 2x2x2, 4x2x2 at 2, 4, 8, 16): a receive
/// from +1, a send to -1 and its wait, and where the side is longer than 2 the same the other way. Only x was.
PhaseModel migration() {
  PhaseModel pm;
  pm.groups = {
      step("MPI_Irecv", mpi::Function::MPI_Irecv, {0, 1, 0}, kOnce, 40),
      step("MPI_Send", mpi::Function::MPI_Send, {0, -1, 0}, kOnce, 40),
      wait_for(0),
      step("MPI_Irecv", mpi::Function::MPI_Irecv, {1, 0, 0}, kOnce),
      step("MPI_Send", mpi::Function::MPI_Send, {-1, 0, 0}, kOnce),
      wait_for(3),
      step("MPI_Irecv", mpi::Function::MPI_Irecv, {-1, 0, 0}, where_longer(0), 7),
      step("MPI_Send", mpi::Function::MPI_Send, {1, 0, 0}, where_longer(0), 7),
      wait_for(6),
  };
  GridSeen seen;
  seen.frame = Frame::Torus3C;
  seen.longest = {4, 2, 2};
  seen.longer_adds_calls = {true, false, false};
  pm.grid_seen = seen;
  WorkClass w;
  w.cases.assign(pm.groups.size(), 0);
  BurstModel before_x;
  before_x.group = 3;
  w.bursts.push_back(before_x);
  pm.work.push_back(w);
  return pm;
}

const std::vector<std::int64_t> kFitted = {2, 4, 8, 16};

std::vector<std::int64_t> peers(const GroupModel& g, std::int64_t r, std::int64_t n) {
  std::vector<std::int64_t> out;
  for (const Entry& e : g.entries(r, n)) out.push_back(e.peers[0]);
  return out;
}

TEST(SideAnalogy, TheExchangeAlongAShortSideMakesTheCallsALongerSideAddedElsewhere) {
  PhaseModel pm = migration();
  const PhaseModel before = pm;
  const std::vector<std::string> notes = extend_along_shorter_sides(pm, kFitted);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes.front().find("along dimension 1"), std::string::npos) << notes.front();
  // y's exchange gained the receive, send and wait the other way, right after its own.
  ASSERT_EQ(pm.groups.size(), 12U);
  EXPECT_EQ(pm.groups[3].call, "MPI_Irecv");
  EXPECT_EQ(pm.groups[4].call, "MPI_Send");
  EXPECT_EQ(pm.groups[5].call, "MPI_Wait");
  EXPECT_EQ(pm.groups[3].pattern.cases.front().program.terms.front().count.to_string(), "[dims3(n)[1] > 2]");
  EXPECT_EQ(pm.grid_seen->follows, (std::array<int, 3>{-1, 0, -1}));
  // Its wait completes its own receive; the later groups' references, bursts and cases follow their groups.
  EXPECT_EQ(pm.groups[5].completes.front().front().group, 3U);
  EXPECT_EQ(pm.groups[8].completes.front().front().group, 6U);
  EXPECT_EQ(pm.groups[11].completes.front().front().group, 9U);
  EXPECT_EQ(pm.work.front().cases.size(), 12U);
  EXPECT_EQ(pm.work.front().bursts.front().group, 6);
  // The sizes are y's own messages', not x's.
  EXPECT_EQ(pm.groups[3].message_bytes(0, 0, 0, 32), 40);
  // Every fitted run is made as before: the new calls are made only where y is longer than 2.
  for (const std::int64_t n : kFitted) {
    for (std::int64_t r = 0; r < n; ++r) {
      EXPECT_EQ(peers(pm.groups[0], r, n), peers(before.groups[0], r, n));
      EXPECT_TRUE(pm.groups[3].entries(r, n).empty());
      EXPECT_EQ(peers(pm.groups[9], r, n), peers(before.groups[6], r, n));
    }
  }
  // At 32 (4x4x2), rank 0 receives along y from +1, then from -1, as along x.
  EXPECT_EQ(peers(pm.groups[0], 0, 32), (std::vector<std::int64_t>{4}));
  EXPECT_EQ(peers(pm.groups[3], 0, 32), (std::vector<std::int64_t>{12}));
  EXPECT_EQ(peers(pm.groups[4], 0, 32), (std::vector<std::int64_t>{4}));
}

TEST(SideAnalogy, ExchangesThatDifferAreLeftAlone) {
  // y's exchange posts its receive after its send: not the same code as x's.
  PhaseModel pm = migration();
  std::swap(pm.groups[0], pm.groups[1]);
  pm.groups[2].completes = {{RequestRef{1, 0, 0, -1}}};
  const PhaseModel before = pm;
  EXPECT_TRUE(extend_along_shorter_sides(pm, kFitted).empty());
  EXPECT_EQ(pm.groups.size(), before.groups.size());
  EXPECT_EQ(pm.grid_seen->follows, (std::array<int, 3>{-1, -1, -1}));
}

TEST(SideAnalogy, ACountThatFollowsSomethingElseIsNotMoved) {
  // The extra calls follow log2(n), not the side: nothing says what they do along another side.
  PhaseModel pm = migration();
  pm.groups[6].pattern.cases.front().program.terms.front().count =
      ExactLaw{Basis::FloorHalfLog2, Rational::make(1), Rational::make(-1)};
  EXPECT_TRUE(extend_along_shorter_sides(pm, kFitted).empty());
  EXPECT_EQ(pm.groups.size(), 9U);
}

TEST(SideAnalogy, OneExchangePerDimensionInARow) {
  // A second exchange along y after x's (the ghost atoms' swaps that follow the migration) is another loop over the
  // dimensions: only the y exchange before x's takes x's calls.
  PhaseModel pm = migration();
  pm.groups.push_back(step("MPI_Irecv", mpi::Function::MPI_Irecv, {0, 1, 0}, kOnce, 40));
  pm.groups.push_back(step("MPI_Send", mpi::Function::MPI_Send, {0, -1, 0}, kOnce, 40));
  pm.groups.push_back(wait_for(9));
  pm.work.front().cases.assign(pm.groups.size(), 0);
  const std::vector<std::string> notes = extend_along_shorter_sides(pm, kFitted);
  ASSERT_EQ(notes.size(), 1U);
  ASSERT_EQ(pm.groups.size(), 15U);
  EXPECT_EQ(pm.groups[12].call, "MPI_Irecv");
  EXPECT_TRUE(pm.groups[12].pattern.cases.front().program.terms.front().count.is_constant());
}

/// A coarse level's exchange along d, made only where side d is longer than 2: a receive from +1 of `bytes` (a law
/// in n), a send to -1, the wait; `step` gives its label along d.
std::vector<GroupModel> coarse_exchange(std::size_t d, std::uint32_t first, const RegressionLaw& bytes) {
  Label up{0, 0, 0};
  Label down{0, 0, 0};
  up[d] = 1;
  down[d] = -1;
  std::vector<GroupModel> out{step("MPI_Irecv", mpi::Function::MPI_Irecv, up, where_longer(d)),
                              step("MPI_Send", mpi::Function::MPI_Send, down, where_longer(d)), wait_for(first)};
  out[0].traits.front().front().bytes[0] = bytes;
  out[1].traits.front().front().bytes[0] = bytes;
  return out;
}

/// The exchanges along y then z of a level that only sides longer than 2 make (dims3: 2x2x1, 2x2x2, 4x2x2, 4x4x2 at
/// 4 to 32): 8 bytes a point of the face, (4 / q + 2) points along each other side; z's 128 and 96 bytes at 16 and
/// 32 (a line in n fits them), y's 96 at 32 (a constant). No run had x longer than 2.
PhaseModel coarse_level() {
  PhaseModel pm;
  pm.groups = coarse_exchange(1, 0, RegressionLaw{RegressionForm::Constant, Basis::One, 96});
  for (GroupModel& g : coarse_exchange(0, 3, RegressionLaw{RegressionForm::Linear, Basis::N, 160, -2})) {
    pm.groups.push_back(std::move(g));
  }
  GridSeen seen;
  seen.frame = Frame::Torus3C;
  seen.longest = {4, 4, 2};
  seen.longer_adds_calls = {true, true, false};
  pm.grid_seen = seen;
  WorkClass w;
  w.cases.assign(pm.groups.size(), 0);
  pm.work.push_back(w);
  return pm;
}

const std::vector<std::int64_t> kCoarseFitted = {4, 8, 16, 32};

TEST(SideAnalogy, AnExchangeOnlyLongerSidesMakeIsAddedAlongTheSideThatFirstIsLonger) {
  PhaseModel pm = coarse_level();
  const PhaseModel before = pm;
  const std::vector<std::string> notes = add_exchanges_along_shorter_sides(pm, kCoarseFitted);
  ASSERT_EQ(notes.size(), 2U);
  EXPECT_NE(notes.front().find("along dimension 2"), std::string::npos) << notes.front();
  // x's exchange comes first (the row goes y, z: from the last dimension to the first), a copy of y's.
  ASSERT_EQ(pm.groups.size(), 9U);
  EXPECT_EQ(pm.groups[0].pattern.cases.front().program.terms.front().count.to_string(), "[dims3(n)[2] > 2]");
  EXPECT_EQ(pm.groups[2].completes.front().front().group, 0U);
  EXPECT_EQ(pm.groups[5].completes.front().front().group, 3U);
  EXPECT_EQ(pm.groups[8].completes.front().front().group, 6U);
  EXPECT_EQ(pm.grid_seen->follows, (std::array<int, 3>{-1, -1, 1}));
  EXPECT_EQ(pm.work.front().cases.size(), 9U);
  // Every fitted run is made as before; at 64 (4x4x4, dimension 0 the fastest) rank 0 receives along x from 16.
  for (const std::int64_t n : kCoarseFitted) {
    for (std::int64_t r = 0; r < n; ++r) {
      EXPECT_TRUE(pm.groups[0].entries(r, n).empty());
      EXPECT_EQ(peers(pm.groups[3], r, n), peers(before.groups[0], r, n));
    }
  }
  EXPECT_EQ(peers(pm.groups[0], 0, 64), (std::vector<std::int64_t>{16}));
  // The sizes along all three are one face law, fitted on y's and z's together: 72 bytes each at 64, where y's
  // constant said 96 and z's line 32.
  for (const std::size_t g : {0U, 3U, 6U}) {
    ASSERT_TRUE(pm.groups[g].traits.front().front().block[0].has_value()) << g;
    EXPECT_EQ(pm.groups[g].message_bytes(0, 0, 0, 64, 0, 0), 72) << g;
    EXPECT_EQ(pm.groups[g + 1].message_bytes(0, 0, 0, 64, 0, 0), 72) << g;
  }
  EXPECT_EQ(pm.groups[6].message_bytes(0, 0, 0, 16, 0, 0), 128);
  EXPECT_EQ(pm.groups[3].message_bytes(0, 0, 0, 32, 0, 0), 96);
}

TEST(SideAnalogy, NoRowNoExchangeAdded) {
  // One exchange along z alone says nothing of where one along x would go, nor that the code loops over sides.
  PhaseModel pm = coarse_level();
  pm.groups.erase(pm.groups.begin(), pm.groups.begin() + 3);
  pm.groups[2].completes = {{RequestRef{0, 0, 0, -1}}};
  pm.work.front().cases.assign(pm.groups.size(), 0);
  EXPECT_TRUE(add_exchanges_along_shorter_sides(pm, kCoarseFitted).empty());
  EXPECT_EQ(pm.groups.size(), 3U);
  // Exchanges that every fitted run made along a side of 2 as well are no coarse level's.
  pm = coarse_level();
  for (const std::size_t g : {0U, 1U}) pm.groups[g].pattern.cases.front().program.terms.front().count = kOnce;
  EXPECT_TRUE(add_exchanges_along_shorter_sides(pm, kCoarseFitted).empty());
  EXPECT_EQ(pm.groups.size(), 6U);
}

/// A point-to-point group of one call to frame(r) + (dx, dy) on the 2-D grid.
GroupModel step2(const char* call, mpi::Function function, std::int64_t dx, std::int64_t dy, Frame frame,
                 double bytes = 100) {
  GroupModel g = step(call, function, {dx, dy, 0}, kOnce, bytes);
  Program& p = g.pattern.cases.front().program;
  p.frame = frame;
  for (std::vector<IndexedLaw>& slot : p.terms.front().slots) slot.resize(2);
  return g;
}

/// One swap each way along dimension d of a grid (non-periodic unless `frame` says), as a code posts them where it
/// receives something: a receive from +1, a send to -1 and the wait, then the same the other way.
std::vector<GroupModel> swaps(std::size_t d, std::uint32_t first, Frame frame = Frame::Grid2) {
  const std::int64_t x = d == 0 ? 1 : 0;
  const std::int64_t y = d == 1 ? 1 : 0;
  return {step2("MPI_Irecv", mpi::Function::MPI_Irecv, x, y, frame),
          step2("MPI_Send", mpi::Function::MPI_Send, -x, -y, frame),
          wait_for(first),
          step2("MPI_Irecv", mpi::Function::MPI_Irecv, -x, -y, frame),
          step2("MPI_Send", mpi::Function::MPI_Send, x, y, frame),
          wait_for(first + 3)};
}

/// A halo update forward along x then y, and back along y then x, on sides 2x1, 2x2, 4x2 (at 2, 4, 8): the fit of
/// y's, on sides of 1 and 2 only, where a rank either way is the same rank and the edge rank posts only what it
/// receives, is 7 groups that take steps on the torus and both edges' orders (as rank y = 1 makes them, then y = 0).
PhaseModel edge_swaps() {
  PhaseModel pm;
  pm.groups = swaps(0, 0);
  const std::vector<GroupModel> y{step2("MPI_Send", mpi::Function::MPI_Send, 0, -1, Frame::Grid2, 40),
                                  step2("MPI_Irecv", mpi::Function::MPI_Irecv, 0, -1, Frame::Torus2, 40),
                                  wait_for(7),
                                  step2("MPI_Send", mpi::Function::MPI_Send, 0, -1, Frame::Torus2, 40),
                                  step2("MPI_Irecv", mpi::Function::MPI_Irecv, 0, -1, Frame::Torus2, 40),
                                  wait_for(10),
                                  step2("MPI_Send", mpi::Function::MPI_Send, 0, 1, Frame::Grid2, 40)};
  pm.groups.insert(pm.groups.end(), y.begin(), y.end());
  for (GroupModel& g : swaps(0, 13)) pm.groups.push_back(std::move(g));
  GridSeen seen;
  seen.frame = Frame::Grid2;
  seen.longest = {4, 2, 0};
  seen.longer_adds_calls = {true, false, false};
  pm.grid_seen = seen;
  WorkClass w;
  w.cases.assign(pm.groups.size(), 0);
  BurstModel before_y;
  before_y.group = 6;
  w.bursts.push_back(before_y);
  pm.work.push_back(w);
  return pm;
}

/// The same update on a grid periodic along x and open along y (a channel between two walls): x's swaps on the torus,
/// whose side of 2 already made both of them, so a longer side added none; y's fit as edge_swaps().
PhaseModel channel_swaps() {
  PhaseModel pm = edge_swaps();
  const std::vector<GroupModel> x = swaps(0, 0, Frame::Torus2);
  std::copy(x.begin(), x.end(), pm.groups.begin());
  const std::vector<GroupModel> back = swaps(0, 13, Frame::Torus2);
  std::copy(back.begin(), back.end(), pm.groups.begin() + 13);
  pm.grid_seen->frame = Frame::Torus2;
  pm.grid_seen->longer_adds_calls = {false, false, false};
  return pm;
}

/// A Sendrecv of the counts of what follows, to frame(r) + (dx, dy) and from frame(r) - (dx, dy) (from the same
/// rank on the grid, `same_peer`: a call only one end rank of a side of 2 makes, which the fit takes either way).
GroupModel counts2(std::int64_t dx, std::int64_t dy, Frame frame, bool same_peer = false) {
  GroupModel g = step2("MPI_Sendrecv", mpi::Function::MPI_Sendrecv, dx, dy, frame, 4);
  g.slot_kinds = {mpi::ActionKind::Send, mpi::ActionKind::Recv};
  const std::int64_t back = same_peer ? 1 : -1;
  Term& t = g.pattern.cases.front().program.terms.front();
  t.slots.push_back({IndexedLaw::constant(back * dx), IndexedLaw::constant(back * dy)});
  g.traits.front().front().bytes[1] = g.traits.front().front().bytes[0];
  return g;
}

/// A channel (periodic along x, walls along y) whose swaps each send the count of what follows first, to the
/// neighbour the grid would have if it wrapped, walls or not (as a code that keeps a wrapping grid of neighbours and
/// sends nothing but the count across a wall): x's two swaps on the torus, then y's, as fitted on sides of 1 and 2,
/// where the end ranks show which calls wrap (every rank sends the count, rank y = 1 sends first and rank y = 0
/// receives first).
PhaseModel counted_channel() {
  PhaseModel pm;
  pm.groups = {counts2(-1, 0, Frame::Torus2), step2("MPI_Irecv", mpi::Function::MPI_Irecv, 1, 0, Frame::Torus2),
               step2("MPI_Send", mpi::Function::MPI_Send, -1, 0, Frame::Torus2), wait_for(1),
               counts2(1, 0, Frame::Torus2), step2("MPI_Irecv", mpi::Function::MPI_Irecv, -1, 0, Frame::Torus2),
               step2("MPI_Send", mpi::Function::MPI_Send, 1, 0, Frame::Torus2), wait_for(5),
               // y, fitted in the other direction first: every rank's count, y = 1's send and count, y = 0's receive
               // and wait, y = 0's count and send.
               counts2(0, 1, Frame::Torus2), step2("MPI_Send", mpi::Function::MPI_Send, 0, -1, Frame::Grid2, 40),
               counts2(0, -1, Frame::Grid2, true),
               step2("MPI_Irecv", mpi::Function::MPI_Irecv, 0, 1, Frame::Torus2, 40), wait_for(11),
               counts2(0, 1, Frame::Grid2, true), step2("MPI_Send", mpi::Function::MPI_Send, 0, 1, Frame::Grid2, 40)};
  GridSeen seen;
  seen.frame = Frame::Torus2;
  seen.longest = {4, 2, 0};
  seen.longer_adds_calls = {false, false, false};
  pm.grid_seen = seen;
  WorkClass w;
  w.cases.assign(pm.groups.size(), 0);
  pm.work.push_back(w);
  return pm;
}

/// Every rank's peers in groups[first..last] at n, in order.
std::vector<std::int64_t> peers_in(const PhaseModel& pm, std::size_t first, std::size_t last, std::int64_t r,
                                   std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::size_t g = first; g <= last; ++g) {
    if (pm.groups[g].role == Role::PointToPoint) {
      for (const std::int64_t p : peers(pm.groups[g], r, n)) out.push_back(p);
    }
  }
  return out;
}

const std::vector<std::int64_t> kEdgeFitted = {2, 4, 8};

TEST(SideAnalogy, AnExchangeSeenOnlyOnSidesOf2IsMadeAsTheExchangesNextToItAlongALongerSide) {
  PhaseModel pm = edge_swaps();
  const PhaseModel before = pm;
  const std::vector<std::string> notes = add_exchanges_along_shorter_sides(pm, kEdgeFitted);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes.front().find("made as the exchanges next to it along dimension 0"), std::string::npos)
      << notes.front();
  // y's 7 groups are x's forward and backward swaps moved to y: 12 groups, each wait after its own receive.
  ASSERT_EQ(pm.groups.size(), 24U);
  EXPECT_EQ(pm.grid_seen->follows, (std::array<int, 3>{-1, 0, -1}));
  EXPECT_EQ(pm.groups[8].completes.front().front().group, 6U);
  EXPECT_EQ(pm.groups[20].completes.front().front().group, 18U);
  EXPECT_EQ(pm.work.front().cases.size(), 24U);
  EXPECT_EQ(pm.work.front().bursts.front().group, 7) << "the burst before y's first send goes with it";
  EXPECT_EQ(pm.groups[7].message_bytes(0, 0, 0, 8), 40) << "y's own sizes";
  // Every fitted run is made as before.
  for (const std::int64_t n : kEdgeFitted) {
    for (std::int64_t r = 0; r < n; ++r) {
      EXPECT_EQ(peers_in(pm, 6, 17, r, n), peers_in(before, 6, 12, r, n)) << "n = " << n << ", rank " << r;
    }
  }
  // At 16 (4x4), rank 5 (1, 1) receives from (1, 2) and sends to (1, 0), then the other way, twice; the fit as it
  // was had it send to (1, 0) first and receive from it.
  EXPECT_EQ(peers_in(pm, 6, 17, 5, 16), (std::vector<std::int64_t>{6, 4, 4, 6, 6, 4, 4, 6}));
  EXPECT_EQ(peers_in(before, 6, 12, 5, 16), (std::vector<std::int64_t>{4, 4, 4, 4, 6}));
}

TEST(SideAnalogy, AnExchangeTheLongerSideDoesNotMakeAsItWasSeenStays) {
  // y's edge rank 0 also sends to its neighbour first: x's swaps moved to y do not make that, so y's stay.
  PhaseModel pm = edge_swaps();
  pm.groups[6].pattern.cases.front().program.frame = Frame::Torus2;
  EXPECT_TRUE(add_exchanges_along_shorter_sides(pm, kEdgeFitted).empty());
  EXPECT_EQ(pm.groups.size(), 19U);
  EXPECT_EQ(pm.grid_seen->follows, (std::array<int, 3>{-1, -1, -1}));
}

TEST(SideAnalogy, AnExchangeWhoseEndRanksMakeHalfItsCallsIsMadeOnAnOpenDimension) {
  PhaseModel pm = channel_swaps();
  const PhaseModel before = pm;
  const std::vector<std::string> notes = add_exchanges_along_shorter_sides(pm, kEdgeFitted);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes.front().find("with dimension 1 open"), std::string::npos) << notes.front();
  ASSERT_EQ(pm.groups.size(), 24U);
  EXPECT_EQ(pm.groups[6].pattern.cases.front().program.layout.open, 2U);
  EXPECT_EQ(pm.groups[0].pattern.cases.front().program.layout.open, 0U) << "x still wraps";
  for (const std::int64_t n : kEdgeFitted) {
    for (std::int64_t r = 0; r < n; ++r) {
      EXPECT_EQ(peers_in(pm, 6, 17, r, n), peers_in(before, 6, 12, r, n)) << "n = " << n << ", rank " << r;
    }
  }
  // At 16 (4x4) the inner rank 5 (1, 1) makes both swaps each way; rank 4 (1, 0) at the lower wall only receives from
  // and sends to (1, 1), and rank 7 (1, 3) at the upper one only to and from (1, 2): no step wraps along y.
  EXPECT_EQ(peers_in(pm, 6, 17, 5, 16), (std::vector<std::int64_t>{6, 4, 4, 6, 6, 4, 4, 6}));
  EXPECT_EQ(peers_in(pm, 6, 17, 4, 16), (std::vector<std::int64_t>{5, 5, 5, 5}));
  EXPECT_EQ(peers_in(pm, 6, 17, 7, 16), (std::vector<std::int64_t>{6, 6, 6, 6}));
  // x wraps as it did: rank 0 (0, 0) receives from (1, 0) and sends to (3, 0).
  EXPECT_EQ(peers_in(pm, 0, 5, 0, 16), (std::vector<std::int64_t>{4, 12, 12, 4}));
}

TEST(SideAnalogy, OnAnOpenDimensionTheCallsTheEndRanksStillMakeAcrossTheEndKeepWrapping) {
  PhaseModel pm = counted_channel();
  const PhaseModel before = pm;
  const std::vector<std::string> notes = add_exchanges_along_shorter_sides(pm, kEdgeFitted);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes.front().find("with dimension 1 open"), std::string::npos) << notes.front();
  EXPECT_NE(notes.front().find("its MPI_Sendrecv calls still reaching the rank across the end"), std::string::npos)
      << notes.front();
  ASSERT_EQ(pm.groups.size(), 16U);
  for (const std::int64_t n : kEdgeFitted) {
    for (std::int64_t r = 0; r < n; ++r) {
      EXPECT_EQ(peers_in(pm, 8, 15, r, n), peers_in(before, 8, 14, r, n)) << "n = " << n << ", rank " << r;
    }
  }
  // At 16 (4x4) rank 4 (1, 0) at the lower wall sends its count down across the wall to (1, 3) and receives from
  // (1, 1), receives (1, 1)'s atoms, then sends its count up and its atoms; the inner rank 5 makes every call.
  EXPECT_EQ(peers_in(pm, 8, 15, 4, 16), (std::vector<std::int64_t>{7, 5, 5, 5}));
  EXPECT_EQ(peers_in(pm, 8, 15, 5, 16), (std::vector<std::int64_t>{4, 6, 4, 6, 4, 6}));
  EXPECT_EQ(pm.groups[9].pattern.cases.front().program.layout.open, 2U);
  EXPECT_EQ(pm.groups[8].pattern.cases.front().program.layout.open, 0U) << "the count wraps";
}

TEST(SideAnalogy, APeriodicSideOf2ThatMadeEveryCallKeepsItsOwnFitWhereALongerSideAddedNone) {
  // y's side of 2 made both swaps each way on every rank, as x's: nothing says what a longer side does otherwise.
  PhaseModel pm = channel_swaps();
  pm.groups.erase(pm.groups.begin() + 6, pm.groups.begin() + 13);
  const std::vector<GroupModel> y = swaps(1, 6, Frame::Torus2);
  pm.groups.insert(pm.groups.begin() + 6, y.begin(), y.end());
  for (std::size_t g = 12; g < pm.groups.size(); ++g) {
    for (std::vector<RequestRef>& call : pm.groups[g].completes) {
      for (RequestRef& ref : call) ref.group -= 1;
    }
  }
  pm.work.front().cases.assign(pm.groups.size(), 0);
  const std::size_t groups = pm.groups.size();
  EXPECT_TRUE(add_exchanges_along_shorter_sides(pm, kEdgeFitted).empty());
  EXPECT_EQ(pm.groups.size(), groups);
  EXPECT_EQ(pm.grid_seen->follows, (std::array<int, 3>{-1, -1, -1}));
}

}  // namespace
}  // namespace p3s::modeler::detail
