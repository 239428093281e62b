// SPDX-License-Identifier: BSD-3-Clause
// A rank's instance of a phase in time: its predicted bursts, and its calls sharing the rest of the instance.
#include <algorithm>

#include "p3s/modeler/timed_trace.hpp"

namespace p3s::modeler {
namespace {

/// Whether a call can wait for other ranks: where a rank's time in MPI goes.
bool can_wait(mpi::Function f) {
  const mpi::FunctionInfo& i = mpi::info(f);
  switch (i.kind) {
    case mpi::CallKind::Recv:
    case mpi::CallKind::Sendrecv:
    case mpi::CallKind::Probe:
    case mpi::CallKind::Collective:
    case mpi::CallKind::CommCreate:
    case mpi::CallKind::CommFree:
    case mpi::CallKind::Init:
    case mpi::CallKind::Finalize:
      return true;
    case mpi::CallKind::Completion:
      return !i.test;
    case mpi::CallKind::Send:
      return i.mode == mpi::SendMode::Synchronous;
    default:
      return false;
  }
}

}  // namespace

InstanceLayout lay_out(const PredictedRank& rank, double instance_ns) {
  InstanceLayout out;
  const std::size_t k = rank.calls.size();
  out.calls.resize(k);
  instance_ns = std::max(instance_ns, 0.0);
  double compute = std::max(rank.tail_ns.value_or(0), 0.0);
  std::size_t waiting = 0;
  for (const PredictedCall& c : rank.calls) {
    compute += std::max(c.burst_ns.value_or(0), 0.0);
    waiting += can_wait(c.function) ? 1 : 0;
  }
  // Every call keeps a nominal time, at most half the instance among them all.
  const double nominal = k == 0 ? 0 : std::min(kNominalCallNs, instance_ns / (2.0 * static_cast<double>(k)));
  const double room = instance_ns - nominal * static_cast<double>(k);
  double scale = 1;
  if (compute > room) {
    scale = compute > 0 ? room / compute : 1;
    out.squeezed = true;
  }
  const double extra = std::max(room - compute * scale, 0.0);
  const std::size_t sharing = waiting != 0 ? waiting : k;
  const double share = sharing == 0 ? 0 : extra / static_cast<double>(sharing);
  double t = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const PredictedCall& c = rank.calls[i];
    t += std::max(c.burst_ns.value_or(0), 0.0) * scale;
    const bool takes = waiting == 0 || can_wait(c.function);
    out.calls[i] = {t, nominal + (takes ? share : 0)};
    t += out.calls[i].duration_ns;
  }
  out.tail_ns = std::max(instance_ns - t, 0.0);
  if (k == 0 && out.tail_ns < compute) out.squeezed = compute > instance_ns;
  return out;
}

}  // namespace p3s::modeler
