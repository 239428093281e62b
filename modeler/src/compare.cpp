// SPDX-License-Identifier: BSD-3-Clause
// A model's prediction at a real run's process count against that run: per phase, the communication pattern
// (exact, or the first difference), the number of communications, the weight, and the errors of volumes and work.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "p3s/analyzer/run_time.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"

namespace p3s::modeler {
namespace {

/// One action in the terms both sides share: a message (its kind and peer), an Isend's completion, or a
/// collective (its operation and root); requests' bookkeeping aside.
struct Step {
  mpi::ActionKind kind = mpi::ActionKind::Send;
  mpi::Collective collective = mpi::Collective::None;
  std::int64_t peer = -1;  ///< a message's peer or a collective's root; -1 for none
  [[nodiscard]] std::string text() const {
    const std::string what = kind == mpi::ActionKind::Collective ? std::string(mpi::name(collective)) + " root"
                                                                 : std::string(mpi::name(kind));
    return peer >= 0 ? what + " " + std::to_string(peer) : what;
  }
  /// Sends and collectives: what the validation counts as communications.
  [[nodiscard]] bool communicates() const {
    return kind == mpi::ActionKind::Send || kind == mpi::ActionKind::Collective;
  }
};

/// What a call does: its function and its steps, in order for sends and receives, as a sorted list for
/// completions (a Waitall completes in any order).
std::string describe(const std::string& call, const std::vector<Step>& steps, bool unordered) {
  std::vector<std::string> parts;
  for (const Step& s : steps) parts.push_back(s.text());
  if (unordered) std::sort(parts.begin(), parts.end());
  std::string out = call;
  for (const std::string& p : parts) out += " " + p;
  return out;
}

bool completion(mpi::Function f) { return mpi::kind(f) == mpi::CallKind::Completion; }

std::vector<Step> actual_steps(const analyzer::SigEvent& e) {
  std::vector<Step> out;
  for (const analyzer::SigAction& a : e.actions) {
    switch (a.kind) {
      case mpi::ActionKind::Send:
      case mpi::ActionKind::Recv:
      case mpi::ActionKind::IrecvPost:
        out.push_back({a.kind, mpi::Collective::None, a.peer});
        break;
      case mpi::ActionKind::IsendComplete:
        out.push_back({a.kind, mpi::Collective::None, -1});
        break;
      case mpi::ActionKind::Collective:
        out.push_back({a.kind, a.collective, a.root});
        break;
      default:
        break;
    }
  }
  return out;
}

std::vector<Step> predicted_steps(const PredictedCall& c) {
  std::vector<Step> out;
  for (const PredictedAction& a : c.actions) {
    if (a.kind == mpi::ActionKind::Collective) {
      out.push_back({a.kind, a.collective, a.root});
    } else {
      out.push_back({a.kind, mpi::Collective::None, a.kind == mpi::ActionKind::IsendComplete ? -1 : a.peer});
    }
  }
  return out;
}

std::int64_t communications(const std::vector<Step>& steps) {
  return std::count_if(steps.begin(), steps.end(), [](const Step& s) { return s.communicates(); });
}

/// Actions whose sizes are compared one to one (messages and collectives).
bool sized(mpi::ActionKind k) {
  return k == mpi::ActionKind::Send || k == mpi::ActionKind::Recv || k == mpi::ActionKind::IrecvPost ||
         k == mpi::ActionKind::Collective;
}

/// A phase's comparison, rank by rank: sums that become the PhaseCheck's means.
class PhaseComparison {
 public:
  explicit PhaseComparison(PhaseCheck& check) : c_(check) {}

  void rank(const analyzer::SigRank& r, const PredictedRank& pr) {
    work(r, pr);
    for (const analyzer::SigEvent& e : r.events) {
      c_.comms_actual += communications(actual_steps(e));
      for (const analyzer::SigAction& a : e.actions) volume_actual_ += sized(a.kind) ? a.bytes : 0;
    }
    for (const PredictedCall& pc : pr.calls) {
      c_.comms_predicted += communications(predicted_steps(pc));
      for (const PredictedAction& a : pc.actions) volume_predicted_ += sized(a.kind) ? a.bytes : 0;
    }
    calls(r, pr);
  }

  void finish() {
    c_.volume_error_mean = volume_n_ != 0 ? volume_sum_ / static_cast<double>(volume_n_) : 0;
    c_.volume_error_total = volume_actual_ > 0      ? std::abs(volume_predicted_ - volume_actual_) / volume_actual_
                            : volume_predicted_ > 0 ? 1
                                                    : 0;
    c_.work_error_mean = work_n_ != 0 ? work_sum_ / static_cast<double>(work_n_) : 0;
    c_.work_error_total =
        work_total_actual_ > 0 ? std::abs(work_total_predicted_ - work_total_actual_) / work_total_actual_ : 0;
  }

