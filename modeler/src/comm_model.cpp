// SPDX-License-Identifier: BSD-3-Clause
// Communicators as functions of the rank and the process count, learnt from their members in each run.
#include "comm_model.hpp"

#include "p3s/error.hpp"
#include "p3s/stable_name.hpp"

#include <algorithm>
#include <map>

namespace p3s::modeler {

std::vector<std::int64_t> CommModel::members(std::int64_t r, std::int64_t n) const {
  std::vector<std::int64_t> out;
  const std::int64_t size = size_of(r, n);
  for (std::int64_t i = 0; i < size; ++i) out.push_back(member(r, n, i));
  return out;
}

constexpr NameTable<CommModel::Kind, 4> kCommKindNames{{{{CommModel::Kind::World, "world"},
                                                         {CommModel::Kind::Self, "self"},
                                                         {CommModel::Kind::Block, "block"},
                                                         {CommModel::Kind::Strided, "strided"}}}};

std::string_view comm_kind_name(CommModel::Kind kind) noexcept { return kCommKindNames.name(kind, "world"); }

std::optional<CommModel::Kind> comm_kind_named(std::string_view name) noexcept { return kCommKindNames.value(name); }

std::int64_t CommModel::size_of(std::int64_t r, std::int64_t n) const {
  const std::int64_t p = param.integer_at(n).value_or(0);
  switch (kind) {
    case Kind::World:
      return n;
    case Kind::Self:
      return 1;
    case Kind::Block:
      return p > 0 ? std::max<std::int64_t>(0, std::min(p, n - r / p * p)) : 0;
    case Kind::Strided:
      return p > 0 && r % p < n ? (n - 1 - r % p) / p + 1 : 0;
  }
  return 0;
}

std::int64_t CommModel::member(std::int64_t r, std::int64_t n, std::int64_t index) const {
  if (index < 0 || index >= size_of(r, n)) return -1;
  const std::int64_t p = param.integer_at(n).value_or(0);
  switch (kind) {
    case Kind::World:
      return index;
    case Kind::Self:
      return r;
    case Kind::Block:
      return r / p * p + index;
    case Kind::Strided:
      return r % p + index * p;
  }
  return -1;
}

std::int64_t CommModel::color(std::int64_t r, std::int64_t n) const {
  const std::int64_t p = param.integer_at(n).value_or(0);
  switch (kind) {
    case Kind::World:
      return 0;
    case Kind::Self:
      return r;
    case Kind::Block:
      return p > 0 ? r / p : 0;
    case Kind::Strided:
      return p > 0 ? r % p : 0;
  }
  return 0;
}

std::int64_t CommModel::key(std::int64_t r, std::int64_t) const { return kind == Kind::Self ? 0 : r; }

std::int64_t CommModel::index_of(std::int64_t r, std::int64_t n) const {
  const std::int64_t p = param.integer_at(n).value_or(0);
  switch (kind) {
    case Kind::World:
      return r;
    case Kind::Self:
      return 0;
    case Kind::Block:
      return p > 0 ? r % p : 0;
    case Kind::Strided:
      return p > 0 ? r / p : 0;
  }
  return 0;
}

std::string CommModel::color_rule(std::int64_t n) const {
  const auto p = [&] {
    if (n > 0) return std::to_string(param.integer_at(n).value_or(0));
    const std::string law = param.to_string();
    return law.find_first_of(" +-*/") == std::string::npos ? law : "(" + law + ")";
  };
  switch (kind) {
    case Kind::World:
      return "0";
    case Kind::Self:
      return "r";
    case Kind::Block:
      return "r / " + p();
    case Kind::Strided:
      return "r % " + p();
  }
  return "0";
}

std::string CommModel::key_rule() const { return kind == Kind::Self ? "0" : "r"; }

std::string CommModel::size_rule() const {
  switch (kind) {
    case Kind::World:
      return "n";
    case Kind::Self:
      return "1";
    case Kind::Block:
      return param.to_string();
    case Kind::Strided:
      return "ceil(n / " + param.to_string() + ")";
  }
  return "n";
}

bool CommModel::same_at(const CommModel& other, std::int64_t n) const {
  if (kind != other.kind) return false;
  if (kind == Kind::World || kind == Kind::Self) return true;
  return param.integer_at(n) == other.param.integer_at(n);
}

void CommModel::check_at(std::int64_t n) const {
  if (kind != Kind::Block && kind != Kind::Strided) return;
  const std::optional<std::int64_t> p = param.integer_at(n);
  if (!p || *p < 1) {
    throw ModelError("the communicator " + to_string() + " does not exist at n = " + std::to_string(n) + ": its " +
                     (kind == Kind::Block ? "block size " : "stride ") + param.to_string() +
                     " is not a whole number of ranks there (it is at " + whole_nearby(param, n) +
                     "); the model cannot be evaluated at that n");
  }
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

CommObservation observe_comm(const analyzer::Signature& run, std::int64_t n, std::int64_t r, std::uint32_t comm,
                             std::uint32_t comm_size) {
  CommObservation o{n, r, {}, mpi::Function::Other};
  for (const analyzer::SigComm& c : run.communicators) {
    if (c.id != comm) continue;
    // MPI_COMM_SELF names no members in the archive: its one member is whoever calls.
    if (c.kind == analyzer::CommKind::Self) {
      o.members = {r};
    } else {
      o.members.assign(c.ranks.begin(), c.ranks.end());
    }
    o.created_by = c.created_by;
  }
  if (o.members.empty() && comm_size == static_cast<std::uint32_t>(n)) {
    for (std::int64_t i = 0; i < n; ++i) o.members.push_back(i);
  }
  return o;
}

std::optional<CommModel> learn_comm(std::span<const CommObservation> obs, const WholeAt& whole) {
  if (obs.empty()) return std::nullopt;
  std::vector<CommModel> candidates = {CommModel{CommModel::Kind::World, {}}, CommModel{CommModel::Kind::Self, {}}};
  // Block and strided communicators: their size (stride) at each n from the observations. A split whose pieces do
  // not divide n leaves the last block short (a stride's last pieces one rank short): a block is as long as the
  // longest piece, and a piece of one rank says nothing of a stride. Every candidate is checked on every rank below.
  std::map<std::int64_t, std::int64_t> sizes;
  std::map<std::int64_t, std::int64_t> strides;
  bool strides_agree = true;
  for (const CommObservation& o : obs) {
    std::int64_t& size = sizes[o.n];
    size = std::max(size, static_cast<std::int64_t>(o.members.size()));
    if (o.members.size() < 2) continue;
    const std::int64_t stride = o.members[1] - o.members[0];
    auto [jt, fresh] = strides.emplace(o.n, stride);
    strides_agree = strides_agree && (fresh || jt->second == stride);
  }
  for (const CommObservation& o : obs) {
    if (!strides.contains(o.n)) strides.emplace(o.n, o.n);  // every piece one rank: ranks o.n apart
  }
  // Sub-communicators mostly come from process grids (rows, columns): among the laws that fit, a grid's own
  // dimension is preferred to a basis that agrees with it only on the fitted counts (floor(sqrt(n)) at 4, 8, 16).
  const auto law_of = [&whole](const std::map<std::int64_t, std::int64_t>& m) -> std::optional<ExactLaw> {
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
    return prefer_whole(laws, s, whole);
  };
  if (const std::optional<ExactLaw> l = law_of(sizes)) candidates.push_back({CommModel::Kind::Block, *l});
  if (strides_agree) {
    if (const std::optional<ExactLaw> l = law_of(strides)) candidates.push_back({CommModel::Kind::Strided, *l});
  }
  // The call that created the communicator, when every run says the same.
  mpi::Function created_by = obs.front().created_by;
  for (const CommObservation& o : obs) {
    if (o.created_by != created_by) created_by = mpi::Function::Other;
  }
  for (CommModel& c : candidates) {
    bool ok = true;
    for (const CommObservation& o : obs) {
      if (c.members(o.r, o.n) != o.members) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    c.created_by = created_by;
    return c;
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace p3s::modeler
