#!/usr/bin/env bash
# gdasync's GPU check, run from the bundle that scripts/gpu-check builds: the GPU test suite and the GPU
# benchmarks, with the bundle's own Java runtime (the machine needs the NVIDIA driver, not Java or CUDA's
# toolkit). Results go into DIR: machine.txt, gpu-tests.log and junit/ (XML reports), one log and CSV per
# benchmark, summary.txt. Without a GPU the tests still run (each skips, saying why), the benchmarks do not,
# and standard output gets one line: "no GPU here: N GPU tests skipped, benchmarks not run (why)".
#   bash run.sh [--out DIR] [--iters N]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$PWD/gpu-results}"
iters=10000
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift ;;
        --iters) iters="$2"; shift ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$out/tmp"
out="$(cd "$out" && pwd)"
java="$here/runtime/bin/java"
cp="$(ls "$here"/lib/*.jar | tr '\n' ':')"
tests="$(ls "$here"/tests/*-tests.jar | tr '\n' ':')"
jvm=(--enable-native-access=ALL-UNNAMED "-Djava.io.tmpdir=$out/tmp")
summary="$out/summary.txt"
: > "$summary"

note() {
    echo "$*" | tee -a "$summary"
}

# A count from the JUnit console launcher's summary ("[        17 tests aborted         ]").
count() {
    sed -n "s/^\[ *\([0-9]*\) tests $1 .*/\1/p" "$out/gpu-tests.log" | head -n 1
}

# After a failed test run: which tests failed and why, from the launcher's report, then where the whole log is.
show_failures() {
    echo "GPU tests failed (exit $tests_rc): $(count failed) failed, $(count successful) passed; from $out/gpu-tests.log:" >&2
    sed -n '/^Failures (/,/^Test run finished/p' "$out/gpu-tests.log" | head -n 200 >&2
    grep -E 'tests (successful|failed|skipped|aborted)' "$out/gpu-tests.log" >&2 || tail -n 40 "$out/gpu-tests.log" >&2
}

{
    cat "$here/BUNDLE.txt"
    echo "host: $(uname -a)"
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv 2>&1
    else
        echo "nvidia-smi: not found"
    fi
    "$java" -version 2>&1
} > "$out/machine.txt"
echo "gdasync GPU check: $(grep '^commit' "$here/BUNDLE.txt"), results in $out" >> "$summary"
[ -x "$java" ] || { note "the bundle's runtime is missing ($java)"; exit 1; }

# 0. Is there a GPU? gpu-latency --probe answers 0 (yes) or 3 (no, and why).
"$java" "${jvm[@]}" -cp "$cp" dev.gdasync.apps.gpulatency.GpuLatency --probe > "$out/gpu-probe.txt" 2>&1
probe_rc=$?
if [ "$probe_rc" -ne 0 ] && [ "$probe_rc" -ne 3 ]; then
    note "the GPU probe failed (exit $probe_rc):"
    cat "$out/gpu-probe.txt" | tee -a "$summary"
    exit 1
fi

# 0. The bundle itself: a host ping-pong between two rank JVMs needs no GPU and loads the library's classes with the
#    bundle's runtime, so a module the runtime lacks shows here, on any machine, not first on a GPU machine.
"$java" "${jvm[@]}" -cp "$cp" dev.gdasync.libmp.launch.MpRun -np 2 pingpong --mode host,sa --sizes 8,4096 \
    --iters 200 --reps 1 --warmup 0 --validate > "$out/host-pingpong.log" 2>&1
smoke_rc=$?
echo "host ping-pong with the bundle's runtime: exit $smoke_rc (log: host-pingpong.log)" >> "$summary"
if [ "$smoke_rc" -ne 0 ]; then
    note "the bundle's host ping-pong failed (exit $smoke_rc):"
    tail -n 30 "$out/host-pingpong.log" | tee -a "$summary"
    exit 1
fi

# 1. The GPU test suite: every test class whose name says Gpu. Each skips, printing why, where the machine
#    lacks what it needs; the counts below say how many ran.
#    Everything is on the JVM's class path (not the launcher's --class-path), so that tests which start
#    child JVMs with java.class.path give them the jars too.
"$java" "${jvm[@]}" -cp "$cp$tests$here/tests/junit-platform-console-standalone.jar" \
    org.junit.platform.console.ConsoleLauncher execute \
    --scan-class-path "${tests%:}" --include-classname '.*Gpu.*Test' \
    --reports-dir "$out/junit" --details=tree --disable-banner --disable-ansi-colors > "$out/gpu-tests.log" 2>&1
