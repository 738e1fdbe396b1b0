# SPDX-License-Identifier: Apache-2.0
import csv, json, sys
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    json.dump(list(csv.reader(f)), sys.stdout)
