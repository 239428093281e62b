// SPDX-License-Identifier: BSD-3-Clause
// What a phase check says (its summary, the line that refuses a phase, the note of a repair), how a repair changes a
// rank's calls, and the check of a whole prediction with the user's policy.
#include <algorithm>
#include <stdexcept>

#include "p3s/error.hpp"
#include "p3s/modeler/phase_check.hpp"

namespace p3s::modeler {
namespace {

/// Each kind of flaw in words, singular and plural.
struct FlawWords {
  std::string_view name;
  std::string_view one;
  std::string_view many;
};

constexpr std::array<FlawWords, kFlawKinds> kWords{{
    {"unmatched_send", "send without a receive", "sends without a receive"},
    {"unmatched_receive", "receive without a send", "receives without a send"},
    {"truncated", "message larger than its receive", "messages larger than their receive"},
    {"peer_outside", "peer outside its communicator", "peers outside their communicator"},
    {"collective_missing", "collective missing a member", "collectives missing a member"},
    {"collective_differs", "collective that differs between members", "collectives that differ between members"},
    {"not_completed", "request never completed", "requests never completed"},
    {"completes_nothing", "completion of no request", "completions of no request"},
    {"blocked", "call that waits for ever", "calls that wait for ever"},
}};

/// The fixes of one rank: a range of the sorted fixes.
std::pair<std::vector<Fix>::const_iterator, std::vector<Fix>::const_iterator> fixes_of(const std::vector<Fix>& fixes,
                                                                                       std::int64_t rank) {
  const auto lo =
      std::lower_bound(fixes.begin(), fixes.end(), rank, [](const Fix& f, std::int64_t r) { return f.rank < r; });
  const auto hi = std::upper_bound(lo, fixes.end(), rank, [](std::int64_t r, const Fix& f) { return r < f.rank; });
  return {lo, hi};
}

/// The completion of the request that `origin` (call `call`) started, as the predictor writes one.
PredictedAction completion_of(const PredictedAction& origin, std::int32_t call) {
  PredictedAction a;
  a.started = call;
  a.comm = origin.comm;
  a.comm_size = origin.comm_size;
  if (origin.kind == mpi::ActionKind::IrecvPost) {
    a.kind = mpi::ActionKind::Recv;
    a.peer = origin.peer;
    a.tag = origin.tag;
    a.bytes = origin.bytes;
  } else {
    a.kind = mpi::ActionKind::IsendComplete;
  }
  return a;
}

}  // namespace

std::string_view flaw_name(Flaw f) noexcept { return kWords[static_cast<std::size_t>(f)].name; }

std::uint64_t PhaseConsistency::count() const noexcept {
  std::uint64_t total = 0;
  for (const std::uint64_t k : flaws) total += k;
  return total;
}

std::string PhaseConsistency::summary() const {
  std::string s;
  for (std::size_t f = 0; f < kFlawKinds; ++f) {
    if (flaws[f] == 0) continue;
    s += (s.empty() ? "" : ", ") + std::to_string(flaws[f]) + " " +
         std::string(flaws[f] == 1 ? kWords[f].one : kWords[f].many);
  }
  return s;
}

std::string PhaseConsistency::diagnosis() const {
  std::string s = "phase " + std::to_string(phase) + " predicted at n = " + std::to_string(n) + " is inconsistent";
  if (!first.empty()) s += ": " + first.front().what;
  return s + " (" + summary() + " in the phase)";
}

std::string PhaseConsistency::refusal() const {
  return diagnosis() +
         "; a replay would hang or fail there. Fit the model with runs closer to n = " + std::to_string(n) +
         (repairable ? ", or leave out --strict to have it repaired: what does not match dropped, and said" : "");
}

std::array<std::uint64_t, 3> PhaseConsistency::changes() const noexcept {
  std::array<std::uint64_t, 3> out{0, 0, 0};
  for (const Fix& f : fixes) {
    if (f.kind == Fix::Kind::Drop) ++out[0];
    if (f.kind == Fix::Kind::Enlarge && !f.follows) ++out[1];
    if (f.kind == Fix::Kind::CompleteAtEnd) ++out[2];
  }
  return out;
}

std::string PhaseConsistency::repair_note() const {
  if (consistent()) return {};
  const std::array<std::uint64_t, 3> c = changes();
  std::string done;
  const auto add = [&done](std::uint64_t k, const char* what) {
    if (k != 0) done += (done.empty() ? "" : ", ") + std::to_string(k) + " " + what;
  };
  add(c[0], c[0] == 1 ? "action dropped" : "actions dropped");
  add(c[1], c[1] == 1 ? "receive enlarged" : "receives enlarged");
  add(c[2],
      c[2] == 1 ? "request completed at the end of the instance" : "requests completed at the end of the instance");
  return "phase " + std::to_string(phase) + " repaired at n = " + std::to_string(n) + ": " + summary() +
         " (first: " + (first.empty() ? std::string("none kept") : first.front().what) + "); " + done;
}

void PhaseConsistency::settle(PredictedRank& rank) const {
  const auto lo = std::lower_bound(received.begin(), received.end(), rank.rank,
                                   [](const Received& x, std::int64_t r) { return x.rank < r; });
  for (auto it = lo; it != received.end() && it->rank == rank.rank; ++it) {
    if (it->call < 0 || static_cast<std::size_t>(it->call) >= rank.calls.size()) continue;
    std::vector<PredictedAction>& actions = rank.calls[static_cast<std::size_t>(it->call)].actions;
    if (it->action < 0 || static_cast<std::size_t>(it->action) >= actions.size()) continue;
    PredictedAction& a = actions[static_cast<std::size_t>(it->action)];
    if (a.kind == mpi::ActionKind::Recv && it->bytes) a.bytes = *it->bytes;
    if (it->tag) a.tag = *it->tag;
  }
}

void PhaseConsistency::repair(PredictedRank& rank) const {
  settle(rank);
  const auto [lo, hi] = fixes_of(fixes, rank.rank);
  if (lo == hi) return;
  const auto dropped = [&](std::int32_t call, std::int32_t action) {
    return std::any_of(lo, hi,
                       [&](const Fix& f) { return f.kind == Fix::Kind::Drop && f.call == call && f.action == action; });
  };
  const auto action_at = [&rank](const Fix& f) -> PredictedAction* {
    if (f.call < 0 || static_cast<std::size_t>(f.call) >= rank.calls.size()) return nullptr;
    std::vector<PredictedAction>& actions = rank.calls[static_cast<std::size_t>(f.call)].actions;
    return static_cast<std::size_t>(f.action) < actions.size() ? &actions[static_cast<std::size_t>(f.action)] : nullptr;
  };
  // Sizes first, so that a completion made at the end takes the enlarged size; then the completions, from the
  // calls as predicted; then the drops, last action first, so that the indices of the others hold.
  for (auto it = lo; it != hi; ++it) {
    if (PredictedAction* a = action_at(*it); a != nullptr && it->kind == Fix::Kind::Enlarge) {
      a->bytes = std::max(a->bytes, it->bytes);
    }
  }
  std::vector<PredictedAction> closing;
  for (auto it = lo; it != hi; ++it) {
    const PredictedAction* a = action_at(*it);
    if (a != nullptr && it->kind == Fix::Kind::CompleteAtEnd && !dropped(it->call, it->action)) {
      closing.push_back(completion_of(*a, it->call));
    }
  }
  for (auto it = hi; it != lo;) {
    --it;
    if (it->kind != Fix::Kind::Drop || action_at(*it) == nullptr) continue;
    std::vector<PredictedAction>& actions = rank.calls[static_cast<std::size_t>(it->call)].actions;
    actions.erase(actions.begin() + it->action);
  }
  if (closing.empty()) return;
  // The replay would wait for these requests at the end of the instance, after the tail: the MPI_Waitall that now
  // completes them takes the tail's burst, so the instance lasts as long.
  PredictedCall wait;
  wait.function = mpi::Function::MPI_Waitall;
  wait.call = std::string(mpi::name(wait.function));
  wait.actions = std::move(closing);
  wait.burst_work = rank.tail_work;
  wait.burst_ns = rank.tail_ns;
  if (!wait.burst_ns && !rank.calls.empty() && rank.calls.front().burst_ns) wait.burst_ns = 0;
  rank.tail_work = 0;
  if (rank.tail_ns) rank.tail_ns = 0;
  rank.calls.push_back(std::move(wait));
}

bool PredictionCheck::repaired() const noexcept {
  return std::any_of(phases.begin(), phases.end(), [](const PhaseConsistency& p) { return !p.consistent(); });
}

std::vector<std::string> PredictionCheck::notes() const {
  std::vector<std::string> out;
  for (const PhaseConsistency& p : phases) {
    if (!p.consistent()) out.push_back(p.repair_note());
  }
  return out;
}

namespace {

/// Checks a repaired phase again: a repair that leaves flaws behind is a bug, never a trace to write.
void check_repaired(const PhaseConsistency& check, const PhasePredictor& predictor) {
  PhaseChecker again(check.phase, check.n);
  for (std::int64_t r = 0; r < check.n; ++r) {
    PredictedRank rank = predictor.rank(r);
    check.repair(rank);
    again.add(rank);
  }
  const PhaseConsistency after = again.finish();
  if (!after.consistent()) {
    throw TraceError("phase " + std::to_string(check.phase) + " at n = " + std::to_string(check.n) +
                     ": the repair left it inconsistent (" + after.summary() +
                     (after.first.empty() ? std::string() : "; " + after.first.front().what) +
                     "); this is a bug of p3s: please report it with the model");
  }
}

}  // namespace

PredictionCheck check_prediction(const Model& model, const std::vector<PhasePredictor>& predictors, std::int64_t n,
                                 OnInconsistency policy) {
  if (predictors.size() != model.phases.size()) {
    throw std::logic_error(std::to_string(predictors.size()) + " phases evaluated for a model of " +
                           std::to_string(model.phases.size()));
  }
  PredictionCheck out;
  out.n = n;
  for (std::size_t p = 0; p < predictors.size(); ++p) {
    PhaseConsistency check = check_phase(predictors[p], model.phases[p].id, n);
    if (!check.consistent()) {
      if (policy == OnInconsistency::Refuse) throw TraceError(check.refusal());
      if (!check.repairable) {
        throw TraceError(check.diagnosis() +
                         "; it cannot be repaired: its calls still wait for each other after dropping what they waited "
                         "for at many places. Fit the model with runs closer to n = " +
                         std::to_string(n));
      }
      check_repaired(check, predictors[p]);
    }
    out.phases.push_back(std::move(check));
  }
  return out;
}

CheckedPrediction checked_timed_prediction(const Model& model, std::int64_t n, OnInconsistency policy) {
  if (!has_time_laws(model)) {
    throw InputError(
        "the model has no compute-time laws (it was written by an earlier p3s); re-run `p3s model` on "
        "its signatures");
  }
  CheckedPrediction out;
  for (const PhaseModel& p : model.phases) out.phases.emplace_back(p, n);
  out.check = check_prediction(model, out.phases, n, policy);
  return out;
}

}  // namespace p3s::modeler
