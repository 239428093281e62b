// SPDX-License-Identifier: BSD-3-Clause
// Loading the runs of a series and relating their phases.
#include "p3s/modeler/series.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "p3s/shell_words.hpp"

#include "p3s/align.hpp"
#include "p3s/analyzer/run_time.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"

namespace p3s::modeler {
namespace {

std::string basename(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Launcher options that take a value (Open MPI, MPICH/Hydra, Slurm's srun), and the one that takes two.
const std::set<std::string>& options_with_value() {
  static const std::set<std::string> s = {"-np",          "-n",
                                          "--np",         "-c",
                                          "-N",           "--n",
                                          "--map-by",     "--bind-to",
                                          "--rank-by",    "-H",
                                          "--host",       "-host",
                                          "--hostfile",   "-hostfile",
                                          "-machinefile", "--machinefile",
                                          "-f",           "-x",
                                          "-ppn",         "--ppn",
                                          "-genv",        "--cpus-per-task",
                                          "--ntasks",     "--nodes",
                                          "-wdir",        "--wdir",
                                          "-env",         "--cpus-per-proc",
                                          "--npernode",   "-npernode",
                                          "--npersocket"};
  return s;
}

/// The runs' total work per phase (weight x mean instance work).
double total_work(const analyzer::SigPhase& p) { return static_cast<double>(p.weight) * p.work.mean; }

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * share);
  return buf;
}

/// Whether the MPI functions one phase calls include all those the other calls: where an algorithm takes another
/// path at another n it adds calls (polling beyond 2 processes, an exchange a side of 1 skips).
bool one_includes_the_other(const std::string& a, const std::string& b) {
  return calls_include(a, b) || calls_include(b, a);
}

}  // namespace

bool calls_include(const std::string& a, const std::string& b) {
  const auto words = [](const std::string& s) {
    std::istringstream in(s);
    return std::set<std::string>{std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
  };
  const std::set<std::string> x = words(a);
  const std::set<std::string> y = words(b);
  return std::includes(x.begin(), x.end(), y.begin(), y.end());
}

std::size_t launcher_words(const std::vector<std::string>& w) {
  // A launcher, by name or as Debian's alternatives name each MPI's own (mpiexec.mpich, mpirun.openmpi).
  static const std::set<std::string> launchers = {"mpirun", "mpiexec", "orterun", "srun", "aprun"};
  const auto launcher = [](const std::string& word) {
    const std::string name = basename(word);
    return launchers.count(name) != 0 || launchers.count(name.substr(0, name.find('.'))) != 0;
  };
  if (w.empty() || !launcher(w[0])) return 0;
  std::size_t i = 1;
  while (i < w.size() && w[i].size() > 1 && w[i][0] == '-') {
    const std::string opt = w[i].substr(0, w[i].find('='));
    const bool inline_value = w[i].find('=') != std::string::npos;
    ++i;
    if (inline_value) continue;
    if (opt == "--mca" || opt == "-mca" || opt == "--gmca") {
      i += 2;
    } else if (options_with_value().count(opt) != 0) {
      ++i;
    }
  }
  return std::min(i, w.size());
}

std::string application_command(const std::string& command) {
  const std::vector<std::string> w = split_words(command);
  const std::size_t i = launcher_words(w);
  if (i >= w.size()) return {};
  // Quoted again: an argument holding a space stays one ("app 'x y'" is another input than "app x y").
  std::string out = quote_word(basename(w[i]));
  for (std::size_t k = i + 1; k < w.size(); ++k) out += " " + quote_word(w[k]);
  return out;
}

std::string series_mpi_library(std::span<const Run> runs) {
  const Run* named = nullptr;
  for (const Run& r : runs) {
    if (r.signature.mpi_library.empty()) continue;
    if (named == nullptr) {
      named = &r;
      continue;
    }
    // A library of unknown rule is modelled with Open MPI's grids, so only the rules the model would use matter.
    const auto rule = [](const Run& x) {
      return dims_rule_of_library(x.signature.mpi_library).value_or(DimsRule::OpenMpi);
    };
    if (rule(r) != rule(*named)) {
      throw InputError("signature '" + r.path.string() + "' is a run on " + r.signature.mpi_library + " but '" +
                       named->path.string() + "' on " + named->signature.mpi_library +
                       ", whose process grids differ; record every run of a series with the same MPI");
    }
  }
  return named == nullptr ? std::string() : named->signature.mpi_library;
}

std::vector<Run> load_runs(std::span<const std::filesystem::path> inputs, std::size_t min_runs) {
  std::vector<Run> runs;
  for (const std::filesystem::path& in : inputs) {
    Run r;
    r.path = std::filesystem::is_directory(in) ? in / "signature.json" : in;
    r.signature = analyzer::read_signature(r.path);
    if (r.signature.processes < 1) {
      throw InputError("signature '" + r.path.string() + "' has no processes; re-run `p3s analyze` on its trace");
    }
    runs.push_back(std::move(r));
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.n() < b.n(); });
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].n() == runs[i - 1].n()) {
      throw InputError("signatures '" + runs[i - 1].path.string() + "' and '" + runs[i].path.string() +
                       "' are both runs at " + std::to_string(runs[i].n()) +
                       " processes; give one run per process count");
    }
  }
  if (runs.size() < min_runs) {
    std::string ns;
    for (const Run& r : runs) ns += (ns.empty() ? "" : ", ") + std::to_string(r.n());
    throw InputError("a model needs runs at " + std::to_string(min_runs) + " or more distinct process counts, got " +
                     std::to_string(runs.size()) + (ns.empty() ? "" : " (" + ns + ")") +
                     "; record and analyze the application at more process counts");
  }
  (void)series_mpi_library(runs);
  for (const Run& r : runs) {
    if (!r.signature.complete) {
      throw InputError("signature '" + r.path.string() +
                       "' is of a run that did not reach MPI_Finalize (recovered, analysed with --partial): its "
                       "phases' weights are not the application's; model runs that finished");
    }
    if (r.signature.work_metric != runs.front().signature.work_metric) {
      throw InputError("signature '" + r.path.string() + "' measures work as " + r.signature.work_metric + " but '" +
                       runs.front().path.string() + "' as " + runs.front().signature.work_metric +
                       "; record every run of a series with the same counters");
    }
    if (r.signature.phase_method != runs.front().signature.phase_method) {
      throw InputError("signature '" + r.path.string() + "' has phases found " +
                       std::string(analyzer::phase_method_name(r.signature.phase_method)) + " but '" +
                       runs.front().path.string() + "' " +
                       std::string(analyzer::phase_method_name(runs.front().signature.phase_method)) +
                       ", which do not correspond; analyze the runs together (p3s analyze DIR DIR...) or with the "
                       "same --phases");
    }
    const std::string a = application_command(r.signature.command);
    const std::string b = application_command(runs.front().signature.command);
    if (!a.empty() && !b.empty() && a != b) {
      throw InputError("signature '" + r.path.string() + "' is a run of `" + a + "` but '" +
                       runs.front().path.string() + "' of `" + b +
                       "`; a series must run the same application with the same input");
    }
  }
  return runs;
}

