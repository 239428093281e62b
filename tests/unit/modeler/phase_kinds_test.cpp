// SPDX-License-Identifier: BSD-3-Clause
// The kinds of a phase (merge_phase_kinds): phases of one run that are one program point whose calls followed the
// data are one phase across the series.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/modeler/series.hpp"
#include "ring_signatures.hpp"

namespace p3s::modeler {
namespace {

/// The ring's iteration where rank 0 has nothing to send (no MPI_Isend, and no completion of one), every burst
/// twice as long: the same MPI functions as the iteration, other calls.
analyzer::SigPhase nothing_to_send(const analyzer::SigPhase& loop, std::uint32_t id, std::uint64_t weight) {
  analyzer::SigPhase kind = loop;
  kind.id = id;
  kind.weight = weight;
  for (analyzer::SigRank& r : kind.ranks) {
    for (SigEvent& e : r.events) {
      e.burst_work = stat(2 * e.burst_work.mean);
      e.burst_ns = stat(2 * e.burst_ns.mean);
    }
  }
  std::vector<SigEvent>& rank0 = kind.ranks[0].events;
  rank0.erase(rank0.begin() + 1);  // the Isend
  std::vector<SigAction>& done = rank0[1].actions;
  done.erase(done.begin());  // its completion in the Waitall
  done.front().started = 0;
  return kind;
}

TEST(PhaseKinds, APhaseWithoutCounterpartCallingTheSameFunctionsJoinsTheRelatedOne) {
  Signature s = ring(4, 60);
  s.phases.push_back(nothing_to_send(s.phases[1], 2, 40));
  analyzer::SigPhase barrier = s.phases[0];  // another program point: other functions
  barrier.id = 3;
  barrier.ranks[0].events[0].function = mpi::Function::MPI_Barrier;
  barrier.ranks[0].events[0].call = "MPI_Barrier";
  s.phases.push_back(barrier);
  s.phases[1].share = 0.3;
  s.phases[2].share = 0.4;
  s.order = {{0, 1}, {1, 30}, {2, 40}, {1, 30}, {3, 1}};
  const double isend_burst = s.phases[1].ranks[1].events[1].burst_work.mean;

  const std::vector<std::string> lines = merge_phase_kinds(s, {true, true, false, false});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("phase 2 of the run at 4 (", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(", weight 40, 40.00 % of its time) is a kind of its phase 1: "), std::string::npos)
      << lines[0];
  ASSERT_EQ(s.phases.size(), 3u);  // the barrier phase stays: it calls other functions
  const analyzer::SigPhase& loop = s.phases[1];
  EXPECT_EQ(loop.weight, 100u);
  EXPECT_NEAR(loop.share, 0.7, 1e-12);
  EXPECT_EQ(loop.ranks[0].events.size(), 4u);  // the representative is the related phase's
  // Each rank's bursts stand for its mean over all 100 instances: 60 of the iteration, 40 twice as long.
  EXPECT_NEAR(loop.ranks[1].events[1].burst_work.mean, 1.4 * isend_burst, 1e-6 * isend_burst);
  EXPECT_EQ(s.phases[2].id, 2u);
  EXPECT_EQ(s.phases[2].listed_id(), 3u);  // the id the signature file gives it, for messages
  EXPECT_EQ(s.phases[2].ranks[0].events[0].call, "MPI_Barrier");
  EXPECT_EQ(s.order, (std::vector<analyzer::PhaseRunEntry>{{0, 1}, {1, 100}, {2, 1}}));
  // Nothing left to merge.
  EXPECT_TRUE(merge_phase_kinds(s, {true, true, false}).empty());
}

TEST(PhaseKinds, AStepKindCallingFunctionsOfItsOwnJoinsTheHeaviestStepKindThatIncludesThem) {
  // A step whose stretch was cut elsewhere at this n holds part of another step: its MPI functions (no Allreduce)
  // are those of no related phase, but the step kinds' include them. Of those, the heaviest takes it; a heavier
  // phase that is no step does not, nor does a phase without counterpart that is no step.
  Signature s = ring(4, 60);
  s.phases[1].step = true;
  analyzer::SigPhase probing = s.phases[1];  // a kind of the step with a probe more
  probing.id = 2;
  probing.weight = 70;
  for (std::int32_t r = 0; r < 4; ++r) probing.ranks[r] = loop_rank(r, 4, right_neighbour(r, 4), 0, 1);
  analyzer::SigPhase cut = s.phases[1];  // the step's exchange without its Allreduce
  cut.id = 3;
  cut.weight = 10;
  for (analyzer::SigRank& r : cut.ranks) r.events.pop_back();
  analyzer::SigPhase apart = s.phases[1];  // the same exchange, no step
  apart.id = 4;
  apart.weight = 200;
  apart.step = false;
  analyzer::SigPhase cut_apart = cut;  // cut again, no step
  cut_apart.id = 5;
  cut_apart.step = false;
  s.phases.insert(s.phases.end(), {probing, cut, apart, cut_apart});
  s.order = {{0, 1}, {1, 30}, {2, 70}, {3, 10}, {1, 30}, {4, 200}, {5, 10}};

  const std::vector<std::string> lines = merge_phase_kinds(s, {true, true, true, false, true, false});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("phase 3 of the run at 4 ("), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("is a kind of its phase 2, a kind of the time step whose MPI functions include its own"),
            std::string::npos)
      << lines[0];
  ASSERT_EQ(s.phases.size(), 5u);
  EXPECT_EQ(s.phases[2].weight, 80u);
  EXPECT_EQ(s.phases[1].weight, 60u);
  EXPECT_EQ(s.phases[3].weight, 200u);
  EXPECT_EQ(s.phases[4].listed_id(), 5u) << "no step: left as it is";
}

TEST(PhaseKinds, ARelatedPhaseThatLeavesOutAnEmptyMessageTakesItFromItsKind) {
  // The phase the other runs relate to is the iteration in which rank 0 has nothing to send (60 of 100); its kind
  // without counterpart sends (40): one iteration whose calls are both's, rank 0's Isend of 40 % of its size on
  // average, so that the volume and the calls of every instance are the run's.
  Signature s = ring(4, 40);
  const double bytes = s.phases[1].ranks[0].events[1].actions[0].bytes;
  analyzer::SigPhase whole = s.phases[1];
  whole.id = 2;
  s.phases[1] = nothing_to_send(whole, 1, 60);
  s.phases.push_back(whole);
  s.order = {{0, 1}, {2, 40}, {1, 60}};
  const std::vector<std::string> lines = merge_phase_kinds(s, {true, true, false});
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(s.phases.size(), 2u);
  const analyzer::SigPhase& loop = s.phases[1];
  EXPECT_EQ(loop.weight, 100u);
  const std::vector<SigEvent>& rank0 = loop.ranks[0].events;
  ASSERT_EQ(rank0.size(), 4u);
  EXPECT_EQ(rank0[1].function, mpi::Function::MPI_Isend);
  EXPECT_NEAR(rank0[1].actions[0].bytes, 0.4 * bytes, 1e-9 * bytes);
  ASSERT_EQ(rank0[2].actions.size(), 2u);  // the Waitall completes the send too
  EXPECT_EQ(rank0[2].actions[0].started, 1);
  EXPECT_EQ(loop.ranks[1].events.size(), 4u);
  EXPECT_NEAR(loop.ranks[1].events[1].actions[0].bytes, bytes, 1e-9 * bytes);
}

TEST(PhaseKinds, AWorkVariantJoinsItsOwnPhaseAndARelevantPhaseStaysRelevant) {
  // Two iterations of the same calls (two loops of one program), and a work variant of the first one found after
  // the second: it joins the first, its base, not the nearer second.
  Signature s = ring(4, 50);
  analyzer::SigPhase second = s.phases[1];
  second.id = 2;
  analyzer::SigPhase variant = s.phases[1];
  variant.id = 3;
  variant.weight = 10;
  variant.split_from = 1;
  s.phases.push_back(second);
  s.phases.push_back(variant);
  s.phases[1].relevant = true;  // relevant in another run of its series, under the threshold in this one
  s.phases[1].share = 0.001;
  s.order = {{0, 1}, {1, 50}, {2, 50}, {3, 10}};
  const std::vector<std::string> lines = merge_phase_kinds(s, {true, true, true, false});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("is a kind of its phase 1, a work variant of it: "), std::string::npos) << lines[0];
  ASSERT_EQ(s.phases.size(), 3u);
  EXPECT_EQ(s.phases[1].weight, 60u);
  EXPECT_EQ(s.phases[2].weight, 50u);
  EXPECT_TRUE(s.phases[1].relevant);
  EXPECT_EQ(s.order, (std::vector<analyzer::PhaseRunEntry>{{0, 1}, {1, 50}, {2, 50}, {1, 10}}));
}

