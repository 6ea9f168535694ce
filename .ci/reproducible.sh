#!/usr/bin/env bash
# Reproducible builds: packages every module twice from clean and compares each jar (main and
# -sources) byte for byte. Prints the jars that differ and exits 1 if any does.
#   .ci/reproducible.sh            (offline: run after one online build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
a=$(mktemp -d) b=$(mktemp -d)
trap 'rm -rf "$a" "$b"' EXIT
build() {
  mvn -B -q -o clean package -DskipTests -Dmaven.test.skip=true
  find . -path ./examples -prune -o -regex '.*/target/[^/]*\.jar' -print | while read -r jar; do
    mkdir -p "$1/$(dirname "$jar")" && cp "$jar" "$1/$jar"
  done
}
build "$a"
build "$b"
differ=0 count=0
while read -r jar; do
  count=$((count + 1))
  if ! cmp -s "$a/$jar" "$b/$jar"; then
    echo "differs: $jar"
    differ=$((differ + 1))
  fi
done < <(cd "$a" && find . -name '*.jar' | sort)
echo "reproducible: $((count - differ)) of $count jars identical across two clean builds"
[ "$differ" = 0 ]
