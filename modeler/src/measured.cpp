// SPDX-License-Identifier: BSD-3-Clause
// Groups kept as measured: what a group did in each fitted run stands in for the laws no fit found, exactly at a
// fitted n and, elsewhere, as the nearest fitted run's calls (an approximation, flagged wherever it is used).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "p3s/error.hpp"
#include "p3s/modeler/model.hpp"

namespace p3s::modeler {

const MeasuredCalls::Run& MeasuredCalls::source(std::int64_t n) const {
  if (runs.empty()) throw std::logic_error("a measured group without runs");
  return *nearest_by_n(runs.begin(), runs.end(), n, [](const Run& run) { return run.n; });
}

std::string MeasuredCalls::fitted_n() const {
  std::string s;
  for (const Run& run : runs) s += (s.empty() ? "" : " ") + std::to_string(run.n);
  return s;
}

MeasuredCalls::Calls MeasuredCalls::calls(std::int64_t r, std::int64_t n) const {
  const Run& run = source(n);
  if (run.ranks.empty()) return {};
  // The rank at r's relative place: the first and last ranks (boundaries) stay the first and last.
  const std::int64_t size = static_cast<std::int64_t>(run.ranks.size());
  const std::int64_t stand_in = run.n == n ? r : std::min(size - 1, r * size / std::max<std::int64_t>(n, 1));
  Calls out = run.ranks[static_cast<std::size_t>(stand_in)];
  if (run.n == n) return out;
  for (auto& peers : out) {
    for (std::int64_t& p : peers) {
      if (p < 0) continue;
      p = r + (p - stand_in);
      if (p < 0 || p >= n) p = -1;
    }
  }
  return out;
}

namespace {

/// One iteration's entries repeated `times` times, each copy with its iteration.
std::vector<Entry> repeated(const std::vector<Entry>& once, std::int64_t times) {
  std::vector<Entry> out;
  out.reserve(once.size() * static_cast<std::size_t>(std::max<std::int64_t>(times, 0)));
  for (std::int64_t t = 0; t < times; ++t) {
    for (Entry e : once) {
      e.iteration = t;
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace

namespace {

/// A count of calls per rank and instance from a law, bounded as Program::generate() bounds a repetition's.
std::int64_t bounded_count(const ExactLaw& law, std::int64_t n, const char* what) {
  const std::int64_t count = count_value(law, n);
  if (count > kMostCallsPerRank) {
    throw ModelError(std::string("the ") + what + " " + law.to_string() + " gives " + std::to_string(count) +
                     " at n = " + std::to_string(n) + ", more than p3s predicts for one rank in one instance (" +
                     std::to_string(kMostCallsPerRank) + "); the law does not hold this far from its runs");
  }
  return count;
}

}  // namespace

std::int64_t GroupModel::iterations_at(std::int64_t n) const {
  return iterations ? std::max<std::int64_t>(1, bounded_count(*iterations, n, "loop's iterations")) : 1;
}

std::vector<Entry> GroupModel::entries(std::int64_t r, std::int64_t n, std::size_t* which) const {
  std::vector<Entry> once;
  if (measured.empty()) {
    once = pattern.generate(r, n, which);
  } else {
    if (which != nullptr) *which = 0;
    const MeasuredCalls::Calls calls = measured.calls(r, n);
    for (std::size_t k = 0; k < calls.size(); ++k) once.push_back(Entry{calls[k], 0, static_cast<std::int64_t>(k)});
  }
  if (!iterations) return once;
  const std::int64_t times = iterations_at(n);
  if (static_cast<double>(once.size()) * static_cast<double>(times) > static_cast<double>(kMostCallsPerRank)) {
    throw ModelError("the loop of " + call + " makes " + std::to_string(times) + " iterations of " +
                     std::to_string(once.size()) + " calls at rank " + std::to_string(r) +
                     " and n = " + std::to_string(n) + ", more than p3s predicts for one rank in one instance (" +
                     std::to_string(kMostCallsPerRank) + "); the laws do not hold this far from their runs");
  }
  return repeated(once, times);
}

std::int64_t GroupModel::count_at(std::int64_t r, std::int64_t n) const {
  if (!measured.empty()) return static_cast<std::int64_t>(measured.calls(r, n).size());
  return bounded_count(count, n, "count of calls");
}

bool GroupModel::approximate_at(std::int64_t n) const { return !measured.empty() && measured.source(n).n != n; }

std::vector<std::uint32_t> PhaseModel::approximate_groups(std::int64_t n) const {
  std::vector<std::uint32_t> out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].approximate_at(n)) out.push_back(static_cast<std::uint32_t>(g));
  }
  return out;
}

}  // namespace p3s::modeler
