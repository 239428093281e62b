#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The p3s pipeline on the bundled 2-D stencil (tests/apps/stencil2d.c, a fixed 1920x1920 grid): record it at 4,
# 8, 16 and 32 processes, analyze the runs together (their phases found by one method), learn how its phases
# scale, and predict 64 processes.
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
mkdir -p "$work"
runs=""
for n in 4 8 16 32; do
  "$p3s" record -o "$work/np$n" --force -- $launcher -np "$n" "$app" 20 1920 > "$work/np$n.out"
  runs="$runs $work/np$n"
done
"$p3s" analyze $runs -q
"$p3s" model $runs -o "$work/stencil2d.model" --report --force
"$p3s" predict "$work/stencil2d.model" --np 64 --logical -o "$work/np64-predicted" --force
