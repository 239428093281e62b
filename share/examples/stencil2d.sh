#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# p3s on the bundled 2-D stencil (tests/apps/stencil2d.c, a fixed 1920x1920 grid, its sweeps sleeping 50 ns per
# cell so that each rank behaves as if it had a core of its own): `p3s scale` records it at 4, 8, 16 and 32
# processes, analyzes the runs together, models them, replays the model at 64 and 128 processes, and prints the
# curve and the recommended process count (plots in WORK_DIR/plots). Run it again: nothing is recomputed.
#
# Usage: share/examples/stencil2d.sh [BUILD_DIR=build] [WORK_DIR=example-stencil2d]
set -eu
build=${1:-build}
work=${2:-example-stencil2d}
p3s="$build/bin/p3s"
app="$build/tests/apps/stencil2d"
[ -x "$p3s" ] && [ -x "$app" ] || { echo "stencil2d.sh: build p3s first (cmake -S . -B $build && cmake --build $build)" >&2; exit 1; }
# Open MPI refuses to run as root, or more ranks than cores, unless told.
launcher="mpirun"
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  launcher="mpirun --oversubscribe"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec "$p3s" scale -o "$work" --fit 4,8,16,32 --predict 64,128 --compute sleep -- \
  $launcher -np '{n}' "$app" 100 1920 --sleep-ns-per-cell 50
