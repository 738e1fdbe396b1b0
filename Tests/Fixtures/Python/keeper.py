# SPDX-License-Identifier: Apache-2.0
import ctypes, os, signal, sys
WAKE = {signal.SIGTERM, signal.SIGCHLD}
signal.pthread_sigmask(signal.SIG_BLOCK, WAKE)
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
parent = os.getppid()
main = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ, setsigmask=(),
                       setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
ended = False
while not ended:
    info = signal.sigtimedwait(WAKE, 1)
    ended = (info is not None and info.si_signo == signal.SIGTERM) or os.getppid() != parent
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0: break
        ended = ended or pid == main
children = '/proc/self/task/%d/children' % os.getpid()
while True:
    left = [int(c) for c in open(children).read().split()]
    if not left: break
    for c in left:
        try: os.kill(c, signal.SIGKILL)
        except ProcessLookupError: pass
    for c in left:
        try: os.waitpid(c, 0)
        except ChildProcessError: pass
