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
# The pingpong's CSV (mode,bytes,iters,oneway_us,mbps,min_us,p50_us,p99_us,p99_9_us,max_us,run_min_us,run_max_us,
# spread_pct), its mpj rows renamed mpj-smpdev, and MpjPingPong's result lines over gdasync in the same columns.
{
    head -n 1 "$work/pp.csv"
    tail -n +2 "$work/pp.csv" | sed 's/^mpj,/mpj-smpdev,/'
    grep -o 'MPJ-PINGPONG-RESULT .*' "$work/gd.log" | awk '{
        printf "mpj-gdasync,%d,%d,%.4f,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f\n",
            $2, $3, $4, $2 / $4, $6, $7, $8, $9, $10, $12, $13, $14 }'
} >"$work/all.csv"
[ -n "$csv" ] && cp "$work/all.csv" "$csv"
awk -F, 'NR > 1 { us[$1 "," $2] = $4; p50[$1 "," $2] = $7; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
    END {
        printf "one-way latency, mean (p50), us; ratios to libmp host's mean (p50)\n"
        printf "%9s %18s %18s %18s %14s %14s %9s %9s\n", "bytes", "libmp host", "MPJ over gdasync", "MPJ smpdev", "gdasync/host",
            "smpdev/host", "gd MB/s", "host MB/s"
        for (i = 0; i < n; i++) {
            b = order[i]; h = us["host," b]; g = us["mpj-gdasync," b]; s = us["mpj-smpdev," b]
            hp = p50["host," b]; gp = p50["mpj-gdasync," b]; sp = p50["mpj-smpdev," b]
            printf "%9d %9.3f (%6.3f) %9.3f (%6.3f) %9.3f (%6.3f) %6.2f (%5.2f) %6.2f (%5.2f) %9.1f %9.1f\n", b, h, hp, g, gp, s, sp,
                g / h, gp / hp, s / h, sp / hp, b / g, b / h
        }
    }' "$work/all.csv"
