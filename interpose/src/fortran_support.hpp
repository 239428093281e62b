// SPDX-License-Identifier: BSD-3-Clause
// Conversions used by the generated Fortran translators: sentinels, handles arrays, statuses, indices.
#pragma once

#include <array>
#include <vector>

#include <mpi.h>

namespace p3s::interpose::fortran {

/// Addresses of the Fortran sentinels and two compiler facts, filled at MPI_Init.
struct Sentinels {
  const void* bottom = nullptr;
  const void* in_place = nullptr;
  const MPI_Fint* status_ignore = nullptr;
  const MPI_Fint* statuses_ignore = nullptr;
  int status_size = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
  MPI_Fint true_value = 1;
};
extern Sentinels g_sentinels;

/// Asks the Fortran helper for the sentinel addresses.
void init_sentinels() noexcept;

/// A Fortran buffer argument as C sees it: MPI_BOTTOM and MPI_IN_PLACE map to the C constants.
inline void* buffer(void* f) noexcept {
  if (f == g_sentinels.bottom) return MPI_BOTTOM;
  if (f == g_sentinels.in_place) return MPI_IN_PLACE;
  return f;
}

/// Fortran INTEGER arrays are C int arrays (checked by a static_assert in the generated file).
inline const int* int_array(const MPI_Fint* a) noexcept { return reinterpret_cast<const int*>(a); }
inline int* int_array(MPI_Fint* a) noexcept { return reinterpret_cast<int*>(a); }

inline MPI_Fint logical(int c) noexcept { return c != 0 ? g_sentinels.true_value : 0; }

/// Fortran request indices are 1-based; MPI_UNDEFINED stays as it is.
inline MPI_Fint to_fortran_index(int c) noexcept { return c == MPI_UNDEFINED || c < 0 ? c : c + 1; }
inline void to_fortran_indices(MPI_Fint* a, int outcount) noexcept {
  if (outcount == MPI_UNDEFINED) return;
  for (int k = 0; k < outcount; ++k) a[k] += 1;
}

/// Small arrays without allocation; larger ones on the heap.
template <class T>
class Buffer {
 public:
  explicit Buffer(int n) : n_(n > 0 ? n : 0) {
    if (n_ > static_cast<int>(local_.size())) heap_.resize(static_cast<std::size_t>(n_));
  }
  T* data() noexcept { return heap_.empty() ? local_.data() : heap_.data(); }
  [[nodiscard]] int size() const noexcept { return n_; }

 private:
  int n_;
  std::array<T, 16> local_{};
  std::vector<T> heap_;
};

/// An array of Fortran request handles converted for C and written back (completed ones become
/// MPI_REQUEST_NULL).
class Requests {
 public:
  Requests(MPI_Fint* f, int n);
  MPI_Request* data() noexcept { return c_.data(); }
  void write_back() noexcept;

 private:
  MPI_Fint* f_;
  Buffer<MPI_Request> c_;
};

/// One Fortran status; MPI_STATUS_IGNORE passes through as the C constant.
class Status {
 public:
  explicit Status(MPI_Fint* f) noexcept : f_(f) {}
  MPI_Status* c() noexcept { return f_ == g_sentinels.status_ignore ? MPI_STATUS_IGNORE : &c_; }
  void write_back() noexcept {
    if (f_ != g_sentinels.status_ignore) PMPI_Status_c2f(&c_, f_);
  }

 private:
  MPI_Fint* f_;
  MPI_Status c_{};
};

/// An array of Fortran statuses; MPI_STATUSES_IGNORE passes through.
class Statuses {
 public:
  Statuses(MPI_Fint* f, int n) : f_(f), c_(f == g_sentinels.statuses_ignore ? 0 : n) {}
  MPI_Status* c() noexcept { return f_ == g_sentinels.statuses_ignore ? MPI_STATUSES_IGNORE : c_.data(); }
  void write_back(int count) noexcept;

 private:
  MPI_Fint* f_;
  Buffer<MPI_Status> c_;
};

}  // namespace p3s::interpose::fortran
