#!/usr/bin/env bash
# scripts/bench --compare OLD_COMMIT [--rounds N] [--keep] [-- APP [ARGS...]]
# Builds OLD_COMMIT's jars in a temporary git worktree beside this tree's, runs the same benchmark with each
# (APP is pingpong or msgrate under scripts/mprun -np 2; default: pingpong --mode host,sa --sizes 8,4096,65536),
# alternating old and new for N rounds (default 3; the order flips every round, so drift hits both), and prints
# new/old ratios of the medians per mode and size (dev.gdasync.apps.bench.CsvCompare). It prints, never fails on a
# ratio: a figure of one run on a shared machine is for reading, not for a gate. --keep leaves the worktree and the
# CSVs in place and prints where.
set -euo pipefail
source "$(dirname "$0")/common.sh"

usage() {
    sed -n '2,8s/^# \{0,1\}//p' "$0"
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
old_ref="$1"
shift
rounds=3
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive whole number"; rounds="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        --) shift; break ;;
        *) die "scripts/bench --compare: unknown option '$1' (the benchmark's own arguments go after --)" ;;
    esac
done
app=(pingpong --mode host,sa --sizes 8,4096,65536 --reps 3 --warmup 1)
[ $# -gt 0 ] && app=("$@")
case "${app[0]}" in
    pingpong|msgrate) ;;
    *) die "scripts/bench --compare runs pingpong or msgrate, not '${app[0]}'" ;;
esac
for a in "${app[@]}"; do
    [ "$a" != --csv ] || die "scripts/bench --compare writes the CSVs itself: leave out --csv"
done

commit=$(git -C "$GDASYNC_ROOT" rev-parse --verify --quiet "$old_ref^{commit}") || die "'$old_ref' is not a commit of $GDASYNC_ROOT"
now_label="$(git -C "$GDASYNC_ROOT" rev-parse --short HEAD)$( [ -z "$(git -C "$GDASYNC_ROOT" status --porcelain --untracked-files=no)" ] || echo '+changes')"
old_label="$(git -C "$GDASYNC_ROOT" rev-parse --short "$commit")"

setup
build_apps
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdasync-compare.XXXXXX")
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "kept: the old tree in $tmp/old, the CSVs in $tmp" >&2
    else
        git -C "$GDASYNC_ROOT" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
echo "compare: building $old_label's jars in $tmp/old ..." >&2
git -C "$GDASYNC_ROOT" worktree add --detach --quiet "$tmp/old" "$commit"
# The old tree's own setup (its tools), then its apps' jars; tests compiled but not run, whatever that commit's
# surefire executions say (-DskipTests skips them all; -Dmaven.test.skip trips over executions naming tests).
(cd "$tmp/old" && bash -c 'source scripts/lib/common.sh && setup >/dev/null && run_maven -q -pl apps -am package \
    -DskipTests -Dgdasync.javadoc.skip=true' | { grep -v '^ki-kernels: built' || true; } >&2) || die "building $old_label failed"

run_side() { # side round
    local tree="$GDASYNC_ROOT" csv="$tmp/$1-$2.csv"
    [ "$1" = old ] && tree="$tmp/old"
    echo "compare: round $2 of $rounds, $1 ($( [ "$1" = old ] && echo "$old_label" || echo "$now_label")): ${app[*]}" >&2
    "$tree/scripts/mprun" -np 2 "${app[@]}" --csv "$csv" > "$tmp/$1-$2.out" 2>&1 \
        || { cat "$tmp/$1-$2.out" >&2; die "the $1 side's run failed (round $2)"; }
    grep -E '^\[0\] (8 B|cpu share|other load)' "$tmp/$1-$2.out" | sed "s/^/  $1: /" >&2 || true
}
old_csvs=()
new_csvs=()
for ((r = 1; r <= rounds; r++)); do
    if ((r % 2 == 1)); then run_side old "$r"; run_side new "$r"; else run_side new "$r"; run_side old "$r"; fi
    old_csvs+=("$tmp/old-$r.csv")
    new_csvs+=("$tmp/new-$r.csv")
done
echo
echo "scripts/bench --compare $old_ref: scripts/mprun -np 2 ${app[*]}"
"$JAVA_HOME/bin/java" -cp "$(apps_classpath)" dev.gdasync.apps.bench.CsvCompare "$old_label" "$now_label" \
    "$(IFS=,; echo "${old_csvs[*]}")" "$(IFS=,; echo "${new_csvs[*]}")"