std::vector<std::optional<std::uint32_t>> relate_phase_lists(std::span<const std::string> ref,
                                                             std::span<const std::string> other) {
  std::vector<std::optional<std::uint32_t>> out(ref.size());
  // Between two related phases (or an end of the lists), the phases left on each side.
  std::vector<std::size_t> gap_ref;
  std::vector<std::size_t> gap_other;
  const auto close_gap = [&] {
    if (gap_ref.size() == 1 && gap_other.size() == 1 && one_includes_the_other(ref[gap_ref[0]], other[gap_other[0]])) {
      out[gap_ref[0]] = static_cast<std::uint32_t>(gap_other[0]);
    }
    gap_ref.clear();
    gap_other.clear();
  };
  for (const AlignStep& step :
       align(ref.size(), other.size(), [&](std::size_t i, std::size_t j) { return ref[i] == other[j]; })) {
    if (step.a != AlignStep::kNone && step.b != AlignStep::kNone) {
      close_gap();
      out[step.a] = static_cast<std::uint32_t>(step.b);
    } else if (step.a != AlignStep::kNone) {
      gap_ref.push_back(step.a);
    } else {
      gap_other.push_back(step.b);
    }
  }
  close_gap();
  return out;
}

std::vector<PhaseKey> phase_keys(const analyzer::Signature& s) {
  std::vector<PhaseKey> out;
  for (const analyzer::SigPhase& p : s.phases) out.push_back({analyzer::phase_calls(p), p.step});
  return out;
}

std::vector<std::optional<std::uint32_t>> relate_phase_keys(std::span<const PhaseKey> ref,
                                                            std::span<const PhaseKey> other) {
  const auto marks = [](std::span<const PhaseKey> keys) {
    return std::any_of(keys.begin(), keys.end(), [](const PhaseKey& k) { return k.step; });
  };
  std::vector<std::optional<std::uint32_t>> out(ref.size());
  std::vector<bool> taken(other.size(), false);
  // Relates the phases of `ref` and of `other` that `in_ref` and `in_other` keep (and neither relation took yet).
  const auto relate_among = [&](const std::function<bool(const PhaseKey&)>& in_ref,
                                const std::function<bool(const PhaseKey&)>& in_other) {
    std::vector<std::size_t> a;
    std::vector<std::size_t> b;
    std::vector<std::string> a_calls;
    std::vector<std::string> b_calls;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      if (!out[i] && in_ref(ref[i])) {
        a.push_back(i);
        a_calls.push_back(ref[i].calls);
      }
    }
    for (std::size_t j = 0; j < other.size(); ++j) {
      if (!taken[j] && in_other(other[j])) {
        b.push_back(j);
        b_calls.push_back(other[j].calls);
      }
    }
    const std::vector<std::optional<std::uint32_t>> related = relate_phase_lists(a_calls, b_calls);
    for (std::size_t x = 0; x < a.size(); ++x) {
      if (!related[x]) continue;
      out[a[x]] = static_cast<std::uint32_t>(b[*related[x]]);
      taken[b[*related[x]]] = true;
    }
  };
  const auto any = [](const PhaseKey&) { return true; };
  if (marks(ref) && marks(other)) {
    const auto step = [](const PhaseKey& k) { return k.step; };
    const auto no_step = [](const PhaseKey& k) { return !k.step; };
    relate_among(step, step);
    relate_among(no_step, no_step);
  }
  relate_among(any, any);
  return out;
}

