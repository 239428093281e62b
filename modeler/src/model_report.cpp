// SPDX-License-Identifier: BSD-3-Clause
// `p3s model --report`: the model's equations per phase, readable, and each phase's SCIC table.
#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/table_text.hpp"

namespace p3s::modeler {

std::vector<analyzer::StepKind> step_kinds(const std::vector<PhaseModel>& phases, std::int64_t n) {
  std::vector<analyzer::StepKind> kinds;
  for (const PhaseModel& p : phases) {
    if (p.step) kinds.push_back({p.id, p.weight_at(n)});
  }
  return kinds;
}

std::string time_step_text(const std::vector<PhaseModel>& phases, std::int64_t n) {
  return analyzer::time_step_text(step_kinds(phases, n));
}

/// A phase's weight law as printed: exact, "as measured at n = 2: 2693, ..." or a rounded regression.
std::string weight_text(const PhaseModel& p) {
  if (p.step_total) return "the time step's " + p.step_total->to_string() + " steps less its other kinds'";
  if (p.weight_exact) return p.weight.to_string();
  if (p.weight_measured.empty()) return "round(" + p.weight_fit.to_string() + ")";
  std::string s = "as measured at n = ";
  for (const auto& [n, w] : p.weight_measured) {
    s += (s.back() == ' ' ? "" : ", ") + std::to_string(n) + ": " + std::to_string(w);
  }
  return s + " (the nearest fitted n's elsewhere)";
}

namespace {

std::string short_call(const GroupModel& g) { return std::string(mpi::short_name(g.function, g.call)); }

/// How many calls a group makes per rank: its count law, or as measured.
std::string count_text(const GroupModel& g) {
  return g.measured.empty() ? g.count.to_string() : "(as measured at n = " + g.measured.fitted_n() + ")";
}

/// "      ALLREDUCE on world, bytes = 8*n": one collective call of a group.
void collective_line(std::ostringstream& out, const CollectiveEntry& c) {
  out << "      " << mpi::name(c.op) << " on " << c.comm.to_string();
  if (c.root) out << ", root = comm rank " << c.root->to_string();
  const auto bytes = [&c](int k, const RegressionLaw& law) {
    return c.per_member[static_cast<std::size_t>(k)] ? "size x " + law.to_string() : law.to_string();
  };
  out << ", bytes = " << bytes(0, c.bytes_root);
  if (c.root) out << " (root) / " << bytes(1, c.bytes_other) << " (others)";
  const bool scan = c.op == mpi::Collective::Scan || c.op == mpi::Collective::Exscan;
  const auto none = [](const RegressionLaw& l) {
    return l.form == RegressionForm::Constant && l.offset == 0 && l.coefficient == 0;
  };
  if (scan && !(none(c.bytes_root) && none(c.bytes_other))) {  // a request of a nonblocking scan: no bytes
    out << (c.exclusive ? " (mean; by place: a block to each later member)"
                        : " (mean; by place: a block to each later member and itself)");
  }
  out << '\n';
}

void group_lines(std::ostringstream& out, const PhaseModel& p, std::size_t g) {
  const GroupModel& gm = p.groups[g];
  out << "  [" << g << "] " << gm.call;
  switch (gm.role) {
    case Role::PointToPoint: {
      out << '\n';
      for (std::size_t c = 0; c < gm.pattern.cases.size(); ++c) {
        const Pattern::Case& pc = gm.pattern.cases[c];
        const bool all = pc.when.kind == RankPredicate::Kind::Always;
        out << "      " << (all ? "" : "if " + pc.when.to_string() + ": ");
        out << (gm.slots == 2                               ? "dest / source = "
                : gm.slot_kinds[0] == mpi::ActionKind::Send ? "dest = "
                                                            : "source = ")
            << pc.program.to_string() << '\n';
        for (std::size_t t = 0; c < gm.traits.size() && t < gm.traits[c].size(); ++t) {
          const TermTraits& tt = gm.traits[c][t];
          const auto size = [&tt](std::size_t s) {
            return tt.block[s] ? tt.block[s]->to_string() : tt.bytes[s].to_string();
          };
          out << "        term " << t << ": bytes = " << size(0);
          if (tt.face_axis[0] >= 0 && !tt.block[0]) {
            out << " per point of the block's face across dimension " << tt.face_axis[0];
            if (tt.face_margins[0] != std::array<int, 2>{0, 0}) {
              out << " with " << tt.face_margins[0][0] << " and " << tt.face_margins[0][1] << " ghost layers";
            }
          }
          if (tt.bytes_step_factor[0] != 1 && !tt.block[0]) out << " x " << fmt("%g", tt.bytes_step_factor[0]) << "^i";
          if (gm.slots == 2) out << " / " << size(1);
          out << ", tag " << (tt.tag_varies[0] ? "varies" : std::to_string(tt.tag[0])) << '\n';
        }
      }
      if (!gm.measured.empty()) {
        out << "      peers as measured at n = " << gm.measured.fitted_n() << " (elsewhere approximate)\n";
        for (std::size_t t = 0; t < gm.traits.size() && !gm.traits[t].empty(); ++t) {
          out << "        bytes = " << gm.traits[t][0].bytes[0].to_string() << '\n';
        }
      } else if (gm.pattern.cases.empty()) {
        out << "      peers not modelled\n";
      }
      break;
    }
    case Role::Completion: {
      out << " x "
          << (gm.per_request ? "one per request"
              : gm.per_batch ? "one where they were started"
                             : count_text(gm))
          << ": completes";
      std::set<std::uint32_t> groups;
      for (const auto& refs : gm.completes) {
        for (const RequestRef& r : refs) groups.insert(r.group);
      }
      for (const std::uint32_t sg : groups) out << " [" << sg << "] " << short_call(p.groups[sg]);
      if (groups.empty()) out << " nothing";
      out << '\n';
      break;
    }
    case Role::Collective: {
      out << " x " << count_text(gm) << '\n';
      for (const CollectiveEntry& c : gm.collectives) collective_line(out, c);
      break;
    }
    case Role::Local:
      out << " x " << count_text(gm) << '\n';
      break;
  }
}

/// "  (fits within 12 %, leave-one-out 20 %)": how far a law may be trusted.
std::string uncertainty(const RegressionLaw& law) {
  std::string s = "  (fits within " + fmt("%.0f", 100 * law.max_rel_error) + " %";
  if (law.loo_rel_error) s += ", leave-one-out " + fmt("%.0f", 100 * *law.loo_rel_error) + " %";
  return s + ")";
}

std::string burst_place(const PhaseModel& p, const BurstModel& b) {
  if (b.group < 0) return "after the last call";
  const GroupModel& g = p.groups[static_cast<std::size_t>(b.group)];
  std::string s = "before [" + std::to_string(b.group) + "] " + short_call(g);
  if (g.role == Role::PointToPoint) {
    if (g.pattern.cases.size() > 1) s += " case " + std::to_string(b.pattern_case);
    s += " term " + std::to_string(b.term);
  } else {
    s += " call " + std::to_string(b.term);
  }
  return s;
}

/// "scaling, class total = ...": a burst law for the report.
std::string burst_law_text(const BurstLaw& b) {
  return std::string(!b.scaling        ? "constant, per rank = "
                     : b.shared_by_all ? "scaling, total over all n ranks = "
                                       : "scaling, class total = ") +
         b.law.to_string() + uncertainty(b.law);
}

/// The time per unit of work (a CPI where work is instructions; wall over CPU time where it is CPU time).
std::string time_per_work(double time, double work) { return work > 0 ? fmt("%11.3g", time / work) : "          -"; }

/// The phase at n, or nullopt when a law cannot be evaluated there (the report shows what it can).
std::optional<PhasePredictor> predictor_at(const PhaseModel& p, std::int64_t n) {
  try {
    return PhasePredictor(p, n);
  } catch (const ModelError&) {
    return std::nullopt;
  }
}

void work_lines(std::ostringstream& out, const Model& m, const PhaseModel& p, const PhaseReport& r) {
  std::set<std::int64_t> ns;
  for (const Model::Input& in : m.inputs) ns.insert(in.n);
  const std::int64_t top = ns.empty() ? 1 : *ns.rbegin();
  const std::int64_t fitted_top = top;
  for (const std::int64_t f : {2, 4, 8}) ns.insert(top * f);
  for (std::size_t k = 0; k < p.work.size(); ++k) {
    const WorkClass& w = p.work[k];
    out << "  work class " << k;
    if (w.when.kind != RankPredicate::Kind::Always) out << " (" << w.when.to_string() << ")";
    if (p.work.size() > 1) {
      out << " (pattern cases";
      for (std::size_t g = 0; g < w.cases.size(); ++g) {
        if (p.groups[g].role == Role::PointToPoint && p.groups[g].pattern.cases.size() > 1) {
          out << " [" << g << "]=" << p.groups[g].pattern.cases[w.cases[g]].when.to_string();
        }
      }
      out << ")";
    }
    out << '\n';
    for (const BurstModel& b : w.bursts) {
      out << "      " << burst_place(p, b) << ": work " << burst_law_text(b.work) << '\n';
      if (b.time)
        out << "      " << std::string(burst_place(p, b).size(), ' ') << "  time " << burst_law_text(*b.time) << '\n';
    }
    // The time column of the predicted rows is the method's CT4NC: predicted compute time per rank and instance.
    out << "      SCIC/CT4NC  n   ranks  work/rank/instance   weight          total    time/rank (ns)  time/work\n";
    const std::vector<ScicRow> none;
    const std::vector<ScicRow>& measured = k < r.measured.size() ? r.measured[k] : none;
    for (const ScicRow& row : measured) {
      out << "      measured " << fmt("%5.0f", static_cast<double>(row.n))
          << fmt("%8.0f", static_cast<double>(row.ranks)) << fmt("%20.4g", row.work_per_rank)
          << fmt("%9.0f", static_cast<double>(p.weight_at(row.n))) << fmt("%15.4g", row.total)
          << fmt("%18.4g", row.time_per_rank) << time_per_work(row.time_per_rank, row.work_per_rank) << '\n';
    }
    for (const std::int64_t n : ns) {
      if (n <= fitted_top &&
          std::any_of(measured.begin(), measured.end(), [n](const ScicRow& row) { return row.n == n; })) {
        continue;
      }
      const std::optional<PhasePredictor> pp = predictor_at(p, n);
      if (!pp) {
        out << "      predicted" << fmt("%5.0f", static_cast<double>(n)) << "  not evaluable at this n\n";
        continue;
      }
      const double per_rank = pp->class_work(k);
      const auto ranks = static_cast<double>(pp->class_ranks()[k]);
      const std::optional<double> time = pp->class_time(k);
      out << "      predicted" << fmt("%5.0f", static_cast<double>(n)) << fmt("%8.0f", ranks) << fmt("%20.4g", per_rank)
          << fmt("%9.0f", static_cast<double>(pp->weight()))
          << fmt("%15.4g", per_rank * ranks * static_cast<double>(pp->weight()));
      if (time) out << fmt("%18.4g", *time) << time_per_work(*time, per_rank);
      out << '\n';
    }
    if (w.time_fit)
      out << (w.time_shared_by_all ? "      compute time over the run as if every rank were of the class, weight x n x "
                                     "per rank and instance (CRMi): "
                                   : "      compute time over the run, weight x ranks x per rank and instance (CRMi): ")
          << w.time_fit->to_string() << uncertainty(*w.time_fit) << '\n';
    if (w.far_point) {
      const FarPoint& f = *w.far_point;
      out << "      calibrated with a far point (CRMc): the law above x (n/" << f.from_n << ")^"
          << fmt("%.4g", f.exponent) << " above n = " << f.from_n << '\n'
          << "        far run " << f.signature << " at " << f.run_n << " processes, its phase " << f.run_phase << ": "
          << fmt("%.4g", f.work_per_rank) << " work per rank, that of n = " << f.n << " (predicted "
          << fmt("%.4g", f.predicted_work) << "); " << fmt("%.4g", f.time_ns) << " ns per rank there, the fit gave "
          << fmt("%.4g", f.fitted_ns) << '\n';
    }
  }
}

LawFit law_fit(std::string which, const RegressionLaw& law) {
  return {std::move(which), law.to_string(), law.max_rel_error, law.loo_rel_error};
}

}  // namespace

std::vector<LawFit> law_fits(const PhaseModel& p) {
  std::vector<LawFit> out;
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    const GroupModel& gm = p.groups[g];
    for (std::size_t c = 0; c < gm.traits.size(); ++c) {
      for (std::size_t t = 0; t < gm.traits[c].size(); ++t) {
        for (std::size_t s = 0; s < static_cast<std::size_t>(gm.slots); ++s) {
          const TermTraits& tt = gm.traits[c][t];
          const std::string where = "[" + std::to_string(g) + "] " + short_call(gm) + " case " + std::to_string(c) +
                                    " term " + std::to_string(t) + " slot " + std::to_string(s);
          if (tt.block[s]) {
            // A block law gives every rank's size it was fitted on exactly: what the prediction evaluates.
            out.push_back({"bytes of " + where, tt.block[s]->to_string(), 0, std::nullopt});
          } else {
            out.push_back(
                law_fit((tt.face_axis[s] >= 0 ? "bytes per face point of " : "bytes of ") + where, tt.bytes[s]));
          }
        }
      }
    }
  }
  for (std::size_t k = 0; k < p.work.size(); ++k) {
    for (const BurstModel& b : p.work[k].bursts) {
      out.push_back(law_fit("work class " + std::to_string(k) + ", " + burst_place(p, b), b.work.law));
    }
  }
  return out;
}

