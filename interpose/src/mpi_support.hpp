// SPDX-License-Identifier: BSD-3-Clause
// The tool's own MPI communication (always PMPI, always on its duplicate of MPI_COMM_WORLD): clock offsets,
// OTF2's collective callbacks, and gathering variable-size blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>
#include <otf2/otf2.h>

namespace p3s::interpose {

/// Offset to add to this rank's CLOCK_MONOTONIC to get rank 0's, measured by ping-pong with rank 0 for the
/// ranks that need it (`needs_sync[r]`); 0 for the others. Collective over `comm`.
[[nodiscard]] std::int64_t measure_clock_offset(MPI_Comm comm, const std::vector<bool>& needs_sync);

/// Sets OTF2 collective callbacks that run over `comm` with PMPI.
[[nodiscard]] OTF2_ErrorCode set_otf2_mpi_collectives(OTF2_Archive* archive, MPI_Comm comm);

/// Gathers each rank's block at rank 0 (empty vector elsewhere). Collective over `comm`.
[[nodiscard]] std::vector<std::vector<std::byte>> gather_blocks(MPI_Comm comm, const std::vector<std::byte>& mine);

/// Sends block r to rank r from rank 0; returns this rank's block. Collective over `comm`.
[[nodiscard]] std::vector<std::byte> scatter_blocks(MPI_Comm comm, const std::vector<std::vector<std::byte>>& blocks);

/// True on every rank iff `ok` is true on every rank.
[[nodiscard]] bool all_ok(MPI_Comm comm, bool ok);

}  // namespace p3s::interpose
