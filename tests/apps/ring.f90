! SPDX-License-Identifier: BSD-3-Clause
! Test app: the Fortran (mpif.h) twin of ring.c — the same MPI calls, the same P3S-EXPECT lines and checksum.
!
! Usage: ring_f [iterations=10] [doubles per message=16].
program ring_f
  use p3s_expect
  implicit none
  include 'mpif.h'
  integer, parameter :: tag_right = 10, tag_left = 11
  integer :: ierr, rank, nprocs, iters, n, m, right, left, it, i
  integer :: reqs(4), statuses(MPI_STATUS_SIZE, 4)
  double precision, allocatable :: to_right(:), from_left(:), to_left(:), from_right(:)
  double precision :: local, global, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  iters = expect_arg('ring_f', 1, 10)
  n = max(1, expect_arg('ring_f', 2, 16))
  m = n / 2 + 1
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  allocate(to_right(n), from_left(n), to_left(m), from_right(m))

  total = 0d0
  do it = 0, iters - 1
    do i = 1, n
      to_right(i) = dble(rank + it + i - 1)
    end do
    do i = 1, m
      to_left(i) = dble(rank * it - (i - 1))
    end do
    call MPI_Irecv(from_left, n, MPI_DOUBLE_PRECISION, left, tag_right, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(from_right, m, MPI_DOUBLE_PRECISION, right, tag_left, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Isend(to_right, n, MPI_DOUBLE_PRECISION, right, tag_right, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Isend(to_left, m, MPI_DOUBLE_PRECISION, left, tag_left, MPI_COMM_WORLD, reqs(4), ierr)
    call MPI_Waitall(4, reqs, statuses, ierr)
    ! Integer-valued doubles keep the sum exact, independent of the reduction order.
    local = dble(mod(burst(int(rank + it, 8)), 7_8))
    do i = 1, n
      local = local + from_left(i)
    end do
    do i = 1, m
      local = local + from_right(i)
    end do
    call MPI_Allreduce(local, global, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    total = total + global
  end do
  if (rank == 0) then
    write(*, '(a,i0,a,i0)') 'ring: iterations ', iters, ' checksum ', int(total, 8)
  end if
  deallocate(to_right, from_left, to_left, from_right)

  ! The same lines, in the same order, as ring.c's sorted table: by kind, then peer, then tag.
  call expect_pair(rank, 'send', right, tag_right, 8 * n, left, tag_left, 8 * m, iters)
  call expect_pair(rank, 'recv', left, tag_right, 8 * n, right, tag_left, 8 * m, iters)
  call expect_count(rank, 'coll', 'MPI_Allreduce', iters)
  call expect_count(rank, 'coll', 'MPI_Init', 1)
  call expect_count(rank, 'calls', 'MPI_Waitall', iters)
  flush(6)
  call MPI_Finalize(ierr)

contains

  ! Deterministic integer work standing in for computation, as in ring.c.
  integer(8) function burst(seed)
    integer(8), intent(in) :: seed
    integer(8) :: k
    burst = seed
    do k = 0, 19999
      burst = mod(burst * 31 + k, 1000003_8)
    end do
  end function burst

end program ring_f
