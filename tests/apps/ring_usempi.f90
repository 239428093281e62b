! SPDX-License-Identifier: BSD-3-Clause
! Test app (Fortran, use mpi): a ring of Isend/Irecv completed by Waitall with MPI_STATUSES_IGNORE, a Sendrecv
! with MPI_STATUS_IGNORE the other way round, and an Allreduce per iteration.
!
! Usage: ring_usempi [iterations=10] [doubles per message=16].
program ring_usempi
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
  iters = int_arg(1, 10)
  n = max(1, int_arg(2, 16))
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
  call print_pair('send', right, tag_right, 8 * n, left, tag_left, 8 * m)
  call print_pair('recv', left, tag_right, 8 * n, right, tag_left, 8 * m)
  write(*, '(a,i0,a,i0)') 'P3S-EXPECT ', rank, ' coll MPI_Allreduce ', iters
  write(*, '(a,i0,a)') 'P3S-EXPECT ', rank, ' coll MPI_Init 1'
  write(*, '(a,i0,a,i0)') 'P3S-EXPECT ', rank, ' calls MPI_Sendrecv ', iters
  write(*, '(a,i0,a,i0)') 'P3S-EXPECT ', rank, ' calls MPI_Waitall ', iters
  flush(6)
  call MPI_Finalize(ierr)

contains

  ! Two message keys (peer1 always carries tag1 < tag2), printed in (peer, tag) order.
  subroutine print_pair(kind, peer1, tag1, bytes1, peer2, tag2, bytes2)
    character(*), intent(in) :: kind
    integer, intent(in) :: peer1, tag1, bytes1, peer2, tag2, bytes2
    if (iters == 0) return
    if (peer1 <= peer2) then
      call print_msg(kind, peer1, tag1, bytes1)
      call print_msg(kind, peer2, tag2, bytes2)
    else
      call print_msg(kind, peer2, tag2, bytes2)
      call print_msg(kind, peer1, tag1, bytes1)
    end if
  end subroutine print_pair

  subroutine print_msg(kind, peer, tag, bytes)
    character(*), intent(in) :: kind
    integer, intent(in) :: peer, tag, bytes
    write(*, '(a,i0,a,a,a,i0,a,i0,a,i0,a,i0)') 'P3S-EXPECT ', rank, ' ', kind, ' ', peer, ' ', tag, ' ', bytes, &
      ' ', iters
  end subroutine print_msg

  ! Command-line argument i as a non-negative integer, or fallback when absent; aborts the job on garbage.
  integer function int_arg(i, fallback)
    integer, intent(in) :: i, fallback
    character(len=32) :: buf
    integer :: length, stat, ignored
    int_arg = fallback
    if (command_argument_count() < i) return
    call get_command_argument(i, buf, length)
    read(buf, *, iostat=stat) int_arg
    if (stat /= 0 .or. length == 0 .or. int_arg < 0) then
      write(0, '(a,i0,a,a)') 'ring_usempi: argument ', i, ' must be a non-negative integer, got ', trim(buf)
      call MPI_Abort(MPI_COMM_WORLD, 2, ignored)
    end if
  end function int_arg

end program ring_usempi
