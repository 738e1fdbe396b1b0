# SPDX-License-Identifier: Apache-2.0
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(sys.argv[1], "w").write("%d %d" % (r.returncode, peak))
