#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""summary.py OUT.md HEADER RESULT.md...: one table of every ratio in the run.py results given.

Reads the tables run.py wrote (lib/bench.py's table(): "| tool | wall s | CPU s (user+sys) | user s |
sys s | peak MB | wall vs REF | CPU vs REF | ..."), nothing is measured again. Each table's first
row is its reference (Imprint's job or Imprint's start-up); for every row it prints the CPU, the
ratios to the reference as run.py computed them (peer ÷ imprint: above 1, Imprint is ahead), the
peak memory and the peak memory's ratio. HEADER (the date, the machine's load, its cores) goes
above the table. Writes OUT.md and prints it.
"""
import os, sys

out, header, files = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for path in files:
    folder = os.path.basename(os.path.dirname(path))
    heading, table = None, None
    for line in open(path, encoding="utf-8").read().splitlines() + [""]:
        if line.startswith("#"):
            # "# 1000 Ethereum-address QR PNGs, level M, ...; 2 cores, median of 5 ..." -> before ";"
            heading = line.lstrip("# ").split(";")[0].split(", 2 cores")[0]
        elif line.startswith("| tool |"):
            table = []
        elif table is not None and line.startswith("|"):
            if not line.startswith("|---"):
                table.append([c.strip() for c in line.strip("|").split("|")])
        elif table is not None:
            ref = table[0]
            if ref[7] != "1.00x":
                sys.exit(f"{path}: the first row of the table under '{heading}' is not its reference")
            for cells in table:
                tool, wall, cpu, peak, wall_ratio, cpu_ratio = cells[0], cells[1], cells[2], cells[5], cells[6], cells[7]
                peak_ratio = float(peak) / float(ref[5]) if float(ref[5]) else float("nan")
                rows.append((f"{folder}: {heading}", tool, cpu, cpu_ratio, wall_ratio, peak, f"{peak_ratio:.2f}x"))
            table = None

lines = [header, "",
         "| job | tool | CPU s | CPU ÷ imprint | wall ÷ imprint | peak MB | peak ÷ imprint |",
         "|---|---|---|---|---|---|---|"]
last = None
for job, *cells in rows:
    lines.append(f"| {job if job != last else ''} | " + " | ".join(cells) + " |")
    last = job
lines += ["", "The first row of each job is Imprint's (its reference); ratios are the peer's ÷ Imprint's, "
          "so above 1 Imprint is ahead. Medians of the alternating rounds; the tables, checks and every run "
          "are in: " + ", ".join(os.path.relpath(f, os.path.dirname(out)) for f in files) + "."]
text = "\n".join(lines) + "\n"
open(out, "w", encoding="utf-8").write(text)
print(text, end="")
