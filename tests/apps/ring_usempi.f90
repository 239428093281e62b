! SPDX-License-Identifier: BSD-3-Clause
! Test app (Fortran, use mpi): a ring of Isend/Irecv completed by Waitall with MPI_STATUSES_IGNORE, a Sendrecv
! with MPI_STATUS_IGNORE the other way round, and an Allreduce per iteration.
!
! Usage: ring_usempi [iterations=10] [doubles per message=16].
program ring_usempi
  use p3s_expect
  use mpi
  implicit none
  integer, parameter :: tag_right = 1, tag_left = 2
  integer :: ierr, rank, nprocs, iters, n, m, right, left, it, i
  integer :: reqs(2)
  double precision, allocatable :: out(:), in(:), back(:)
  double precision :: local, global, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  iters = expect_arg('ring_usempi', 1, 10)
  n = max(1, expect_arg('ring_usempi', 2, 16))
  m = n / 4 + 1
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  allocate(out(n), in(n), back(m))

  total = 0d0
  do it = 0, iters - 1
    do i = 1, n
      out(i) = dble(rank * 7 + it + i)
    end do
    call MPI_Irecv(in, n, MPI_DOUBLE_PRECISION, left, tag_right, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(out, n, MPI_DOUBLE_PRECISION, right, tag_right, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    ! The reply goes leftwards; source and size are known, so the status is ignored.
    call MPI_Sendrecv(in, m, MPI_DOUBLE_PRECISION, left, tag_left, back, m, MPI_DOUBLE_PRECISION, right, tag_left, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    local = sum(in) + sum(back)
    call MPI_Allreduce(local, global, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    total = total + global
  end do
  if (rank == 0) then
    write(*, '(a,i0,a,i0)') 'ring_usempi: iterations ', iters, ' checksum ', int(total, 8)
  end if
  deallocate(out, in, back)

  ! Known by construction: to the right with tag 1, to the left with tag 2; receives the mirror image.
  call expect_pair(rank, 'send', right, tag_right, 8 * n, left, tag_left, 8 * m, iters)
  call expect_pair(rank, 'recv', left, tag_right, 8 * n, right, tag_left, 8 * m, iters)
  call expect_count(rank, 'coll', 'MPI_Allreduce', iters)
  call expect_count(rank, 'coll', 'MPI_Init', 1)
  call expect_count(rank, 'calls', 'MPI_Sendrecv', iters)
  call expect_count(rank, 'calls', 'MPI_Waitall', iters)
  flush(6)
  call MPI_Finalize(ierr)

end program ring_usempi
