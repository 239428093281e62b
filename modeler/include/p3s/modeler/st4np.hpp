// SPDX-License-Identifier: BSD-3-Clause
// Reading an executable trace (ST4NP, share/doc/lt4nc-format.md) that `p3s predict -o DIR` wrote, or a user wrote
// by hand: its header once, then any rank's lines through the rank index, so that no reader holds the whole trace.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"

namespace p3s::modeler {

/// An ST4NP's phase as its header gives it.
struct St4npPhase {
  std::uint32_t id = 0;
  std::string calls;        ///< its MPI functions ("MPI_Irecv MPI_Isend ...")
  std::int64_t weight = 0;  ///< its instances over the order's stretches
  bool repaired = false;    ///< written repaired (its calls as predicted did not match)
};

/// An ST4NP directory's header: what every rank shares.
struct St4np {
  std::filesystem::path dir;
  std::int64_t processes = 0;
  std::string application;
  std::string work_metric;
  DimsRule dims_rule = DimsRule::OpenMpi;
  std::vector<St4npPhase> phases;
  std::vector<PhaseRun> order;  ///< phase = index in `phases`
  /// Every communicator the actions name, by the header's id; the actions read by st4np_rank point into them.
  std::vector<std::unique_ptr<CommModel>> comms;
  /// What a user of the trace should know: threads the model left out, phases written repaired.
  std::vector<std::string> notes;
  std::filesystem::path ranks_file;
  std::filesystem::path index_file;
};

/// Reads DIR/lt4nc.json. @throws p3s::InputError ("ST4NP 'DIR': ...") when DIR holds no whole executable trace this
/// p3s reads: no header, a logical trace (no burst times), one written without the consistency check (schema 3), a
/// later schema, or a damaged header.
[[nodiscard]] St4np read_st4np(const std::filesystem::path& dir);

/// Rank r's instance of every phase, in the header's order of phases, read from its own lines through the rank
/// index. The actions' communicators point into `trace.comms`. @throws p3s::InputError when the index or the lines
/// are damaged, or a line names a peer, root or communicator the trace lacks.
[[nodiscard]] std::vector<PredictedRank> st4np_rank(const St4np& trace, std::int64_t r);

}  // namespace p3s::modeler
