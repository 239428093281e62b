! SPDX-License-Identifier: BSD-3-Clause
! Hands the addresses of the Fortran MPI sentinels (and MPI_STATUS_SIZE and the value of .TRUE.) to the
! interposer, which compares Fortran buffer and status arguments against them.
subroutine p3s_fortran_sentinels()
  implicit none
  include 'mpif.h'
  call p3s_set_fortran_sentinels(MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, &
                                 MPI_STATUS_SIZE, .true.)
end subroutine p3s_fortran_sentinels
