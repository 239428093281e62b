// SPDX-License-Identifier: BSD-3-Clause
#include "law_caveats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace p3s::modeler::detail {

namespace {

/// A law reproduces its samples exactly within this relative error (floating point only).
constexpr double kExact = 1e-9;

/// Whether x is a whole number of `unit`s, within the rounding of a fitted law.
bool whole(double x, double unit) {
  const double k = x / unit;
  return std::abs(k - std::round(k)) <= std::max(1e-3, 1e-7 * std::abs(k));
}

/// The largest element size (8, 4, 2, 1 bytes) of which every value is a whole number; 0 when some is no whole
/// number of bytes (an approximate law).
double element_of(const std::vector<double>& values) {
  for (const double unit : {8.0, 4.0, 2.0, 1.0}) {
    if (std::all_of(values.begin(), values.end(), [unit](double v) { return whole(v, unit); })) return unit;
  }
  return 0;
}

}  // namespace

std::optional<std::string> uneven_sizes(const PhaseModel& phase, std::int64_t n,
                                        const std::vector<std::int64_t>& fitted_n) {
  if (fitted_n.empty() || std::find(fitted_n.begin(), fitted_n.end(), n) != fitted_n.end()) return std::nullopt;
  std::string names;
  std::string example;
  for (std::size_t g = 0; g < phase.groups.size(); ++g) {
    const GroupModel& gm = phase.groups[g];
    if (gm.role != Role::PointToPoint) continue;
    bool uneven = false;
    for (std::size_t c = 0; c < gm.traits.size(); ++c) {
      for (std::size_t t = 0; t < gm.traits[c].size(); ++t) {
        for (std::size_t s = 0; s < static_cast<std::size_t>(gm.slots); ++s) {
          // Only sizes a law reproduces exactly and every rank shares: a mean over ranks is no message size.
          const TermTraits& traits = gm.traits[c][t];
          if (!gm.slot_kinds[s] || traits.block[s] || traits.rank_spread[s] > 0 ||
              traits.bytes[s].max_rel_error > kExact) {
            continue;
          }
          std::vector<double> fitted;
          for (const std::int64_t m : fitted_n) fitted.push_back(gm.message_bytes(c, t, s, m));
          const double unit = element_of(fitted);
          const double at_n = gm.message_bytes(c, t, s, n);
          if (unit == 0 || at_n <= 0 || whole(at_n, unit)) continue;
          if (!uneven && example.empty()) {
            char text[128];
            std::snprintf(text, sizeof text,
                          "[%zu] %s: %.1f bytes by its law, where every fitted run sends whole %g-byte elements", g,
                          gm.call.c_str(), at_n, unit);
            example = text;
          }
          uneven = true;
        }
      }
    }
    if (uneven) names += (names.empty() ? "" : ", ") + ("[" + std::to_string(g) + "] " + gm.call);
  }
  if (names.empty()) return std::nullopt;
  return "the message sizes of " + names + " are no whole number of elements at n = " + std::to_string(n) + " (" +
         example + "): the application must divide its data unevenly among the ranks " +
         "there, so each rank's sizes differ from the laws', which give about their mean";
}

std::optional<std::string> negative_laws(const PhaseModel& phase, std::int64_t n) {
  std::string sizes;
  std::string work;
  double lowest = 0;
  const auto add = [&](std::string& names, const std::string& what, double v) {
    if (!(v < 0)) return;
    if (names.find(what) == std::string::npos) names += (names.empty() ? "" : ", ") + what;
    lowest = std::min(lowest, v);
  };
  for (std::size_t g = 0; g < phase.groups.size(); ++g) {
    const GroupModel& gm = phase.groups[g];
    if (gm.role != Role::PointToPoint) continue;
    for (std::size_t c = 0; c < gm.traits.size(); ++c) {
      for (std::size_t t = 0; t < gm.traits[c].size(); ++t) {
        for (std::size_t s = 0; s < static_cast<std::size_t>(gm.slots); ++s) {
          // A block law gives each rank's size, never below zero; its mean law may fall below where it no longer
          // describes the mean.
          if (gm.slot_kinds[s] && !gm.traits[c][t].block[s]) {
            add(sizes, "[" + std::to_string(g) + "] " + gm.call, gm.message_bytes(c, t, s, n));
          }
        }
      }
    }
  }
  // A count that falls below zero past the fitted runs (calls made only where a side of the grid is 1) is none.
  std::string counts;
  for (std::size_t g = 0; g < phase.groups.size(); ++g) {
    const GroupModel& gm = phase.groups[g];
    if (!gm.measured.empty()) continue;
    const std::string what = "[" + std::to_string(g) + "] " + gm.call;
    if (gm.role != Role::PointToPoint) {
      if (const std::optional<std::int64_t> c = gm.count.integer_at(n)) add(counts, what, static_cast<double>(*c));
      continue;
    }
    for (const Pattern::Case& c : gm.pattern.cases) {
      for (const Term& t : c.program.terms) {
        if (const std::optional<std::int64_t> k = t.count.integer_at(n)) add(counts, what, static_cast<double>(*k));
      }
    }
  }
  for (std::size_t k = 0; k < phase.work.size(); ++k) {
    for (const BurstModel& b : phase.work[k].bursts)
      add(work, std::to_string(k), b.work.law.value_at(static_cast<double>(n)));
  }
  if (sizes.empty() && work.empty() && counts.empty()) return std::nullopt;
  std::string laws = counts.empty() ? "" : "the call counts of " + counts;
  if (!sizes.empty()) laws += (laws.empty() ? "" : " and ") + ("the size laws of " + sizes);
  if (!work.empty()) laws += (laws.empty() ? "" : " and ") + ("the work laws of class " + work);
  char low[64];
  std::snprintf(low, sizeof low, "%.4g", lowest);
  return "at n = " + std::to_string(n) + " " + laws + " fall below zero (down to " + low +
         "), taken as 0: n is past where these laws describe the application";
}

}  // namespace p3s::modeler::detail
