# SPDX-License-Identifier: BSD-3-Clause
# MPI launch helpers for tests.
#
# P3S_MPIEXEC_PREFIX is the launcher prefix every MPI test uses:
#   mpiexec -n N [--oversubscribe when Open MPI] [MPIEXEC_PREFLAGS]
# P3S_MPI_TEST_ENV the environment that lets Open MPI run as root in containers, and P3S_LAUNCH_ARGS the same
# launcher as the driver scripts' options (--mpiexec, --np-flag, --preflag).
set(P3S_MPI_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
set(P3S_MPIEXEC_PREFLAGS ${MPIEXEC_PREFLAGS})
if(P3S_MPIEXEC_IS_OPENMPI)
  list(APPEND P3S_MPIEXEC_PREFLAGS --oversubscribe)
endif()

set(P3S_LAUNCH_ARGS --mpiexec ${MPIEXEC_EXECUTABLE} --np-flag=${MPIEXEC_NUMPROC_FLAG})
foreach(flag IN LISTS P3S_MPIEXEC_PREFLAGS)
  list(APPEND P3S_LAUNCH_ARGS --preflag=${flag})
endforeach()