 private:
  /// The rank's work per instance, against the prediction.
  void work(const analyzer::SigRank& r, const PredictedRank& pr) {
    double actual = r.tail_work.n != 0 ? r.tail_work.mean : 0;
    double predicted = pr.tail_work;
    for (const analyzer::SigEvent& e : r.events) actual += e.burst_work.mean;
    for (const PredictedCall& pc : pr.calls) predicted += pc.burst_work;
    work_total_predicted_ += predicted;
    work_total_actual_ += actual;
    if (actual > 0) {
      const double err = std::abs(predicted - actual) / actual;
      work_sum_ += err;
      ++work_n_;
      c_.work_error_max = std::max(c_.work_error_max, err);
    }
  }

  /// The rank's calls one by one, up to the first that differs (the pattern), with the sizes of those alike.
  void calls(const analyzer::SigRank& r, const PredictedRank& pr) {
    const std::size_t common = std::min(pr.calls.size(), r.events.size());
    for (std::size_t i = 0; i < std::max(pr.calls.size(), r.events.size()); ++i) {
      const bool unordered = i < r.events.size() && completion(r.events[i].function);
      const std::string want =
          i < r.events.size() ? describe(r.events[i].call, actual_steps(r.events[i]), unordered) : "nothing";
      const std::string got =
          i < pr.calls.size() ? describe(pr.calls[i].call, predicted_steps(pr.calls[i]), unordered) : "nothing";
      if (want != got) {
        if (c_.pattern_exact) {
          c_.first_mismatch = "rank " + std::to_string(r.rank) + ", call " + std::to_string(i) + ": expected " + want +
                              ", predicted " + got;
        }
        c_.pattern_exact = false;
        return;
      }
      if (i >= common) return;
      if (!unordered) volumes(r.events[i], pr.calls[i]);
    }
  }

  /// Sizes of the actions that match one to one (messages and collectives, in order).
  void volumes(const analyzer::SigEvent& e, const PredictedCall& pc) {
    std::size_t k = 0;
    for (const analyzer::SigAction& a : e.actions) {
      if (!sized(a.kind)) continue;
      while (k < pc.actions.size() && pc.actions[k].kind == mpi::ActionKind::IsendComplete) ++k;
      if (k >= pc.actions.size()) break;
      const PredictedAction& pa = pc.actions[k++];
      if (a.bytes <= 0) continue;
      const double err = std::abs(pa.bytes - a.bytes) / a.bytes;
      volume_sum_ += err;
      ++volume_n_;
      c_.volume_error_max = std::max(c_.volume_error_max, err);
    }
  }

