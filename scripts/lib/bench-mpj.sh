#!/usr/bin/env bash
# scripts/bench mpj [--sizes S,...] [--iters N] [--csv FILE] [--plot FILE.png] [--collectives FILE] [--bandwidth FILE]
# The ping-pong of MPJ Express programs side by side in one run, on two ranks of this host: libmp's host mode, MPJ
# Express's own devices, multicore (smpdev: both ranks threads of one JVM) and niodev (a JVM per rank, TCP over the
# loopback, started by NiodevStarter without MPJ's daemons), and the C peers Open MPI (MPI_Send/MPI_Recv over its shared
# memory) and the floor (a C hand-off through one shared mapping), through the pingpong app, then the same MpjPingPong
# program over gdasync (scripts/mprun --mpj). Prints one table (one-way latency, bandwidth, and MPJ over gdasync's ratio
# to libmp host and to Open MPI) and writes the pingpong's CSV (--plot: its one-way latencies drawn). With
# --collectives, then the same MPJ collectives program (the collectives app's MpjCollBench: Allreduce, Alltoall, Bcast
# of ints, after 10 s of warm-up) on 2 and 4 ranks under MPJ's multicore device, on niodev and over gdasync, and the
# same cases in C under Open MPI (OmpiCollBench), into FILE (collective,method,ranks,bytes,iters,median_us,min_us,
# max_us: per call, the slowest rank's, the median of 3 runs). With --bandwidth, the streaming bandwidth in the style of
# OSU's osu_bw (the msgrate app: per window rank 0 posts W non-blocking sends of 64 KiB, 1 MiB and 4 MiB, rank 1 as many
# receives, then one acknowledgement), windows of 8 and 64, libmp host, MPJ's multicore device and UCX's ucx_perftest
# (msgrate --mode host,mpj,ucx) then MpjMessageRate over gdasync, into FILE (msgrate's CSV columns, the mode first).
# A C peer that is missing (no Open MPI, no ucx_perftest) is skipped with the reason, its columns left empty.
# docs/bench/mpj.md has the figures and what they say.
set -euo pipefail
source "$(dirname "$0")/common.sh"
sizes=8,64,1024,4096,65536,1048576,4194304
iters=2000
csv=""
coll=""
plot=""
bandwidth=""
while [ $# -gt 0 ]; do
    case "$1" in
        --sizes) sizes="$2"; shift 2 ;;
        --iters) iters="$2"; shift 2 ;;
        --csv) csv="$2"; shift 2 ;;
        --collectives) coll="$2"; shift 2 ;;
        --plot) plot="$2"; shift 2 ;;
        --bandwidth) bandwidth="$2"; shift 2 ;;
        --help|-h) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "scripts/bench mpj: unknown option '$1' (--sizes, --iters, --csv, --plot, --collectives, --bandwidth)" ;;
    esac