tests_rc=$?
echo "GPU tests: exit $tests_rc; $(grep -E 'tests (successful|failed|skipped|aborted)' "$out/gpu-tests.log" | tr -s ' ' | tr '\n' ';')" >> "$summary"
if [ "$tests_rc" -ne 0 ]; then
    show_failures
fi
if [ "$probe_rc" -eq 3 ]; then
    # No GPU: the tests above checked the bundle, its runtime and its test discovery; there is nothing to measure.
    skipped=$(( $(count aborted) + $(count skipped) ))
    note "no GPU here: $skipped GPU tests skipped, benchmarks not run ($(sed 's/^no GPU here: //' "$out/gpu-probe.txt" | head -n 1))"
    [ "$tests_rc" -eq 0 ]
    exit
fi
note "GPU: $(head -n 1 "$out/gpu-probe.txt"); GPU tests: $(count successful) passed, $(count failed) failed, $(( $(count aborted) + $(count skipped) )) skipped; results in $out"

# 2. Benchmarks.
bench() {
    local name="$1"
    shift
    "$java" "${jvm[@]}" -cp "$cp" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    note "$name: exit $rc (log: $name.log)"
    tail -n 20 "$out/$name.log" | sed 's/^/    /' >> "$summary"
    if [ "$rc" -ne 0 ]; then
        tail -n 40 "$out/$name.log" | sed 's/^/    /' >&2
    fi
    return 0
}
# From cuStreamWriteValue32 to the host seeing the word, and from a host store to cuStreamWaitValue32 letting
# the stream on (plus the write of an acknowledgement).
bench gpu-latency dev.gdasync.apps.gpulatency.GpuLatency --iters "$iters" --csv "$out/gpu-latency.csv"
# The GPU ping-pong with GPU buffers: host (kernel, cuStreamSynchronize, CPU send) against sa (a CUDA stream
# rings and waits), 8 B to 4 MiB; then both with a 10 us compute kernel per message.
bench pingpong-gpu dev.gdasync.libmp.launch.MpRun -np 2 pingpong --buffers gpu --mode host,sa \
    --sizes 8,64,512,4096,32768,262144,1048576,4194304 --iters "$iters" --reps 3 --warmup 2 --csv "$out/pingpong-gpu.csv"
bench pingpong-gpu-compute dev.gdasync.libmp.launch.MpRun -np 2 pingpong --buffers gpu --mode host,sa \
    --sizes 8,4096 --compute-us 10 --iters "$iters" --reps 3 --warmup 1 --csv "$out/pingpong-gpu-compute.csv"
bench pingpong-gpu-validated dev.gdasync.libmp.launch.MpRun -np 2 pingpong --buffers gpu --mode host,sa \
    --sizes 8,65536 --iters 1000 --reps 1 --warmup 0 --validate
bench pingpong-ki-gpu dev.gdasync.libmp.launch.MpRun -np 2 pingpong --mode ki --ki-executor gpu \
    --sizes 8,4096 --iters "$iters" --csv "$out/pingpong-ki-gpu.csv"
# The mlx5 provider (on the software mlx5 device: no ConnectX NIC is lent) beside the software NIC: a CUDA stream
# and a GPU kernel ring LibGDSync's mlx5 stores and wait on CQE owner bits.
bench pingpong-gpu-mlx5 dev.gdasync.libmp.launch.MpRun -np 2 pingpong --buffers gpu --mode host,sa --nic mlx5 \
    --sizes 8,4096,262144 --iters "$iters" --reps 3 --warmup 1 --validate --csv "$out/pingpong-gpu-mlx5.csv"
bench pingpong-ki-gpu-mlx5 dev.gdasync.libmp.launch.MpRun -np 2 pingpong --mode ki --ki-executor gpu --nic swnic,mlx5 \
    --sizes 8,4096 --iters "$iters" --validate --csv "$out/pingpong-ki-gpu-mlx5.csv"

[ "$tests_rc" -eq 0 ]
