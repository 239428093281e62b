// SPDX-License-Identifier: BSD-3-Clause
// Fortran sentinels and array conversions for the generated translators.
#include "fortran_support.hpp"

#include "fc_mangle.h"

extern "C" {
/// Implemented in fortran_sentinels.f90.
void P3S_FC_GLOBAL_(p3s_fortran_sentinels, P3S_FORTRAN_SENTINELS)();

/// Called by the Fortran helper with the addresses of its sentinels (Fortran passes by reference).
void P3S_FC_GLOBAL_(p3s_set_fortran_sentinels,
                    P3S_SET_FORTRAN_SENTINELS)(void* bottom, void* in_place, MPI_Fint* status_ignore,
                                               MPI_Fint* statuses_ignore, MPI_Fint* status_size, MPI_Fint* true_value) {
  auto& s = p3s::interpose::fortran::g_sentinels;
  s.bottom = bottom;
  s.in_place = in_place;
  s.status_ignore = status_ignore;
  s.statuses_ignore = statuses_ignore;
  s.status_size = *status_size;
  s.true_value = *true_value;
}
}

namespace p3s::interpose::fortran {

Sentinels g_sentinels;

void init_sentinels() noexcept { P3S_FC_GLOBAL_(p3s_fortran_sentinels, P3S_FORTRAN_SENTINELS)(); }

Requests::Requests(MPI_Fint* f, int n) : f_(f), c_(n) {
  for (int i = 0; i < c_.size(); ++i) c_.data()[i] = PMPI_Request_f2c(f_[i]);
}

void Requests::write_back() noexcept {
  for (int i = 0; i < c_.size(); ++i) f_[i] = PMPI_Request_c2f(c_.data()[i]);
}

void Statuses::write_back(int count) noexcept {
  if (f_ == g_sentinels.statuses_ignore || count == MPI_UNDEFINED) return;
  for (int i = 0; i < count && i < c_.size(); ++i) {
    PMPI_Status_c2f(&c_.data()[i], f_ + static_cast<std::ptrdiff_t>(i) * g_sentinels.status_size);
  }
}

}  // namespace p3s::interpose::fortran
