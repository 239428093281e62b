// SPDX-License-Identifier: BSD-3-Clause
// Communicators as functions of the rank and the process count, learnt from their members in each run.
#include "comm_model.hpp"

#include <algorithm>
#include <map>

namespace p3s::modeler {

std::vector<std::int64_t> CommModel::members(std::int64_t r, std::int64_t n) const {
  std::vector<std::int64_t> out;
  const std::optional<std::int64_t> p = param.integer_at(n);
  switch (kind) {
    case Kind::World:
      for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
      break;
    case Kind::Self:
      out.push_back(r);
      break;
    case Kind::Block:
      if (p && *p > 0) {
        const std::int64_t first = r / *p * *p;
        for (std::int64_t i = first; i < first + *p && i < n; ++i) out.push_back(i);
      }
      break;
    case Kind::Strided:
      if (p && *p > 0) {
        for (std::int64_t i = r % *p; i < n; i += *p) out.push_back(i);
      }
      break;
  }
  return out;
}

std::string CommModel::to_string() const {
  switch (kind) {
    case Kind::World:
      return "world";
    case Kind::Self:
      return "self";
    case Kind::Block:
      return "blocks of " + param.to_string() + " (color r / " + param.to_string() + ")";
    case Kind::Strided:
      return "every " + param.to_string() + "th rank (color r mod " + param.to_string() + ")";
  }
  return "?";
}

double CollectiveEntry::bytes_at(std::int64_t n, std::int64_t members, bool at_root) const {
  const double v = (at_root ? bytes_root : bytes_other).value_at(static_cast<double>(n));
  return std::max(0.0, per_member[at_root ? 0 : 1] ? v * static_cast<double>(members) : v);
}

double CollectiveEntry::received_at(std::int64_t n, std::int64_t members, bool at_root) const {
  const double v = (at_root ? received_root : received_other).value_at(static_cast<double>(n));
  return std::max(0.0, per_member[at_root ? 2 : 3] ? v * static_cast<double>(members) : v);
}

namespace detail {

std::optional<CommModel> learn_comm(std::span<const CommObservation> obs) {
  if (obs.empty()) return std::nullopt;
  std::vector<CommModel> candidates = {CommModel{CommModel::Kind::World, {}}, CommModel{CommModel::Kind::Self, {}}};
  // Block and strided communicators: their size (stride) at each n from the observations.
  std::map<std::int64_t, std::int64_t> sizes;
  std::map<std::int64_t, std::int64_t> strides;
  bool sizes_agree = true;
  bool strides_agree = true;
  for (const CommObservation& o : obs) {
    const auto size = static_cast<std::int64_t>(o.members.size());
    auto [it, fresh] = sizes.emplace(o.n, size);
    sizes_agree = sizes_agree && (fresh || it->second == size);
    const std::int64_t stride = o.members.size() > 1 ? o.members[1] - o.members[0] : o.n;
    auto [jt, fresh2] = strides.emplace(o.n, stride);
    strides_agree = strides_agree && (fresh2 || jt->second == stride);
  }
  // Sub-communicators mostly come from process grids (rows, columns): among the laws that fit, a grid's own
  // dimension is preferred to a basis that agrees with it only on the fitted counts (floor(sqrt(n)) at 4, 8, 16).
  const auto law_of = [](const std::map<std::int64_t, std::int64_t>& m) -> std::optional<ExactLaw> {
    std::vector<Sample> s;
    for (const auto& [n, v] : m) s.push_back({static_cast<double>(n), static_cast<double>(v)});
    const std::vector<ExactLaw> laws = fit_exact_all(s);
    if (laws.empty()) return std::nullopt;
    for (const Basis b :
         {Basis::Dims2Minor, Basis::Dims2Major, Basis::Dims3Third, Basis::Dims3Second, Basis::Dims3First}) {
      for (const ExactLaw& l : laws) {
        if (l.basis == b && l.a == Rational::make(1) && l.b == Rational::make(0)) return l;
      }
    }
    return laws.front();
  };
  if (sizes_agree) {
    if (const std::optional<ExactLaw> l = law_of(sizes)) candidates.push_back({CommModel::Kind::Block, *l});
  }
  if (strides_agree) {
    if (const std::optional<ExactLaw> l = law_of(strides)) candidates.push_back({CommModel::Kind::Strided, *l});
  }
  for (const CommModel& c : candidates) {
    bool ok = true;
    for (const CommObservation& o : obs) {
      if (c.members(o.r, o.n) != o.members) {
        ok = false;
        break;
      }
    }
    if (ok) return c;
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace p3s::modeler
