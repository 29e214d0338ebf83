#!/usr/bin/env bash
# scripts/bench mpj [--sizes S,...] [--iters N] [--csv FILE]
# The ping-pong of MPJ Express programs side by side in one run, on two ranks of this host: libmp's host mode and MPJ
# Express's own multicore device (smpdev) through the pingpong app, then the same MpjPingPong program over gdasync
# (scripts/mprun --mpj). Prints one table (one-way latency, bandwidth, and each MPJ's ratio to libmp host) and writes
# the CSV (mode,bytes,iters,oneway_us,mbps). docs/bench/mpj.md has the figures and what they say.
set -euo pipefail
source "$(dirname "$0")/common.sh"
sizes=8,64,1024,4096,65536,1048576,4194304
iters=2000
csv=""
while [ $# -gt 0 ]; do
    case "$1" in
        --sizes) sizes="$2"; shift 2 ;;
        --iters) iters="$2"; shift 2 ;;
        --csv) csv="$2"; shift 2 ;;
        --help|-h) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "scripts/bench mpj: unknown option '$1' (--sizes, --iters, --csv)" ;;
    esac
done
[[ "$sizes" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "scripts/bench mpj: --sizes takes sizes in bytes separated by commas, got '$sizes'"
[[ "$iters" =~ ^[1-9][0-9]*$ ]] || die "scripts/bench mpj: --iters takes a positive number, got '$iters'"
setup
build_apps
mprun="$GDASYNC_ROOT/scripts/mprun"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "gdasync: libmp host and MPJ Express's multicore device (pingpong --mode host,mpj)..." >&2
"$mprun" -np 2 pingpong --mode host,mpj --sizes "$sizes" --iters "$iters" --csv "$work/pp.csv" >"$work/pp.log" 2>&1 \
    || { cat "$work/pp.log" >&2; die "the pingpong app failed"; }
echo "gdasync: MPJ Express over gdasync (mprun --mpj MpjPingPong)..." >&2
"$mprun" -np 2 --mpj dev.gdasync.apps.pingpong.MpjPingPong --sizes "$sizes" --iters "$iters" >"$work/gd.log" 2>&1 \
    || { cat "$work/gd.log" >&2; die "MpjPingPong over gdasync failed"; }
{
    echo "mode,bytes,iters,oneway_us,mbps"
    tail -n +2 "$work/pp.csv" | sed 's/^mpj,/mpj-smpdev,/'
    grep -o 'MPJ-PINGPONG-RESULT .*' "$work/gd.log" \
        | awk '{ printf "mpj-gdasync,%d,%d,%.4f,%.2f\n", $2, $3, $4, $2 / $4 }'
} >"$work/all.csv"
[ -n "$csv" ] && cp "$work/all.csv" "$csv"
awk -F, 'NR > 1 { us[$1 "," $2] = $4; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
    END {
        printf "%10s %12s %12s %12s %10s %10s %12s\n", "bytes", "host us", "mpj-gd us", "mpj-smp us", "gd/host", "smp/host", "gd MB/s"
        for (i = 0; i < n; i++) {
            b = order[i]; h = us["host," b]; g = us["mpj-gdasync," b]; s = us["mpj-smpdev," b]
            printf "%10d %12.3f %12.3f %12.3f %10.2f %10.2f %12.1f\n", b, h, g, s, (h > 0 ? g / h : 0), (h > 0 ? s / h : 0), (g > 0 ? b / g : 0)
        }
    }' "$work/all.csv"
