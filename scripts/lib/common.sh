# Shared by the project's scripts: finds a JDK, makes sure Maven is there, builds.
# Source it; it defines functions only.

GDASYNC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# The JUnit version of the parent pom (the GPU bundle ships the matching console launcher).
GDASYNC_JUNIT_VERSION="$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' "$GDASYNC_ROOT/pom.xml" | head -n 1)"
# The build compiles for Java release 25 (Panama FFM is final from Java 22; the code uses 25).
GDASYNC_JAVA_RELEASE=25

die() {
    echo "gdasync: $*" >&2
    exit 1
}

# Prints the major version of the java binary in $1, or nothing.
java_major() {
    local v
    v=$("$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}')
    [ -n "$v" ] && echo "${v%%.*}"
}

# Sets JAVA_HOME to a JDK whose major version is at least GDASYNC_JAVA_RELEASE, searching JAVA_HOME,
# the usual install folders and PATH, and preferring the newest. Fails with a clear message otherwise.
find_jdk() {
    local best="" best_major=0 found_old="" candidate major
    local candidates=()
    [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
    for d in /usr/lib/jvm/* /opt/java/* /opt/jdk* /usr/local/lib/jvm/* /Library/Java/JavaVirtualMachines/*/Contents/Home \
             "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/*; do
        [ -d "$d" ] && candidates+=("$d")
    done
    if command -v javac >/dev/null 2>&1; then
        candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
    fi
    for candidate in "${candidates[@]}"; do
        [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] || continue
        major=$(java_major "$candidate/bin/java")
        [ -n "$major" ] || continue
        if [ "$major" -ge "$GDASYNC_JAVA_RELEASE" ] && [ "$major" -gt "$best_major" ]; then
            best="$candidate"
            best_major="$major"
        elif [ "$major" -ge 22 ] && [ "$major" -lt "$GDASYNC_JAVA_RELEASE" ]; then
            found_old="$candidate (Java $major)"
        fi
    done
    if [ -z "$best" ]; then
        if [ -n "$found_old" ]; then
            die "found $found_old, but gdasync compiles for Java release $GDASYNC_JAVA_RELEASE: install a JDK $GDASYNC_JAVA_RELEASE or newer (for example Temurin $GDASYNC_JAVA_RELEASE) or set JAVA_HOME to one"
        fi
        die "no JDK $GDASYNC_JAVA_RELEASE or newer found (looked at JAVA_HOME, /usr/lib/jvm, /opt, ~/.sdkman and PATH). gdasync needs Java 22+ for Panama FFM and compiles for release $GDASYNC_JAVA_RELEASE: install a JDK $GDASYNC_JAVA_RELEASE (for example Temurin $GDASYNC_JAVA_RELEASE) or set JAVA_HOME to one"
    fi
    export JAVA_HOME="$best"
    export PATH="$JAVA_HOME/bin:$PATH"
}

# Makes sure Maven is on PATH, installing Debian's package when running as root.
ensure_maven() {
    command -v mvn >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdasync: Maven is missing; installing Debian's maven package" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null \
            || die "could not install Maven with apt-get"
    fi
    command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is not installed: install Apache Maven 3.8+ and retry"
}

# Runs Maven on the project with the found JDK. Guava inside Maven uses sun.misc.Unsafe; allow it
# quietly on JDKs that warn about it. Maven's console library writes a colour reset (ESC[0m) when it starts
# and ends even with colours off; jansi.noreset keeps logs free of escape codes.
# GDASYNC_MAVEN_REPO, when set, is the local repository to use instead of the user's (~/.m2/repository).
run_maven() {
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow -Djansi.noreset=true"
    local repo=()
    [ -n "${GDASYNC_MAVEN_REPO:-}" ] && repo=("-Dmaven.repo.local=$GDASYNC_MAVEN_REPO")
    (cd "$GDASYNC_ROOT" && mvn -B -ntp -Dstyle.color=never "${repo[@]}" "$@")
}

# The local Maven repository run_maven uses: GDASYNC_MAVEN_REPO, else the one settings.xml names, else ~/.m2/repository.
maven_repo() {
    if [ -n "${GDASYNC_MAVEN_REPO:-}" ]; then
        echo "$GDASYNC_MAVEN_REPO"
        return
    fi
    local repo="" settings="$HOME/.m2/settings.xml"
    if [ -f "$settings" ]; then
        repo=$(sed -n 's:.*<localRepository>[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*</localRepository>.*:\1:p' "$settings" | head -1) || repo=""
    fi
    echo "${repo:-$HOME/.m2/repository}"
}

# MPJ Express, from Debian's libmpj-java: the MPJ bootstrap and the reference ping-pong use it, and
# libmp compiles against it. Its jars name log4j and commons jars in their manifests' Class-Path, which
# the JDK resolves beside the real jar file, where Debian has none; a private MPJ_HOME holding real copies
# of all of them works (symbolic links do not: the JDK follows them). Exports MPJ_HOME and installs
# mpj.jar into the local Maven repository as dev.gdasync.thirdparty:mpj:$GDASYNC_MPJ_VERSION.
GDASYNC_MPJ_VERSION=0.44
ensure_mpj() {
    local jar=/usr/share/java/mpj.jar
    if [ ! -f "$jar" ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "gdasync: MPJ Express is missing; installing Debian's libmpj-java package" >&2
            local apt_log
            apt_log=$( { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
                && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libmpj-java; } 2>&1) \
                || { echo "$apt_log" >&2; die "could not install libmpj-java (MPJ Express) with apt-get"; }
        fi
        [ -f "$jar" ] || die "MPJ Express is not installed ($jar is missing): install Debian's libmpj-java package (apt-get install libmpj-java, as root) and retry"
    fi
    local home="$GDASYNC_ROOT/.tools/mpj-home" stamp
    stamp="$(readlink -f "$jar")"
    if [ "$(cat "$home/.complete" 2>/dev/null)" != "$stamp" ] || [ ! -f "$home/lib/starter.jar" ] \
        || [ ! -f "$home/lib/mpj.jar" ] || [ ! -f "$home/lib/log4j-1.2.jar" ] || [ ! -e "$home/conf" ]; then
        local tmp="$home.tmp.$$" j
        rm -rf "$tmp"
        mkdir -p "$tmp/lib" "$tmp/logs" || die "cannot create $tmp"
        cp -L /usr/share/mpj/lib/*.jar "$tmp/lib/" || die "cannot copy MPJ Express's jars from /usr/share/mpj/lib"
        for j in log4j-1.2 commons-cli commons-codec commons-io; do
            cp -L "/usr/share/java/$j.jar" "$tmp/lib/" \
                || die "MPJ Express needs /usr/share/java/$j.jar (Debian's libmpj-java depends on it): reinstall libmpj-java"
        done
        ln -s /usr/share/mpj/conf "$tmp/conf"
        echo "$stamp" >"$tmp/.complete"
        rm -rf "$home"
        mv "$tmp" "$home" || die "cannot move $tmp to $home"
    fi
    export MPJ_HOME="$home"
    local repo
    repo="$(maven_repo)"
    local installed="$repo/dev/gdasync/thirdparty/mpj/$GDASYNC_MPJ_VERSION/mpj-$GDASYNC_MPJ_VERSION.jar"
    if [ ! -f "$installed" ] || ! cmp -s "$installed" "$stamp"; then
        echo "gdasync: installing $jar into the local Maven repository as dev.gdasync.thirdparty:mpj:$GDASYNC_MPJ_VERSION" >&2
        local log
        log=$(run_maven -q -N org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file -Dfile="$stamp" \
            -DgroupId=dev.gdasync.thirdparty -DartifactId=mpj -Dversion="$GDASYNC_MPJ_VERSION" -Dpackaging=jar \
            -DgeneratePom=true 2>&1) || { echo "$log" >&2; die "could not install $jar into the local Maven repository"; }
    fi
}

# MPJ Express's own test suite: the test/ folder of the original tarball of Debian's mpj source package (Debian's
# libmpj-java ships no tests). Downloads the tarball once (pinned URL, sha256 checked), extracts test/ into
# .tools/mpj-tests/test and compiles what test/TestSuite.java needs (javac finds the cases through -sourcepath and
# compiles only those) against $MPJ_HOME/lib/mpj.jar into .tools/mpj-tests/classes, unmodified. Stamped: runs once.
# Exports GDASYNC_MPJ_TESTS. Needs find_jdk and ensure_mpj first. Returns 1 after saying why (no network, a wrong
# hash, a failed compile) instead of exiting: scripts/mpj-suite stops then, scripts/test goes on (the suite's test skips).
GDASYNC_MPJ_TESTS_URL=http://deb.debian.org/debian/pool/main/m/mpj/mpj_0.44+dfsg.orig.tar.xz
GDASYNC_MPJ_TESTS_SHA256=75ab5bbb2e40359c75cb30222b6d85d2ba0d1291a0fcef0c6b0b4f465436bb75
ensure_mpj_tests() {
    local dir="$GDASYNC_ROOT/.tools/mpj-tests" stamp
    stamp="$GDASYNC_MPJ_TESTS_SHA256 with-beyond $(cksum <"$MPJ_HOME/lib/mpj.jar" 2>/dev/null)"
    if [ "$(cat "$dir/.complete" 2>/dev/null)" = "$stamp" ] && [ -f "$dir/classes/TestSuite.class" ]; then
        export GDASYNC_MPJ_TESTS="$dir"
        return 0
    fi
    [ -f "$MPJ_HOME/lib/mpj.jar" ] || { echo "gdasync: MPJ Express's test suite needs MPJ_HOME/lib/mpj.jar (ensure_mpj first)" >&2; return 1; }
    local tarball="$GDASYNC_ROOT/.tools/${GDASYNC_MPJ_TESTS_URL##*/}" sum
    if [ ! -f "$tarball" ] || [ "$(sha256sum "$tarball" | cut -d' ' -f1)" != "$GDASYNC_MPJ_TESTS_SHA256" ]; then
        command -v curl >/dev/null 2>&1 || { echo "gdasync: cannot fetch MPJ Express's test suite: curl is not installed" >&2; return 1; }
        echo "gdasync: fetching MPJ Express's test suite (test/ of Debian's mpj 0.44 source tarball, 1.9 MB)" >&2
        mkdir -p "$GDASYNC_ROOT/.tools"
        local curl_log
        curl_log=$(curl -fsSL --retry 2 --connect-timeout 20 --max-time 300 -o "$tarball.part" "$GDASYNC_MPJ_TESTS_URL" 2>&1) || {
            rm -f "$tarball.part"
            echo "gdasync: cannot download MPJ Express's test suite from $GDASYNC_MPJ_TESTS_URL: ${curl_log:-curl failed} (no network, or the file is gone from the mirror)" >&2
            return 1
        }
        sum="$(sha256sum "$tarball.part" | cut -d' ' -f1)"
        if [ "$sum" != "$GDASYNC_MPJ_TESTS_SHA256" ]; then
            rm -f "$tarball.part"
            echo "gdasync: $GDASYNC_MPJ_TESTS_URL has sha256 $sum, expected $GDASYNC_MPJ_TESTS_SHA256: not used" >&2
            return 1
        fi
        mv "$tarball.part" "$tarball"
    fi
    local tmp="$dir.tmp.$$" log
    rm -rf "$tmp"
    mkdir -p "$tmp/classes" || { echo "gdasync: cannot create $tmp" >&2; return 1; }
    # Only test/ (the tarball's top folder is mpj-v0_44).
    if ! log=$(tar -xJf "$tarball" -C "$tmp" --strip-components=1 mpj-v0_44/test 2>&1) || [ ! -f "$tmp/test/TestSuite.java" ]; then
        echo "gdasync: cannot extract test/ from $tarball: $log" >&2
        rm -rf "$tmp"
        return 1
    fi
    # TestSuite imports the benchmark packages on demand: their folders must be there, but javac compiles only the
    # classes TestSuite names (-implicit:class), and no benchmark is among them. The sources are Latin-1.
    if ! log=$("$JAVA_HOME/bin/javac" -nowarn -Xlint:none -encoding ISO-8859-1 -proc:none -implicit:class \
            -cp "$MPJ_HOME/lib/mpj.jar" -sourcepath "$tmp/test" -d "$tmp/classes" "$tmp/test/TestSuite.java" 2>&1); then
        echo "$log" >&2
        echo "gdasync: compiling MPJ Express's test suite (TestSuite.java and its cases) failed (above)" >&2
        rm -rf "$tmp"
        return 1
    fi
    # The folders TestSuite does not run (scripts/mpj-suite --beyond): threads, signals, perf, the Java Grande
    # benchmarks of sections 2 and 3, the mpiJava micro-benchmarks. Section 1 of the Java Grande benchmarks does not
    # compile as shipped (it imports a package without classes) and is left out.
    if ! log=$(cd "$tmp/test" && "$JAVA_HOME/bin/javac" -nowarn -Xlint:none -encoding ISO-8859-1 -proc:none \
            -cp "$MPJ_HOME/lib/mpj.jar" -sourcepath . -d "$tmp/classes" $(find mpi/threads mpi/signals mpi/perf \
            jgf_mpj_benchmarks/jgfutil jgf_mpj_benchmarks/section2 jgf_mpj_benchmarks/section3 microbenchmarkmpiJava \
            -name '*.java' | sort) 2>&1); then
        echo "$log" >&2
        echo "gdasync: compiling the folders of MPJ Express's test suite that TestSuite does not run failed (above)" >&2
        rm -rf "$tmp"
        return 1
    fi
    echo "$stamp" >"$tmp/.complete"
    rm -rf "$dir"
    mv "$tmp" "$dir" || { echo "gdasync: cannot move $tmp to $dir" >&2; return 1; }
    export GDASYNC_MPJ_TESTS="$dir"
}

# The ping-pong's latency plot draws text with Java2D, which needs fontconfig and one font. Installs
# Debian's smallest set when none is present (as root); otherwise says what is missing.
ensure_fonts() {
    if command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list 2>/dev/null | head -n 1)" ]; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdasync: no font found; installing Debian's fontconfig and fonts-dejavu-core (for plots)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fontconfig fonts-dejavu-core >/dev/null \
            || die "could not install fontconfig and fonts-dejavu-core with apt-get"
        return 0
    fi
    die "no font is installed (fc-list finds none): plots need fontconfig and a font, for example Debian's fonts-dejavu-core"
}

# A C and C++ compiler: nvcc needs one to build the KI kernels, and the tests compile the KI header's
# layout probe and a stand-in driver library with them. Installed from Debian when missing; elsewhere
# the kernel build and those tests say that they were skipped and why.
ensure_cxx() {
    if command -v g++ >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdasync: no C/C++ compiler found; installing Debian's gcc and g++ (KI kernels, layout checks)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc g++ >/dev/null \
            || die "could not install gcc and g++ with apt-get"
        return 0
    fi
    echo "gdasync: no gcc/g++ found and no apt-get to install them: the KI kernels and the C layout checks will be skipped" >&2
}

# UCX, the engine under the software NIC's ucx transport, through JUCX (a Maven dependency holding only JNI
# glue): the system's libucp must be there and of a version JUCX speaks. Debian 12 ships UCX 1.13.1, which
# JUCX 1.12.1 works with (docs/ucx.md). Installs Debian's libucx0 and ucx-utils when missing (as root).
ensure_ucx() {
    # grep reads all of ldconfig's output (no -q): under pipefail an early exit would fail ldconfig with SIGPIPE.
    if ldconfig -p 2>/dev/null | grep 'libucp\.so\.0 ' >/dev/null; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdasync: UCX is missing; installing Debian's libucx0 and ucx-utils (the ucx transport)" >&2
        local apt_log
        apt_log=$( { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libucx0 ucx-utils; } 2>&1) \
            || { echo "$apt_log" >&2; die "could not install libucx0 (UCX) with apt-get"; }
        return 0
    fi
    echo "gdasync: UCX (libucp.so.0) is not installed and cannot be installed here: the ucx transport and its tests will say so and skip" >&2
}

# rdma-core (Debian 12: 44.0): libibverbs and its mlx5 provider, which the mlx5 provider calls through FFM on a
# machine with a ConnectX NIC, and the headers (infiniband/mlx5dv.h) that the build's C probe checks the Java
# mlx5 layouts against. Installs Debian's libibverbs-dev (which pulls libibverbs1 and ibverbs-providers) when
# missing (as root); elsewhere the probe's tests say that they were skipped and why.
ensure_rdma() {
    if [ -f /usr/include/infiniband/mlx5dv.h ] && ldconfig -p 2>/dev/null | grep 'libmlx5\.so\.1 ' >/dev/null; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdasync: rdma-core is missing; installing Debian's libibverbs-dev and ibverbs-providers (the mlx5 provider)" >&2
        local apt_log
        apt_log=$( { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libibverbs-dev ibverbs-providers; } 2>&1) \
            || { echo "$apt_log" >&2; die "could not install libibverbs-dev (rdma-core) with apt-get"; }
        return 0
    fi
    echo "gdasync: rdma-core's headers (infiniband/mlx5dv.h) are not installed and cannot be installed here: the mlx5 layout checks will say so and skip" >&2
}

# The ping-pong's C peers (docs/bench/c-peers.md): Open MPI (mpicc, mpirun: the ompi mode) and ucx_perftest
# (ucx-utils: the ucx mode); gcc (the floor) comes with ensure_cxx. Installs Debian's openmpi-bin, libopenmpi-dev and
# ucx-utils when missing (as root); elsewhere those modes say why they are skipped, and their tests too.
ensure_cpeers() {
    local missing=()
    command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin libopenmpi-dev)
    command -v ucx_perftest >/dev/null 2>&1 || missing+=(ucx-utils)
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdasync: the ping-pong's C peers need ${missing[*]}; installing Debian's packages" >&2
        local apt_log
        apt_log=$( { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } 2>&1) \
            && return 0
        # Optional peers: a failed install must not stop the main job, only those modes.
        echo "$apt_log" >&2
        echo "gdasync: could not install ${missing[*]} with apt-get: the ping-pong's ompi and ucx modes and their tests will say so and skip" >&2
        return 0
    fi
    echo "gdasync: ${missing[*]} not installed and cannot be installed here: the ping-pong's ompi and ucx modes and their tests will say so and skip" >&2
}

