// SPDX-License-Identifier: BSD-3-Clause
// The logical trace as CSV: one row per communication action (a call without one gets a row of its own).
#include <cstdio>
#include <fstream>

#include "logical_export.hpp"
#include "p3s/error.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::analyzer {

void write_logical_csv(const std::filesystem::path& path, const TraceDefinitions& defs, const Extracted& ex,
                       const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels) {
  StreamedFile file(path);
  std::ostream& out = file.stream();
  {
    out << "rank,thread,seq,call,action,peer,tag,bytes,tick,phase,instance\n";
    for (std::size_t l = 0; l < ex.locations.size(); ++l) {
      const ExtractedLocation& loc = ex.locations[l];
      OpSweep sweep(loc, l, tick_files[l], *labels.occurrences);
      for (std::uint64_t seq = 0; sweep.next(); ++seq) {
        const Op& op = sweep.op;
        const std::size_t occ = sweep.occurrence;
        const Region* r = defs.region(op.header.region);
        const std::string call = r != nullptr ? r->name : "?";
        const auto row = [&](std::string_view action, long long peer, std::uint32_t tag, std::uint64_t bytes,
                             std::uint64_t tick) {
          out << loc.rank << ',' << loc.thread << ',' << seq << ',' << call << ',' << action << ',' << peer << ','
              << tag << ',' << bytes << ',' << tick << ',' << labels.phase[occ] << ',' << labels.instance[occ] << '\n';
        };
        if (op.actions.empty()) row("", -1, 0, 0, sweep.op_tick);
        for (std::size_t i = 0; i < op.actions.size(); ++i) {
          const Action& a = op.actions[i];
          const bool message = a.kind == mpi::ActionKind::Send || a.kind == mpi::ActionKind::Recv;
          row(mpi::name(a.kind), message ? a.peer : -1, message ? a.tag : 0, a.bytes,
              sweep.action_ticks[i] != 0 ? sweep.action_ticks[i] : sweep.op_tick);
        }
      }
    }
  }
  file.commit();
}

}  // namespace p3s::analyzer
