// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "p3s/mpi/vocabulary.hpp"

namespace p3s::replay::detail {

/// MPI_Init and MPI_Finalize: what they cost is the MPI library's start and end; the replay has made the one and
/// makes the other once, after every phase. Their bursts are emulated, the calls are not made again.
[[nodiscard]] inline bool made_once(mpi::Function f) {
  const mpi::CallKind k = mpi::kind(f);
  return k == mpi::CallKind::Init || k == mpi::CallKind::Finalize;
}

}  // namespace p3s::replay::detail
