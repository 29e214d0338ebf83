# Shared by the project's scripts: finds a JDK, makes sure Maven is there, builds.
# Source it; it defines functions only.

GDASYNC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
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
# quietly on JDKs that warn about it.
run_maven() {
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
    (cd "$GDASYNC_ROOT" && mvn -B -ntp -Dstyle.color=never "$@")
}

setup() {
    find_jdk
    ensure_maven
}

# Builds the apps module and what it depends on unless the jars are newer than every source file.
build_apps() {
    local jar="$GDASYNC_ROOT/apps/target/apps-0.1.0-SNAPSHOT.jar"
    if [ -f "$jar" ] && [ -z "$(find "$GDASYNC_ROOT" -path '*/target' -prune -o \( -name '*.java' -o -name 'pom.xml' \) -newer "$jar" -print -quit)" ]; then
        return 0
    fi
    echo "gdasync: building (first use or sources changed)..." >&2
    run_maven -q -pl apps -am package -Dmaven.test.skip=true || die "the build failed"
}

# The class path of the apps and their dependencies.
apps_classpath() {
    local cp="$GDASYNC_ROOT/apps/target/apps-0.1.0-SNAPSHOT.jar"
    for j in "$GDASYNC_ROOT"/apps/target/lib/*.jar; do
        cp="$cp:$j"
    done
    echo "$cp"
}
