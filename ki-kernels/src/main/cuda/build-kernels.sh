#!/usr/bin/env bash
# Builds the KI kernels (ki_templates.cu) into class-path resources under OUTDIR/dev/gdasync/ki/kernels:
#   ki_templates.ptx           PTX for compute_80, pinned to PTX ISA 8.0 so that a CUDA 12.0 driver can JIT it
#   ki_templates.sm_80.cubin   that PTX assembled for sm_80 (runs on every 8.x GPU)
#   ki_templates.sm_90.cubin   that PTX assembled for sm_90
#   kernels.properties         what was built, with which compiler, and each kernel's register count
# Run by the Maven build (exec-maven-plugin, phase generate-resources). Without nvcc it builds nothing and
# succeeds: the jar then ships without kernels, and dev.gdasync.ki.kernels.KiKernels says so. Any compile error fails.
#
# usage: build-kernels.sh OUTDIR
# nvcc is looked for in $NVCC, $CUDA_HOME/bin, PATH and /usr/local/cuda/bin; ptxas next to it, then on PATH.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
OUTDIR=$1
SRC=$(cd "$(dirname "$0")" && pwd)
DEST=$OUTDIR/dev/gdasync/ki/kernels
NAME=ki_templates
PTX_ISA=8.0
VIRTUAL_ARCH=compute_80
CUBIN_ARCHS="sm_80 sm_90"
KERNELS="gds_ki_pingpong gds_ki_send_templates gds_ki_exchange gds_compute_spin gds_msccl_interpreter gds_shmem_ordering gds_shmem_fetch_add gds_shmem_ops"

find_nvcc() {
    if [ -n "${NVCC:-}" ] && [ -x "$NVCC" ]; then
        echo "$NVCC"
    elif [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
        echo "$CUDA_HOME/bin/nvcc"
    elif command -v nvcc >/dev/null 2>&1; then
        command -v nvcc
    elif [ -x /usr/local/cuda/bin/nvcc ]; then
        echo /usr/local/cuda/bin/nvcc
    fi
}

nvcc=$(find_nvcc)
if [ -z "$nvcc" ]; then
    echo "ki-kernels: no nvcc found (looked at \$NVCC, \$CUDA_HOME/bin, PATH, /usr/local/cuda/bin); the jar ships without CUDA kernels"
    rm -rf "$DEST"
    exit 0
fi
ptxas=$(dirname "$nvcc")/ptxas
if [ ! -x "$ptxas" ]; then
    ptxas=$(command -v ptxas || true)
fi
if [ -z "$ptxas" ]; then
    echo "ki-kernels: $nvcc has no ptxas beside it and none is on PATH" >&2
    exit 1
fi

# Up to date: every output newer than every input (sources, this script, the compiler).
outputs=("$DEST/$NAME.ptx" "$DEST/kernels.properties")
for arch in $CUBIN_ARCHS; do
    outputs+=("$DEST/$NAME.$arch.cubin")
done
inputs=("$SRC/device.cuh" "$SRC/msccl_interpreter.cuh" "$SRC/shmem.cuh" "$SRC/$NAME.cu" "$SRC/build-kernels.sh" "$nvcc")
fresh=1
for out in "${outputs[@]}"; do
    for in in "${inputs[@]}"; do
        if [ ! -e "$out" ] || [ "$in" -nt "$out" ]; then
            fresh=0
        fi
    done
done
if [ $fresh -eq 1 ]; then
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. CUDA C++ to PTX for the virtual architecture.
"$nvcc" -ptx -arch="$VIRTUAL_ARCH" -std=c++17 -O3 -Werror all-warnings -Xcompiler -Wall,-Wextra \
    -o "$work/$NAME.nvcc.ptx" "$SRC/$NAME.cu"

# 2. Pin the PTX ISA: newer nvcc writes its own (9.0 for CUDA 13), which older drivers refuse to JIT. The
#    "used_bytes_mask" pragmas are optimization hints that need ISA 8.3; dropping them changes no semantics.
#    Anything else the kernels needed from a later ISA makes ptxas fail below.
sed -e "s/^\.version .*/.version $PTX_ISA/" -e '/^[[:space:]]*\.pragma "used_bytes_mask [0-9]*";$/d' \
    "$work/$NAME.nvcc.ptx" >"$work/$NAME.ptx"

# 3. Assemble the pinned PTX for each real architecture, so that a kernel that does not assemble fails the build.
for arch in $CUBIN_ARCHS; do
    "$ptxas" -arch="$arch" -O3 -v -o "$work/$NAME.$arch.cubin" "$work/$NAME.ptx" 2>"$work/ptxas.$arch.log" || {
        cat "$work/ptxas.$arch.log" >&2
        exit 1
    }
    awk -v arch="$arch" '
        /Compiling entry function/ { split($0, q, "'\''"); fn = q[2] }
        /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") print "registers." arch "." fn "=" $(i + 1) }
    ' "$work/ptxas.$arch.log" >>"$work/registers"
done

for kernel in $KERNELS; do
    grep -q "^\.visible \.entry $kernel(" "$work/$NAME.ptx" || {
        echo "ki-kernels: kernel $kernel is missing from the PTX" >&2
        exit 1
    }
done

nvcc_version=$("$nvcc" --version | sed -n 's/.*release [0-9.]*, V\([0-9.]*\).*/\1/p')
mkdir -p "$DEST"
cp "$work/$NAME.ptx" "$DEST/$NAME.ptx"
for arch in $CUBIN_ARCHS; do
    cp "$work/$NAME.$arch.cubin" "$DEST/$NAME.$arch.cubin"
done
{
    echo "# KI kernels built by ki-kernels/src/main/cuda/build-kernels.sh"
    echo "nvcc.version=$nvcc_version"
    echo "ptx.isa=$PTX_ISA"
    echo "ptx.arch=$VIRTUAL_ARCH"
    echo "cubin.archs=$(echo $CUBIN_ARCHS | tr ' ' ',')"
    echo "kernels=$(echo $KERNELS | tr ' ' ',')"
    sort "$work/registers"
} >"$DEST/kernels.properties"
echo "ki-kernels: built $(echo $KERNELS | wc -w) kernels with nvcc $nvcc_version (PTX ISA $PTX_ISA for $VIRTUAL_ARCH; cubins for $CUBIN_ARCHS)"
