#!/usr/bin/env bash
# Build htsim's own SIGCOMM 2011 datacenter main (datacenter/main_tcp.cpp) for the
# side-by-side FatTree comparison (scripts/htsim-dc/README.md).
#
#   scripts/htsim-dc/build.sh [--no-queue-log] HTSIM_SIM_DIR [OUT_DIR]
#
# HTSIM_SIM_DIR is the `sim` folder of a csg-htsim checkout (tested at 841d9e7). It is
# copied to OUT_DIR (default: HTSIM_SIM_DIR/../dc, or ../dc-nolog with --no-queue-log)
# and never edited in place. Three edits are made to the copy, each checked to apply
# exactly once:
#   1. datacenter/main.h      HOST_NIC 100000 -> 1000 (Mbps; every FatTree link is 1 Gbit/s)
#   2. datacenter/main_tcp.cpp srand(time(NULL)) -> srand(HTSIM_SEED) when set
#   3. datacenter/main_tcp.cpp setEndtime(timeFromSec(4)) -> HTSIM_END_S seconds when set
# With --no-queue-log, a fourth:
#   4. datacenter/main_tcp.cpp FatTreeTopology(..., &qlf, ...) -> (..., NULL, ...): no
#      QueueLoggerSampling on the switch and host queues, so no queue records in the
#      logfile; the TcpSinkLoggerSampling (throughput) is untouched.
# Unset variables keep htsim's behaviour (time seed, 4 s). Output:
# OUT_DIR/datacenter/htsim_tcp.
set -euo pipefail

no_queue_log=0
if [[ ${1:-} == --no-queue-log ]]; then no_queue_log=1; shift; fi
usage="usage: build.sh [--no-queue-log] HTSIM_SIM_DIR [OUT_DIR]"
src=${1:?$usage}
src=$(cd "$src" && pwd)
if ((no_queue_log)); then out=${2:-$(dirname "$src")/dc-nolog}; else out=${2:-$(dirname "$src")/dc}; fi
[[ -f $src/datacenter/main_tcp.cpp && -f $src/datacenter/main.h ]] ||
    { echo "build.sh: $src has no datacenter/main_tcp.cpp; pass the htsim 'sim' folder" >&2; exit 2; }
[[ $out != "$src" ]] || { echo "build.sh: OUT_DIR must differ from the checkout" >&2; exit 2; }

rm -rf "$out"
cp -r "$src" "$out"
# Objects copied from the checkout were built without these edits: rebuild the mains.
rm -f "$out"/datacenter/*.o "$out"/datacenter/htsim_*

# edit FILE PATTERN REPLACEMENT: replace a line matched by PATTERN (ERE), which must
# match exactly one line, so an upstream change fails loudly instead of silently.
edit() {
    local file=$1 pat=$2 rep=$3 n
    n=$(grep -cE "$pat" "$file" || true)
    [[ $n == 1 ]] || { echo "build.sh: '$pat' matches $n lines in $file, expected 1" >&2; exit 3; }
    sed -i -E "s|$pat|$rep|" "$file"
}

dc=$out/datacenter
edit "$dc/main.h" '^#define HOST_NIC 100000( .*)?$' \
    '#define HOST_NIC 1000 // htsim-dc: 1 Gbit/s hosts and links (was 100000)'
edit "$dc/main_tcp.cpp" '^( *)srand\(time\(NULL\)\);' \
    '\1srand(getenv("HTSIM_SEED") ? (unsigned)strtoul(getenv("HTSIM_SEED"), NULL, 10) : time(NULL)); // htsim-dc'
edit "$dc/main_tcp.cpp" '^( *)eventlist\.setEndtime\(timeFromSec\(4\)\);' \
    '\1eventlist.setEndtime(timeFromSec(getenv("HTSIM_END_S") ? atof(getenv("HTSIM_END_S")) : 4)); // htsim-dc'
if ((no_queue_log)); then
    # No QueueLoggerFactory for the topology: init_network then gives every queue a
    # NULL logger (fat_tree_topology.cpp:765-769; same at :780 :828 :843 :896 :913), and
    # the queues check `if (_logger)` before logging (queue.cpp, randomqueue.cpp).
    # '&' is escaped in the replacement: to sed it means the whole match.
    edit "$dc/main_tcp.cpp" \
        '^( *)FatTreeTopology\* top = new FatTreeTopology\(no_of_nodes, linkspeed, memFromPkt\(8\), &qlf, &eventlist,ff,RANDOM,0\);$' \
        '\1FatTreeTopology* top = new FatTreeTopology(no_of_nodes, linkspeed, memFromPkt(8), NULL, \&eventlist,ff,RANDOM,0); // htsim-dc: no queue loggers (was \&qlf)'
fi

echo "== edits applied to $out (diff against $src)"
diff -u "$src/datacenter/main.h" "$dc/main.h" || true
diff -u "$src/datacenter/main_tcp.cpp" "$dc/main_tcp.cpp" || true

jobs=${JOBS:-1}
nice -n 10 make -C "$out" -j"$jobs" libhtsim.a
nice -n 10 make -C "$dc" -j"$jobs" htsim_tcp
echo "built $dc/htsim_tcp"
