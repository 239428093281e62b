// SPDX-License-Identifier: BSD-3-Clause
// An executable trace (ST4NP directory) given where a command also takes a model: read at its own process count.
#pragma once

#include <cstdint>
#include <string>

#include "p3s/error.hpp"
#include "p3s/modeler/st4np.hpp"

namespace p3s::cli {

/// The ST4NP in `dir`; `np` (0: not given) must be its count, and becomes it.
/// @throws p3s::InputError as modeler::read_st4np, or naming both counts.
inline modeler::St4np read_st4np_at_own_count(const std::string& dir, std::int64_t& np) {
  modeler::St4np trace = modeler::read_st4np(dir);
  if (np > 0 && np != trace.processes) {
    throw InputError("ST4NP '" + dir + "' is a trace of " + std::to_string(trace.processes) + " ranks, not --np " +
                     std::to_string(np) + ": it is read at its own count");
  }
  np = trace.processes;
  return trace;
}

}  // namespace p3s::cli
