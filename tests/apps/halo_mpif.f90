! SPDX-License-Identifier: BSD-3-Clause
! Test app (Fortran, mpif.h): 1-D Jacobi halo exchange on a non-periodic chain — Irecv/Isend, receives completed
! one by one with Waitany, sends with Waitall(MPI_STATUSES_IGNORE), residual by an in-place Allreduce.
!
! Usage: halo_mpif [iterations=10] [local points=32]. The chain ends exchange with MPI_PROC_NULL.
program halo_mpif
  use p3s_expect
  implicit none
  include 'mpif.h'
  integer, parameter :: tag_right = 1, tag_left = 2
  integer :: ierr, rank, nprocs, iters, n, right, left, it, i, k, idx, moved
  integer :: reqs(4), status(MPI_STATUS_SIZE)
  double precision, allocatable :: u(:), v(:)
  double precision :: residual

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  iters = expect_arg('halo_mpif', 1, 10)
  n = max(1, expect_arg('halo_mpif', 2, 32))
  left = rank - 1
  right = rank + 1
  if (left < 0) left = MPI_PROC_NULL
  if (right >= nprocs) right = MPI_PROC_NULL
  allocate(u(0:n + 1), v(0:n + 1))
  u = 0d0
  do i = 1, n
    u(i) = dble(mod(rank * n + i, 7))
  end do

  residual = 0d0
  moved = 0
  do it = 1, iters
    call MPI_Irecv(u(0), 1, MPI_DOUBLE_PRECISION, left, tag_right, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(u(n + 1), 1, MPI_DOUBLE_PRECISION, right, tag_left, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Isend(u(n), 1, MPI_DOUBLE_PRECISION, right, tag_right, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Isend(u(1), 1, MPI_DOUBLE_PRECISION, left, tag_left, MPI_COMM_WORLD, reqs(4), ierr)
    ! The two receives complete in either order; a receive from MPI_PROC_NULL completes at once.
    do k = 1, 2
      call MPI_Waitany(2, reqs, idx, status, ierr)
      if (status(MPI_SOURCE) /= MPI_PROC_NULL) moved = moved + 1
    end do
    call MPI_Waitall(2, reqs(3), MPI_STATUSES_IGNORE, ierr)
    residual = 0d0
    do i = 1, n
      v(i) = 0.5d0 * (u(i - 1) + u(i + 1))
      residual = residual + (v(i) - u(i))**2
    end do
    u(1:n) = v(1:n)
    call MPI_Allreduce(MPI_IN_PLACE, residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  if (rank == 0) then
    write(*, '(a,i0,a,es13.6)') 'halo_mpif: iterations ', iters, ' residual ', residual
  end if
  write(*, '(a,i0,a,i0)') 'halo_mpif: rank ', rank, ' received ', moved
  deallocate(u, v)

  ! Known by construction; nothing is printed for an MPI_PROC_NULL neighbour. left < right, so this is sorted.
  if (iters > 0) then
    if (left /= MPI_PROC_NULL) call expect_msg(rank, 'send', left, tag_left, 8, iters)
    if (right /= MPI_PROC_NULL) call expect_msg(rank, 'send', right, tag_right, 8, iters)
    if (left /= MPI_PROC_NULL) call expect_msg(rank, 'recv', left, tag_right, 8, iters)
    if (right /= MPI_PROC_NULL) call expect_msg(rank, 'recv', right, tag_left, 8, iters)
    call expect_count(rank, 'coll', 'MPI_Allreduce', iters)
  end if
  call expect_count(rank, 'coll', 'MPI_Init', 1)
  if (iters > 0) then
    call expect_count(rank, 'calls', 'MPI_Waitall', iters)
    call expect_count(rank, 'calls', 'MPI_Waitany', 2 * iters)
  end if
  flush(6)
  call MPI_Finalize(ierr)

end program halo_mpif