done
[[ "$sizes" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "scripts/bench mpj: --sizes takes sizes in bytes separated by commas, got '$sizes'"
[[ "$iters" =~ ^[1-9][0-9]*$ ]] || die "scripts/bench mpj: --iters takes a positive number, got '$iters'"
setup
build_apps
mprun="$GDASYNC_ROOT/scripts/mprun"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# --bandwidth FILE: libmp host and MPJ's multicore device (msgrate) then MPJ over gdasync (MpjMessageRate), windows of
# 8 and 64, the same 1280 messages per timed run; prints MB/s and the ratios, writes msgrate's CSV columns.
streaming_bandwidth() {
    local out="$1" w iters
    echo "mode,bytes,window,iters,msgs_per_s,mbps,run_min_msgs_per_s,run_max_msgs_per_s,spread_pct,window_p50_us,window_p99_us" >"$work/bw.csv"
    for w in 8 64; do
        iters=$((1280 / w))
        echo "gdasync: streaming bandwidth, window $w: libmp host, MPJ's multicore device, ucx_perftest (msgrate --mode host,mpj,ucx)..." >&2
        "$mprun" -np 2 msgrate --mode host,mpj,ucx --sizes 65536,1048576,4194304 --window "$w" --iters "$iters" \
            --csv "$work/r$w.csv" >"$work/r$w.log" 2>&1 || { cat "$work/r$w.log" >&2; die "the msgrate app failed"; }
        tail -n +2 "$work/r$w.csv" | sed 's/^mpj,/mpj-smpdev,/' >>"$work/bw.csv"
        echo "gdasync: streaming bandwidth, window $w: MPJ over gdasync (mprun --mpj MpjMessageRate)..." >&2
        "$mprun" -np 2 --mpj dev.gdasync.apps.pingpong.MpjMessageRate --sizes 65536,1048576,4194304 --window "$w" \
            --iters "$iters" >"$work/g$w.log" 2>&1 || { cat "$work/g$w.log" >&2; die "MpjMessageRate over gdasync failed"; }
        # MPJ-MSGRATE-RESULT BYTES WINDOW ITERS MSGS_PER_S RUN_MIN RUN_MAX WINDOW_P50_US WINDOW_P99_US
        grep -o 'MPJ-MSGRATE-RESULT .*' "$work/g$w.log" | awk '{
            printf "mpj-gdasync,%d,%d,%d,%.0f,%.2f,%.0f,%.0f,%.1f,%.3f,%.3f\n", $2, $3, $4, $5, $5 * $2 / 1e6, $6, $7,
                ($7 - $6) * 100 / $5, $8, $9 }' >>"$work/bw.csv"
    done
    cp "$work/bw.csv" "$out"
    awk -F, 'NR > 1 { mb[$1 "," $3 "," $2] = $6; if (!(($3 "," $2) in seen)) { seen[$3 "," $2] = 1; order[n++] = $3 "," $2 } }
        END {
            printf "\nstreaming bandwidth (osu_bw style), MB/s of the median run; ratios of MPJ over gdasync\n"
            printf "%7s %9s %12s %12s %12s %12s %10s %10s %10s\n", "window", "bytes", "libmp host", "MPJ gdasync",
                "MPJ smpdev", "ucx_perftest", "gd/host", "gd/smpdev", "gd/ucx"
            for (i = 0; i < n; i++) {
                split(order[i], k, ","); h = mb["host," order[i]]; g = mb["mpj-gdasync," order[i]]; s = mb["mpj-smpdev," order[i]]
                u = mb["ucx," order[i]]
                printf "%7d %9d %12.0f %12.0f %12.0f %12s %10.2f %10.2f %10s\n", k[1], k[2], h, g, s,
                    (u > 0 ? sprintf("%.0f", u) : "-"), (h > 0 ? g / h : 0), (s > 0 ? g / s : 0),
                    (u > 0 ? sprintf("%.2f", g / u) : "-")
            }
        }' "$work/bw.csv"
}
echo "gdasync: libmp host, MPJ Express's multicore device and niodev, Open MPI (pingpong --mode host,mpj,mpj-niodev,ompi)..." >&2
"$mprun" -np 2 pingpong --mode host,mpj,mpj-niodev,ompi --sizes "$sizes" --iters "$iters" --csv "$work/pp.csv" >"$work/pp.log" 2>&1 \
    || { cat "$work/pp.log" >&2; die "the pingpong app failed"; }
echo "gdasync: MPJ Express over gdasync (mprun --mpj MpjPingPong)..." >&2
"$mprun" -np 2 --mpj dev.gdasync.apps.pingpong.MpjPingPong --sizes "$sizes" --iters "$iters" >"$work/gd.log" 2>&1 \
    || { cat "$work/gd.log" >&2; die "MpjPingPong over gdasync failed"; }
# The pingpong's CSV (mode,bytes,iters,oneway_us,mbps,min_us,p50_us,p99_us,p99_9_us,max_us,run_min_us,run_max_us,
# spread_pct), its mpj rows renamed mpj-smpdev (its mpj-niodev rows as they are), and MpjPingPong's result lines over gdasync in the same columns.
{
    head -n 1 "$work/pp.csv"
    tail -n +2 "$work/pp.csv" | sed 's/^mpj,/mpj-smpdev,/'
    grep -o 'MPJ-PINGPONG-RESULT .*' "$work/gd.log" | awk '{
        printf "mpj-gdasync,%d,%d,%.4f,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f\n",
            $2, $3, $4, $2 / $4, $6, $7, $8, $9, $10, $12, $13, $14 }'
} >"$work/all.csv"
[ -n "$csv" ] && cp "$work/all.csv" "$csv"
if [ -n "$plot" ]; then
    ensure_fonts
    "$JAVA_HOME/bin/java" -cp "$(apps_classpath)" dev.gdasync.apps.pingpong.CsvPlot "$work/all.csv" mode oneway_us \
        "MPJ Express ping-pong: one-way latency (mean)" "us" "$plot" || die "the plot could not be drawn"