std::string model_report(const Model& m, const FitReport& report) {
  const ScopedDimsRule rule(m.dims_rule);  // the predicted rows evaluate laws in dims(n)
  std::ostringstream out;
  out << "application  " << (m.application.empty() ? "(command not recorded)" : m.application) << '\n';
  out << "work metric  " << m.work_metric << '\n';
  out << "grids        MPI_Dims_create as " << (m.dims_rule == DimsRule::Mpich ? "MPICH" : "Open MPI")
      << " computes it ("
      << (m.mpi_library.empty() ? "the runs do not say which MPI they used"
          : dims_rule_of_library(m.mpi_library)
              ? "the runs used " + m.mpi_library
              : "the runs used " + m.mpi_library + ", whose rule p3s does not know: Open MPI's is assumed")
      << ")\n";
  out << "fitted on    n =";
  for (const Model::Input& in : m.inputs) out << ' ' << in.n;
  out << '\n';
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    const PhaseModel& p = m.phases[i];
    const PhaseReport none;
    const PhaseReport& r = i < report.phases.size() ? report.phases[i] : none;
    out << "\nphase " << p.id << (p.relevant ? " (relevant" : " (not relevant") << ", " << fmt("%.1f", 100 * r.share)
        << " % of the largest run): " << p.calls << '\n';
    out << "  weight = " << weight_text(p) << "    total work varies by " << fmt("%.1f", 100 * r.total_work_spread)
        << " % across the runs\n";
    for (std::size_t g = 0; g < p.groups.size(); ++g) {
      for (const PhaseLoop& l : p.loops) {
        if (l.first != g) continue;
        out << "  loop: groups [" << l.first << "]-[" << l.first + l.groups - 1 << "] are made step by step, ";
        if (const std::optional<ExactLaw>& it = p.groups[g].iterations) {
          out << it->to_string() << " iterations, each making the calls below\n";
        } else {
          out << "one call of each per iteration\n";
        }
      }
      group_lines(out, p, g);
    }
    work_lines(out, m, p, r);
    for (const std::string& note : r.notes) out << "  note: " << note << '\n';
  }
  for (const std::string& u : report.unrelated) out << "\nnote: " << u << '\n';
  for (const std::string& k : report.kinds_merged) out << "\nnote: " << k << '\n';
  return out.str();
}

}  // namespace p3s::modeler
