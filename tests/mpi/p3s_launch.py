# SPDX-License-Identifier: BSD-3-Clause
"""How the MPI tests start a job: the launcher options CMake passes every script (P3S_LAUNCH_ARGS: --mpiexec,
--np-flag, --preflag ...), and the command lines made of them."""


def add_options(parser, required=False):
    """Adds --mpiexec, --np-flag and --preflag (repeatable) to an argparse parser."""
    parser.add_argument("--mpiexec", required=required, default=None if required else "mpiexec")
    parser.add_argument("--np-flag", default="-n")
    parser.add_argument("--preflag", dest="preflags", action="append", default=[])


def launch(a, n, *command):
    """The command line that runs `command` on n ranks, from parsed options `a`."""
    return [a.mpiexec, a.np_flag, str(n), *a.preflags, *[str(c) for c in command]]


def passed_on(a):
    """The options again, for a script that runs another."""
    return [f"--mpiexec={a.mpiexec}", f"--np-flag={a.np_flag}", *[f"--preflag={x}" for x in a.preflags]]