fi
awk -F, 'NR > 1 { us[$1 "," $2] = $4; p50[$1 "," $2] = $7; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
    END {
        printf "one-way latency, mean (p50), us; ratios to the libmp host mean (p50) and to Open MPI'"'"'s\n"
        printf "%9s %18s %18s %18s %18s %18s %14s %14s %14s %14s %9s %9s\n", "bytes", "libmp host", "MPJ over gdasync",
            "MPJ smpdev", "MPJ niodev", "Open MPI (C)", "gdasync/host", "gdasync/ompi", "smpdev/host", "niodev/host",
            "gd MB/s", "host MB/s"
        for (i = 0; i < n; i++) {
            b = order[i]; h = us["host," b]; g = us["mpj-gdasync," b]; s = us["mpj-smpdev," b]; d = us["mpj-niodev," b]
            o = us["ompi," b]; op = p50["ompi," b]
            hp = p50["host," b]; gp = p50["mpj-gdasync," b]; sp = p50["mpj-smpdev," b]; dp = p50["mpj-niodev," b]
            printf "%9d %9.3f (%6.3f) %9.3f (%6.3f) %9.3f (%6.3f) %9.3f (%6.3f) %18s %6.2f (%5.2f) %14s %6.2f (%5.2f) %6.2f (%5.2f) %9.1f %9.1f\n",
                b, h, hp, g, gp, s, sp, d, dp, (o > 0 ? sprintf("%9.3f (%6.3f)", o, op) : "-"), g / h, gp / hp,
                (o > 0 ? sprintf("%6.2f (%5.2f)", g / o, gp / op) : "-"), s / h, sp / hp, d / h, dp / hp, b / g, b / h
        }
    }' "$work/all.csv"
