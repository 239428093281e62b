! SPDX-License-Identifier: BSD-3-Clause
! Bookkeeping for the Fortran test apps, the counterpart of expect.h: P3S-EXPECT lines and argument parsing.
! Free of MPI, so mpif.h and `use mpi` programs share it.
module p3s_expect
  implicit none
  private
  public :: expect_msg, expect_pair, expect_count, expect_arg

contains

  ! One message key: `P3S-EXPECT rank kind peer tag bytes count` (kind is send or recv).
  subroutine expect_msg(rank, kind, peer, tag, bytes, count)
    integer, intent(in) :: rank, peer, tag, bytes, count
    character(*), intent(in) :: kind
    write(*, '(a,i0,a,a,a,i0,a,i0,a,i0,a,i0)') 'P3S-EXPECT ', rank, ' ', kind, ' ', peer, ' ', tag, ' ', bytes, &
      ' ', count
  end subroutine expect_msg

  ! Two message keys printed in (peer, tag) order, as expect.h sorts them; nothing when count is 0.
  subroutine expect_pair(rank, kind, peer1, tag1, bytes1, peer2, tag2, bytes2, count)
    integer, intent(in) :: rank, peer1, tag1, bytes1, peer2, tag2, bytes2, count
    character(*), intent(in) :: kind
    if (count == 0) return
    if (peer1 <= peer2) then
      call expect_msg(rank, kind, peer1, tag1, bytes1, count)
      call expect_msg(rank, kind, peer2, tag2, bytes2, count)
    else
      call expect_msg(rank, kind, peer2, tag2, bytes2, count)
      call expect_msg(rank, kind, peer1, tag1, bytes1, count)
    end if
  end subroutine expect_pair

  ! `P3S-EXPECT rank what name count`, what being coll or calls.
  subroutine expect_count(rank, what, name, count)
    integer, intent(in) :: rank, count
    character(*), intent(in) :: what, name
    write(*, '(a,i0,a,a,a,a,a,i0)') 'P3S-EXPECT ', rank, ' ', what, ' ', name, ' ', count
  end subroutine expect_count

  ! Command-line argument i as a non-negative integer, or fallback when absent; stops the program on garbage.
  integer function expect_arg(program, i, fallback)
    character(*), intent(in) :: program
    integer, intent(in) :: i, fallback
    character(len=32) :: buf
    integer :: length, stat
    expect_arg = fallback
    if (command_argument_count() < i) return
    call get_command_argument(i, buf, length)
    read(buf, *, iostat=stat) expect_arg
    if (stat /= 0 .or. length == 0 .or. expect_arg < 0) then
      write(0, '(a,a,i0,a,a)') program, ': argument ', i, ' must be a non-negative integer, got ', trim(buf)
      error stop 2
    end if
  end function expect_arg

end module p3s_expect
