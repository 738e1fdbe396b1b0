#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a command and measures its whole process tree, orphans included.

Usage: tree-usage.py [--also PID]... OUT -- COMMAND [ARG]...
Writes one line to OUT: "wall_s user_s sys_s maxrss_kb treepeak_kb"
  wall_s       from the start of COMMAND to its end
  user_s sys_s CPU of COMMAND and every process it started, also those that outlived their
               parent (this process is their subreaper and reaps them: an office killed with
               its worker still counts), plus what each --also tree used meanwhile (the
               tree's utime, stime, cutime and cstime in /proc/PID/stat, before and after)
  maxrss_kb    the largest resident set of any one process (getrusage's children maximum;
               an --also tree's VmHWM, its peak reset through clear_refs before the start)
  treepeak_kb  the largest sum of resident sets of the whole tree (and the --also trees)
               seen by sampling every 20 ms
and to OUT.by, CPU seconds by process name, sampled (what each process had used when last seen,
at most 20 ms before it ended: exact enough for processes that live through the run), and the
--also trees' CPU apart: "NAME=SECONDS ... also=SECONDS".
Exits with COMMAND's status. A process started by COMMAND that is still running 60 s after
COMMAND ended is an error (killed, exit 1).
"""

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as listed:
                found.extend(int(p) for p in listed.read().split())
    except (FileNotFoundError, ProcessLookupError):
        pass
    return found


def tree(pid):
    pids, queue = [], [pid]
    while queue:
        current = queue.pop()
        pids.append(current)
        queue.extend(children(current))
    return pids


def cpu_seconds(pids):
    """User and system seconds of `pids`, their reaped children's included."""
    user = system = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = [int(f) for f in stat.read().rsplit(")", 1)[1].split()[11:15]]
        except (FileNotFoundError, ProcessLookupError):
            continue
        user += fields[0] + fields[2]
        system += fields[1] + fields[3]
    return user / TICK, system / TICK


def name_and_cpu(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text.rsplit(")", 1)[1].split()
    return text[text.index("(") + 1:text.rindex(")")], (int(fields[11]) + int(fields[12])) / TICK


def resident_kb(pid):
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * PAGE // 1024
    except (FileNotFoundError, ProcessLookupError):
        return 0


def high_water_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def main():
    arguments = sys.argv[1:]
    also = []
    while arguments and arguments[0] == "--also":
        also.append(int(arguments[1]))
        arguments = arguments[2:]
    if len(arguments) < 3 or arguments[1] != "--":
        sys.exit(__doc__)
    out, command = arguments[0], arguments[2:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("tree-usage: prctl(PR_SET_CHILD_SUBREAPER) failed")
    also_pids = [p for root in also for p in tree(root)]
    for pid in also_pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as refs:
                refs.write("5")
        except OSError:
            pass
    also_before = cpu_seconds(also_pids)
    start = time.monotonic()
    child = subprocess.Popen(command)
    peak = 0
    seen = {}
    while child.poll() is None:
        own = tree(os.getpid())[1:]
        for pid in own:
            if (sample := name_and_cpu(pid)) is not None:
                seen[pid] = sample
        pids = own + [p for root in also for p in tree(root)]
        peak = max(peak, sum(resident_kb(p) for p in pids))
        time.sleep(0.02)
    wall = time.monotonic() - start
    also_pids = [p for root in also for p in tree(root)]
    also_after = cpu_seconds(also_pids)
    also_user, also_system = (after - before for after, before in zip(also_after, also_before))
    also_peak = max((high_water_kb(p) for p in also_pids), default=0)
    # Orphans of the command (an office whose worker was killed) end on their own: reap them
    # so that their CPU counts in this process's children's.
    deadline = time.monotonic() + 60
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                for left in tree(os.getpid())[1:]:
                    os.kill(left, signal.SIGKILL)
                sys.exit("tree-usage: processes outlived the command by 60 s: killed")
            time.sleep(0.02)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    by_name = {}
    for name, seconds in seen.values():
        by_name[name] = by_name.get(name, 0) + seconds
    with open(out + ".by", "w") as result:
        result.write(" ".join(f"{name}={seconds:.3f}" for name, seconds in sorted(by_name.items()))
                     + f" also={also_user + also_system:.3f}\n")
    with open(out, "w") as result:
        result.write(f"{wall:.3f} {usage.ru_utime + also_user:.3f} "
                     f"{usage.ru_stime + also_system:.3f} "
                     f"{max(usage.ru_maxrss, also_peak)} {peak}\n")
    sys.exit(child.returncode if child.returncode >= 0 else 128 - child.returncode)


if __name__ == "__main__":
    main()