  PhaseCheck& c_;
  double volume_sum_ = 0;
  std::int64_t volume_n_ = 0;
  double volume_actual_ = 0;
  double volume_predicted_ = 0;
  double work_sum_ = 0;
  std::int64_t work_n_ = 0;
  double work_total_predicted_ = 0;
  double work_total_actual_ = 0;
};

/// The phase predicted at n against the run's, into c.
void compare_phase(const PhaseModel& pm, const analyzer::SigPhase& actual, std::int64_t n, PhaseCheck& c) {
  const PhasePredictor predictor(pm, n);
  c.weight_predicted = predictor.weight();
  PhaseComparison compare(c);
  // Each receive takes the size of the message that reaches it, as the written trace and the replay have it.
  const PhaseConsistency matched = check_phase(predictor, pm.id, n);
  std::int64_t others = 0;  // the communications of threads other than each process's first, which no model holds
  for (const analyzer::SigRank& r : actual.ranks) {
    if (r.thread == 0) {
      PredictedRank pr = predictor.rank(r.rank);
      matched.settle(pr);
      compare.rank(r, pr);
    } else {
      for (const analyzer::SigEvent& e : r.events) others += communications(actual_steps(e));
    }
  }
  compare.finish();
  if (others == 0) return;
  c.comms_actual += others;
  if (c.pattern_exact) {
    c.first_mismatch = "threads other than each process's first make " + std::to_string(others) +
                       " communications, which the model leaves out (it holds each process's first thread)";
  }
  c.pattern_exact = false;
}

/// The model's time step at n against the steps the run's analysis marks; none where the model has no step.
std::optional<StepCheck> step_check(const Model& model, const analyzer::Signature& run, std::int64_t n) {
  StepCheck c;
  for (const analyzer::StepKind& k : step_kinds(model.phases, n)) {
    c.kinds.push_back(k.id);
    c.predicted += k.weight;
  }
  if (c.kinds.empty()) return std::nullopt;
  for (const analyzer::StepKind& k : analyzer::step_kinds(run)) c.actual += k.weight;
  return c;
}

/// The MPI functions each of the model's phases calls and whether it is a kind of the time step, as phases are
/// related by.
std::vector<PhaseKey> keys_of(const Model& m) {
  std::vector<PhaseKey> out;
  for (const PhaseModel& p : m.phases) out.push_back({p.calls, p.step});
  return out;
}

}  // namespace

std::vector<std::optional<std::uint32_t>> relate_model_phases(const Model& m, const analyzer::Signature& s) {
  return relate_phase_keys(keys_of(m), phase_keys(s));
}

Run merged_for(const Model& model, Run run) {
  (void)relate_merging_kinds(keys_of(model), run.signature);
  return run;
}

Validation compare_with(const Model& model, const Run& given) {
  const Run run = merged_for(model, given);
  const ScopedDimsRule rule(model.dims_rule);
  if (!run.signature.mpi_library.empty() &&
      dims_rule_of_library(run.signature.mpi_library).value_or(DimsRule::OpenMpi) != model.dims_rule) {
    throw InputError("signature '" + run.path.string() + "' is a run on " + run.signature.mpi_library +
                     ", whose process grids differ from those of the model's runs (" +
                     std::string(dims_rule_name(model.dims_rule)) + "); compare with a run on the same MPI");
  }
  const std::string app = application_command(run.signature.command);
  if (!model.application.empty() && !app.empty() && app != model.application) {
    throw InputError("signature '" + run.path.string() + "' is a run of `" + app + "`, the model of `" +
                     model.application + "`; compare with a run of the same application and input");
  }
  Validation v;
  v.n = run.n();
  v.signature = run.path.string();
  v.fitted_on = model.fitted_counts();
  const std::vector<std::optional<std::uint32_t>> rel = relate_model_phases(model, run.signature);
  std::vector<bool> used(run.signature.phases.size(), false);
  for (std::size_t p = 0; p < model.phases.size(); ++p) {
    const PhaseModel& pm = model.phases[p];
    PhaseCheck c;
    c.phase = pm.id;
    if (!rel[p]) {
      c.pattern_exact = false;
      c.first_mismatch = "the run has no phase calling " + pm.calls;
      v.phases.push_back(c);
      continue;
    }
    used[*rel[p]] = true;
    const analyzer::SigPhase& actual = run.signature.phases[*rel[p]];
    c.run_phase = actual.listed_id();
    c.relevant = actual.relevant;
    c.weight_actual = static_cast<std::int64_t>(actual.weight);
    c.approximate_groups = pm.approximate_groups(v.n);
    c.approximate_sizes = pm.approximate_sizes();
    c.caveats = pm.caveats(v.n, v.fitted_on);
    try {
      compare_phase(pm, actual, v.n, c);
    } catch (const ModelError& e) {
      // A phase the model cannot evaluate at this n is what the validation reports, not the end of the fit.
      c.error = e.what();
      c.pattern_exact = false;
      c.first_mismatch = "not evaluated";
    }
    v.phases.push_back(c);
  }
  v.time_step = step_check(model, run.signature, v.n);
  for (std::size_t j = 0; j < used.size(); ++j) {
    if (!used[j]) {
      v.unrelated.push_back("phase " + std::to_string(run.signature.phases[j].listed_id()) + " of the run (" +
                            analyzer::phase_calls(run.signature.phases[j]) + ") is not in the model");
    }
  }
  return v;
}

std::string validation_report(const Validation& v) {
  std::ostringstream out;
  out << "validation of the model fitted on n =";
  for (const std::int64_t n : v.fitted_on) out << ' ' << n;
  out << " against the run at n = " << v.n << " (" << v.signature << ")\n";
  out << " phase  pattern  comms (pred/real)  weight (pred/real)  volume err phase  per message mean/max  "
         "work err phase  per rank mean/max\n";
  char buf[256];
  for (const PhaseCheck& c : v.phases) {
    if (!c.error.empty()) {
      out << ' ' << std::setw(5) << c.phase << "  not evaluated: " << c.error << '\n';
      continue;
    }
    std::snprintf(buf, sizeof buf,
                  " %5u  %-7s  %8lld/%-8lld  %9lld/%-8lld  %15.2f%%  %11.2f%% /%6.2f%%  %13.1f%%  %8.1f%% /%6.1f%%\n",
                  c.phase, c.pattern_exact ? "exact" : "differs", static_cast<long long>(c.comms_predicted),
                  static_cast<long long>(c.comms_actual), static_cast<long long>(c.weight_predicted),
                  static_cast<long long>(c.weight_actual), 100 * c.volume_error_total, 100 * c.volume_error_mean,
                  100 * c.volume_error_max, 100 * c.work_error_total, 100 * c.work_error_mean, 100 * c.work_error_max);
    out << buf;
    if (!c.pattern_exact) out << "        first difference: " << c.first_mismatch << '\n';
    if (!c.approximate_groups.empty()) {
      out << "        approximate (kept as measured at other n):";
      for (const std::uint32_t g : c.approximate_groups) out << " group " << g;
      out << '\n';
    }
    for (const std::string& caveat : c.caveats) out << "        caveat: " << caveat << '\n';
  }
  for (const std::string& u : v.unrelated) out << " note: " << u << '\n';
  if (v.time_step) {
    out << " time step: phases";
    for (const std::uint32_t k : v.time_step->kinds) out << ' ' << k;
    out << ", " << v.time_step->predicted << '/' << v.time_step->actual << " steps (pred/real)"
        << (v.time_step->predicted == v.time_step->actual ? "" : ": differs") << '\n';
  }
  return out.str();
}

}  // namespace p3s::modeler
