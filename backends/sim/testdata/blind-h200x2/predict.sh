#!/bin/bash
# Writes the simulator's predictions for the two-GPU blind set (from the repository root, with
# c3lab built as $C3LAB, default ./c3lab): per part the sweep's table (predicted-PART.txt) and
# every run's times (predicted-runs.txt). They were committed before any of it ran on a GPU.
set -eu -o pipefail
C3LAB=${C3LAB:-./c3lab}
. backends/sim/testdata/blind-h200x2/parts.sh
tmp=$(mktemp -d)
trap 'rm -rf $tmp' EXIT
{
  echo "# The simulator's times for every run of the two-GPU blind set ($($C3LAB version | head -1), profile h200-fit built in),"
  echo "# median over its repetitions, µs: compute alone, comm alone, both together (T_c3); F in % (- when undefined)."
  echo "# part scenario strategy t_comp t_comm t_c3 f"
} > $tmp/runs.txt
for part in $PARTS; do
  $C3LAB sweep --backend sim --scenarios "$(part_files $part)" --strategies "$(part_strategies $part)" \
    --out $tmp/$part.json --force 2>&1 | grep -v -e '^sweep [0-9]' -e '^c3lab: wrote' > $D/predicted-$part.txt
  python3 - "$part" $tmp/$part.json >> $tmp/runs.txt <<'PY'
import json, sys
part, path = sys.argv[1], sys.argv[2]
for r in json.load(open(path))["results"]:
    res = r.get("result")
    if not res:
        continue
    us = lambda k: "%.1f" % (res[k]["median_ns"] / 1e3)
    f = res.get("fraction_of_ideal")
    print(part, r["scenario"], r["strategy"], us("t_comp"), us("t_comm"), us("t_c3"), "-" if f is None else "%.1f" % (100 * f))
PY
done
mv $tmp/runs.txt $D/predicted-runs.txt
