# Sourced by bin/jccl and .ci/run: finds a JDK that can run JCCL (FFM needs 22 or newer) and sets
# JCCL_JAVA (the java launcher) and JCCL_JDK (its home). Order: JCCL_JAVA_HOME, JAVA_HOME, then the
# newest JDK 22+ under JCCL_JDK_SEARCH_DIRS. Without one it prints one line saying what to install
# and exits 1.

jccl_jdk_major() { # $1 = JDK home; prints its feature version, or nothing
  local release="$1/release" v
  [ -x "$1/bin/java" ] && [ -f "$release" ] || return 0
  v=$(sed -n 's/^JAVA_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$release")
  case "$v" in 1.*) echo 8 ;; *) echo "${v%%[.+-]*}" ;; esac
}

jccl_find_jdk() {
  local min=22 best="" best_major=0 home major dir
  for home in "${JCCL_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
    [ -n "$home" ] || continue
    major=$(jccl_jdk_major "$home")
    if [ -n "$major" ] && [ "$major" -ge "$min" ]; then JCCL_JDK=$home; return 0; fi
  done
  local dirs=${JCCL_JDK_SEARCH_DIRS:-/usr/lib/jvm:$HOME/.sdkman/candidates/java:$HOME/.jdks:/opt/java}
  local IFS=:
  for dir in $dirs; do
    dir=${dir/#\~/$HOME}
    for home in "$dir"/*; do
      major=$(jccl_jdk_major "$home")
      if [ -n "$major" ] && [ "$major" -ge "$min" ] && [ "$major" -gt "$best_major" ]; then
        best=$home best_major=$major
      fi
    done
  done
  [ -n "$best" ] || return 1
  JCCL_JDK=$best
}

if jccl_find_jdk; then
  JCCL_JAVA="$JCCL_JDK/bin/java"
else
  echo "jccl: no JDK 22 or newer found (JCCL needs FFM): install JDK 25 (e.g. Temurin: apt-get install temurin-25-jdk) or set JCCL_JAVA_HOME to one." >&2
  exit 1
fi
