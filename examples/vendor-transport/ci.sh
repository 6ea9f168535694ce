#!/usr/bin/env bash
# Builds the example vendor transport (ExampleUds) in its own Maven project, against JCCL's
# published artifacts in the local Maven repository, and runs JCCL's conformance kit on it.
#
# 1. Installs jccl-bom, jccl-spi and jccl-tck (and their parent pom) from this checkout when the local
#    repository lacks them or holds older builds than these sources.
# 2. Runs `mvn -B -o verify` in examples/vendor-transport.
# Exits non-zero if either step fails. Offline (-o): every artifact must already be in ~/.m2, as
# after JCCL's own build; set EXAMPLE_MVN_ONLINE=1 to let Maven download.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
offline=-o
[ "${EXAMPLE_MVN_ONLINE:-0}" = 1 ] && offline=

# MAVEN_REPO_LOCAL: a local repository other than ~/.m2/repository, for this check and for Maven.
repo_local=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
mvn_args=(-B $offline)
[ -n "${MAVEN_REPO_LOCAL:-}" ] && mvn_args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
repo="$repo_local/io/jccl"
version=0.1.0-SNAPSHOT
installed=(
  "$repo/jccl-parent/$version/jccl-parent-$version.pom"
  "$repo/jccl-bom/$version/jccl-bom-$version.pom"
  "$repo/jccl-spi/$version/jccl-spi-$version.jar"
  "$repo/jccl-tck/$version/jccl-tck-$version.jar"
)

needs_install() {
  local f
  for f in "${installed[@]}"; do
    [ -f "$f" ] && [ -f "$(dirname "$f")/maven-metadata-local.xml" ] || { echo "ci.sh: $f is not installed" >&2; return 0; }
  done
  # Sources newer than the oldest install: install again, so that the kit tests these sources. The
  # install time is that of maven-metadata-local.xml (the install plugin gives the artifacts
  # themselves their build files' times, cut to milliseconds).
  local oldest
  oldest=$(ls -tr "$repo"/jccl-{parent,bom,spi,tck}/$version/maven-metadata-local.xml | head -n 1)
  local newer
  newer=$(find "$root/pom.xml" "$root/bom/pom.xml" "$root/spi/pom.xml" "$root/spi/src/main" "$root/plugins/tck/pom.xml" \
               "$root/plugins/tck/src/main" -newer "$oldest" -print -quit)
  [ -n "$newer" ] && { echo "ci.sh: $newer is newer than $oldest" >&2; return 0; }
  return 1
}

if needs_install; then
  echo "== ci.sh: installing jccl-bom, jccl-spi and jccl-tck: mvn ${mvn_args[*]} -q install -DskipTests -pl bom,spi,plugins/tck -am"
  (cd "$root" && mvn "${mvn_args[@]}" -q install -DskipTests -pl bom,spi,plugins/tck -am)
else
  echo "== ci.sh: jccl-bom, jccl-spi and jccl-tck $version are installed and up to date"
fi

echo "== ci.sh: mvn ${mvn_args[*]} verify in examples/vendor-transport"
(cd "$here" && mvn "${mvn_args[@]}" verify)

# One line per test class: the kit's verdict at a glance.
for report in "$here"/target/surefire-reports/TEST-*.xml; do
  [ -f "$report" ] || continue
  line=$(grep -m1 -o '<testsuite [^>]*>' "$report")
  attr() { sed -n "s/.* $1=\"\([^\"]*\)\".*/\1/p" <<<"$line"; }
  echo "== ci.sh: $(attr name): $(attr tests) tests, $(attr failures) failures, $(attr errors) errors, $(attr skipped) skipped"
done