[ -n "$bandwidth" ] && streaming_bandwidth "$bandwidth"
[ -n "$coll" ] || exit 0
# COLL:BYTES:ITERS:WARMUP, timed reps of 10-250 ms at MPJ over gdasync's speed (shorter ones measure the machine's
# hiccups more than the calls). Alltoall's BYTES is a rank's whole send buffer: 8 B gives each of 2 ranks an int; on 4
# ranks its smallest case is 16 B.
cases_for() {
    local smallest=$((4 * $1))
    [ "$smallest" -lt 8 ] && smallest=8
    echo "allreduce:8:10000:1000 allreduce:65536:1000:100 allreduce:1048576:50:5 alltoall:$smallest:10000:1000"
    echo "alltoall:65536:1000:100 alltoall:1048576:50:5 bcast:8:10000:1000 bcast:65536:1000:100 bcast:1048576:50:5"
}
# A result line: COLLECTIVES-MPJ-RESULT COLL BYTES ITERS US... (one per rep): to the CSV with the median of the reps.
to_csv() {
    local method="$1" ranks="$2"
    grep -o 'COLLECTIVES-MPJ-RESULT .*' | awk -v m="$method" -v n="$ranks" '{
        k = 0; for (i = 5; i <= NF; i++) v[k++] = $i + 0
        for (i = 0; i < k; i++) for (j = i + 1; j < k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        printf "%s,%s,%d,%d,%d,%.3f,%.3f,%.3f\n", $2, m, n, $3, $4, v[int(k / 2)], v[0], v[k - 1] }'
}
echo "collective,method,ranks,bytes,iters,median_us,min_us,max_us" >"$work/coll.csv"
for n in 2 4; do
    cases="$(cases_for "$n" | tr '\n' ' ')"
    echo "gdasync: MPJ collectives on $n ranks under MPJ's multicore device..." >&2
    (cd "$work" && PATH="$JAVA_HOME/bin:$PATH" "$JAVA_HOME/bin/java" -jar "$MPJ_HOME/lib/starter.jar" -np "$n" -dev multicore \
        -cp "$(apps_classpath)" dev.gdasync.apps.collectives.MpjCollBench 3 10.0 $cases) >"$work/cm.log" 2>&1 \
        || { cat "$work/cm.log" >&2; die "MpjCollBench under MPJ's multicore device failed"; }
    to_csv mpj-smpdev "$n" <"$work/cm.log" >>"$work/coll.csv"
    echo "gdasync: MPJ collectives on $n ranks on MPJ's niodev (NiodevStarter: a JVM per rank)..." >&2
    (cd "$work" && "$JAVA_HOME/bin/java" -cp "$(apps_classpath)" dev.gdasync.apps.common.NiodevStarter -np "$n" \
        dev.gdasync.apps.collectives.MpjCollBench 3 10.0 $cases) >"$work/cn.log" 2>&1 \
        || { cat "$work/cn.log" >&2; die "MpjCollBench on MPJ's niodev failed"; }
    to_csv mpj-niodev "$n" <"$work/cn.log" >>"$work/coll.csv"
    echo "gdasync: MPJ collectives on $n ranks over gdasync..." >&2
    "$mprun" -np "$n" --mpj dev.gdasync.apps.collectives.MpjCollBench 3 10.0 $cases >"$work/cg.log" 2>&1 \
        || { cat "$work/cg.log" >&2; die "MpjCollBench over gdasync failed"; }
    to_csv mpj-gdasync "$n" <"$work/cg.log" >>"$work/coll.csv"
    echo "gdasync: the same collectives on $n ranks in C under Open MPI (OmpiCollBench)..." >&2
    "$JAVA_HOME/bin/java" -cp "$(apps_classpath)" dev.gdasync.apps.collectives.OmpiCollBench "$n" 3 $cases >"$work/co.log" 2>&1 \
        || { cat "$work/co.log" >&2; die "the Open MPI collectives failed"; }
    grep -m1 'skipped' "$work/co.log" >&2 || true
    sed 's/COLLECTIVES-OMPI-RESULT/COLLECTIVES-MPJ-RESULT/' "$work/co.log" | to_csv ompi "$n" >>"$work/coll.csv"
done
cp "$work/coll.csv" "$coll"
awk -F, 'NR > 1 { t[$1 "," $3 "," $4 "," $2] = $6; if (!(($1 "," $3 "," $4) in seen)) { seen[$1 "," $3 "," $4] = 1; order[n++] = $1 "," $3 "," $4 } }
    END {
        printf "\nMPJ collectives, median us per call (slowest rank); Open MPI: the same cases in C\n"
        printf "%10s %6s %9s %14s %14s %14s %14s %10s %10s %10s\n", "collective", "ranks", "bytes", "MPJ smpdev",
            "MPJ niodev", "MPJ gdasync", "Open MPI (C)", "gd/smpdev", "gd/niodev", "gd/ompi"
        for (i = 0; i < n; i++) {
            split(order[i], k, ","); s = t[order[i] ",mpj-smpdev"]; d = t[order[i] ",mpj-niodev"]; g = t[order[i] ",mpj-gdasync"]
            o = t[order[i] ",ompi"]
            printf "%10s %6d %9d %14.2f %14.2f %14.2f %14s %10.2f %10.2f %10s\n", k[1], k[2], k[3], s, d, g,
                (o > 0 ? sprintf("%.2f", o) : "-"), (s > 0 ? g / s : 0), (d > 0 ? g / d : 0),
                (o > 0 ? sprintf("%.2f", g / o) : "-")
        }
    }' "$coll"