# Slurm (Debian's slurm-wlm: slurmctld, slurmd, srun, sbatch) and munge, for scripts/slurm-cluster, the test cluster
# whose nodes are network namespaces (docs/getting-started.md §6). Installs them when missing (as root); returns 1
# when they are missing and cannot be installed.
ensure_slurm() {
    if command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v srun >/dev/null 2>&1 \
        && command -v munged >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdasync: Slurm is missing; installing Debian's slurm-wlm and munge (the Slurm launch tests)" >&2
        local apt_log
        apt_log=$( { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge; } 2>&1) \
            || { echo "$apt_log" >&2; return 1; }
        return 0
    fi
    return 1
}

setup() {
    find_jdk
    ensure_maven
    ensure_mpj
    ensure_fonts
    ensure_cxx
    ensure_ucx
    ensure_rdma
    ensure_cpeers
}

# Builds the apps module and what it depends on unless the jars are newer than every source file.
build_apps() {
    local jar="$GDASYNC_ROOT/apps/target/apps-0.1.0-SNAPSHOT.jar"
    if [ -f "$jar" ] && [ -z "$(find "$GDASYNC_ROOT" -path '*/target' -prune -o \( -name '*.java' -o -name 'pom.xml' -o -name '*.cu' -o -name '*.cuh' \) -newer "$jar" -print -quit)" ]; then
        return 0
    fi
    echo "gdasync: building (first use or sources changed)..." >&2
    run_maven -q -pl apps -am package -Dmaven.test.skip=true -DskipTests -Dgdasync.javadoc.skip=true || die "the build failed"
}

# The class path of the apps and their dependencies.
apps_classpath() {
    local cp="$GDASYNC_ROOT/apps/target/apps-0.1.0-SNAPSHOT.jar"
    for j in "$GDASYNC_ROOT"/apps/target/lib/*.jar; do
        cp="$cp:$j"
    done
    echo "$cp"
}
