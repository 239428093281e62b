// SPDX-License-Identifier: BSD-3-Clause
// One level for every run of a series analysed by rank: phases cut at two levels have no counterparts across it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "series_level.hpp"

namespace p3s::analyzer {
namespace {

/// Runs analysed alone at these levels; run i can be analysed again at a level where `can(i, level)`.
struct Series {
  std::vector<Signature> sigs;
  std::vector<AnalyzeStats> stats;
  std::vector<std::vector<PhaseLevel>> can;
  std::vector<std::string> asked;  ///< every re-analysis asked for, "run:level"

  explicit Series(const std::vector<PhaseLevel>& alone) : stats(alone.size()), can(alone.size()) {
    for (const PhaseLevel l : alone) {
      Signature s;
      s.phase_method = PhaseMethod::ByRank;
      s.phase_level = l;
      s.phase_method_note = "alone";
      sigs.push_back(s);
    }
  }

  void agree() {
    detail::same_level(sigs, stats, [this](std::size_t run, PhaseLevel level, AnalyzeStats&) {
      asked.push_back(std::to_string(run) + ":" + std::string(phase_level_name(level)));
      Signature s = sigs[run];
      const bool can_take = std::find(can[run].begin(), can[run].end(), level) != can[run].end();
      if (can_take) s.phase_level = level;  // else the level its analysis falls back to: the one it had
      return s;
    });
  }

  [[nodiscard]] std::vector<PhaseLevel> levels() const {
    std::vector<PhaseLevel> out;
    for (const Signature& s : sigs) out.push_back(s.phase_level);
    return out;
  }
};

using L = PhaseLevel;

TEST(SeriesLevel, EveryRunTakesTheLevelMostRunsTookAlone) {
  Series s({L::Collectives, L::Outermost, L::Outermost, L::Outermost});
  s.can[0] = {L::Outermost};
  s.agree();
  EXPECT_EQ(s.levels(), std::vector<L>(4, L::Outermost));
  EXPECT_NE(s.sigs[0].phase_method_note.find("3 of 4 runs take it; before, this run's was collectives (alone)"),
            std::string::npos)
      << s.sigs[0].phase_method_note;
  EXPECT_EQ(s.sigs[1].phase_method_note, "alone");
}

// A run that cannot take the most voted level (its locations have not as many iterations) would leave the series
// cut at two levels: the series takes the next level some run took that every run can take.
TEST(SeriesLevel, WhereOneRunCannotTakeItTheSeriesTakesALevelEveryRunCan) {
  Series s({L::Collectives, L::Outermost, L::Outermost, L::Outermost});
  s.can = {{}, {L::Collectives}, {L::Collectives}, {L::Collectives}};
  s.agree();
  EXPECT_EQ(s.levels(), std::vector<L>(4, L::Collectives));
  EXPECT_EQ(s.sigs[0].phase_method_note, "alone");
  EXPECT_NE(s.sigs[2].phase_method_note.find("1 of 4 runs take it, and every run can"), std::string::npos)
      << s.sigs[2].phase_method_note;
}

// Where no level some run took suits every run, the most voted is taken where it can be; a level no run took alone
// is never forced on the series.
TEST(SeriesLevel, WhereNoLevelSuitsEveryRunTheMostVotedIsTakenWhereItCanBe) {
  Series s({L::Collectives, L::Outermost, L::Outermost, L::Outermost});
  s.can = {{L::Units}, {L::Units}, {L::Units, L::Collectives}, {L::Units}};
  s.agree();
  EXPECT_EQ(s.levels(), (std::vector<L>{L::Collectives, L::Outermost, L::Outermost, L::Outermost}));
  EXPECT_EQ(s.asked, (std::vector<std::string>{"0:outermost-loops", "1:collectives"}));
  for (const std::string& a : s.asked) EXPECT_EQ(a.find("units"), std::string::npos) << a;
}

TEST(SeriesLevel, RunsNotAllAnalysedByRankAreLeftAlone) {
  Series s({L::Collectives, L::Outermost, L::Outermost});
  s.sigs[1].phase_method = PhaseMethod::GlobalTicks;
  s.can = {{L::Outermost}, {}, {}};
  s.agree();
  EXPECT_TRUE(s.asked.empty());
  EXPECT_EQ(s.sigs[0].phase_level, L::Collectives);
}

}  // namespace
}  // namespace p3s::analyzer
