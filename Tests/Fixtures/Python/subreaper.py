# SPDX-License-Identifier: Apache-2.0
import ctypes, os, resource, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
cli = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
cli.wait()
adopted = 0
while True:
    try:
        os.waitpid(-1, 0)
        adopted += 1
    except ChildProcessError:
        break
print(cli.returncode, adopted, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