TEST(PhaseKinds, ASeriesWhosePhasesAllRelateIsLeftAsItIs) {
  std::vector<modeler::Run> runs = load_runs(ring_series({4, 8, 16}), 3);
  const PhaseRelation rel = relate_phases_merging_kinds(runs);
  EXPECT_EQ(rel.phases.size(), 2u);
  EXPECT_TRUE(rel.kinds.empty());
  for (const modeler::Run& r : runs) {
    ASSERT_EQ(r.signature.phases.size(), 2u);
    EXPECT_EQ(r.signature.phases[1].weight, 100u);
    EXPECT_EQ(r.signature.phases[1].listed, analyzer::kNoRef);  // never renumbered
  }
}

TEST(PhaseKinds, ARunWhoseStepFollowsTheDataIsModelledWithoutAFlag) {
  // At 16, 40 of the 100 iterations find nothing to send on rank 0: a phase of its own there, of 40 % of the
  // run's time, that the runs at 4 and 8 do not have. Without its kinds merged, the model would refuse it.
  std::vector<std::filesystem::path> paths = ring_series({4, 8});
  Signature at16 = ring(16, 60);
  at16.phases.push_back(nothing_to_send(at16.phases[1], 2, 40));
  at16.phases[2].share = 0.4;
  at16.order = {{0, 1}, {1, 30}, {2, 40}, {1, 30}};
  paths.push_back(save(at16, "ring16-kinds"));
  ModelOptions fit_all;
  fit_all.hold_out_largest = false;
  const Fit fit = build_model(paths, fit_all);
  EXPECT_TRUE(fit.report.unrelated.empty());
  // Nothing merged is silent: the report names the phase of the run at 16 and the phase it joined.
  ASSERT_EQ(fit.report.kinds_merged.size(), 1u);
  EXPECT_EQ(fit.report.kinds_merged[0].rfind("phase 2 of the run at 16 (", 0), 0u) << fit.report.kinds_merged[0];
  EXPECT_NE(model_report(fit.model, fit.report).find("note: " + fit.report.kinds_merged[0]), std::string::npos);
  ASSERT_EQ(fit.model.phases.size(), 2u);
  EXPECT_EQ(PhasePredictor(fit.model.phases[1], 32).weight(), 100);
  // Compared with that run, the model's iteration is its iteration with both kinds: 100 instances.
  const Validation v = compare_with(fit.model, load_runs(std::span(&paths.back(), 1), 1).front());
  ASSERT_EQ(v.phases.size(), 2u);
  EXPECT_EQ(v.phases[1].weight_actual, 100);
}

}  // namespace
}  // namespace p3s::modeler