double RelatedPhase::total_work_spread() const {
  if (total_work.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(total_work.begin(), total_work.end());
  return *hi > 0 ? (*hi - *lo) / *hi : 0;
}

PhaseRelation relate_phases(std::span<const Run> runs) {
  PhaseRelation rel;
  if (runs.empty()) return rel;
  std::vector<std::vector<PhaseKey>> keys;
  for (const Run& r : runs) keys.push_back(phase_keys(r.signature));
  // Align every run's phase list (in order of first occurrence) with the first run's, matching equal calls: the
  // longest common subsequence, so a phase present in only some runs is skipped and reported, not mis-paired.
  const std::vector<PhaseKey>& ref = keys.front();
  std::vector<std::vector<std::optional<std::uint32_t>>> match(runs.size());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::vector<PhaseKey>& other = keys[k];
    match[k] = relate_phase_keys(ref, other);
    std::vector<bool> used(other.size(), false);
    for (const std::optional<std::uint32_t>& m : match[k]) {
      if (m) used[*m] = true;
    }
    for (std::size_t j = 0; j < other.size(); ++j) {
      if (!used[j]) {
        const analyzer::SigPhase& p = runs[k].signature.phases[j];
        rel.unrelated.push_back("phase " + std::to_string(p.listed_id()) + " of the run at " +
                                std::to_string(runs[k].n()) + " processes (" + other[j].calls + ", " +
                                percent(p.share) + " of its time) has no counterpart in the run at " +
                                std::to_string(runs.front().n()) + " processes");
        rel.left_out.push_back({runs[k].n(), p.listed_id(), p.share, rel.unrelated.back()});
      }
    }
  }
  for (std::size_t i = 0; i < ref.size(); ++i) {
    RelatedPhase p;
    p.calls = ref[i].calls;
    bool complete = true;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      if (!match[k][i]) {
        complete = false;
        const analyzer::SigPhase& missing = runs.front().signature.phases[i];
        rel.unrelated.push_back("phase " + std::to_string(missing.listed_id()) + " of the run at " +
                                std::to_string(runs.front().n()) + " processes (" + ref[i].calls + ", " +
                                percent(missing.share) + " of its time) has no counterpart in the run at " +
                                std::to_string(runs[k].n()) + " processes");
        rel.left_out.push_back({runs.front().n(), missing.listed_id(), missing.share, rel.unrelated.back()});
        break;
      }
      p.ids.push_back(*match[k][i]);
      p.total_work.push_back(total_work(runs[k].signature.phases[*match[k][i]]));
    }
    if (complete) rel.phases.push_back(std::move(p));
  }
  return rel;
}

std::vector<std::optional<std::uint32_t>> relate_merging_kinds(std::span<const PhaseKey> ref, analyzer::Signature& s) {
  for (;;) {
    const std::vector<std::optional<std::uint32_t>> related = relate_phase_keys(ref, phase_keys(s));
    std::vector<bool> is_related(s.phases.size(), false);
    for (const std::optional<std::uint32_t>& j : related) {
      if (j) is_related[*j] = true;
    }
    if (merge_phase_kinds(s, is_related).empty()) return related;
  }
}

PhaseRelation relate_phases_merging_kinds(std::vector<Run>& runs) {
  // Each round merges only phases without a counterpart, so the phases only get fewer; a few rounds settle it.
  constexpr int kRounds = 4;
  std::vector<std::string> kinds;
  PhaseRelation rel = relate_phases(runs);
  for (int round = 0; round < kRounds; ++round) {
    const std::size_t before = kinds.size();
    for (std::size_t k = 0; k < runs.size(); ++k) {
      std::vector<bool> related(runs[k].signature.phases.size(), false);
      for (const RelatedPhase& p : rel.phases) related[p.ids[k]] = true;
      const std::vector<std::string> lines = merge_phase_kinds(runs[k].signature, related);
      kinds.insert(kinds.end(), lines.begin(), lines.end());
    }
    if (kinds.size() == before) break;
    rel = relate_phases(runs);
  }
  rel.kinds = std::move(kinds);
  return rel;
}

std::vector<UnrelatedPhase> relevant_left_out(const PhaseRelation& rel, double relevance) {
  std::vector<UnrelatedPhase> out;
  for (const UnrelatedPhase& u : rel.left_out) {
    if (u.share >= relevance) out.push_back(u);
  }
  return out;
}

}  // namespace p3s::modeler
