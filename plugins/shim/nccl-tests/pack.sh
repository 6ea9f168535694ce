#!/usr/bin/env bash
# Prepares, on the CPU machine, everything run.sh needs on the GPU machine, in .device/ (ignored by
# git; carry it with the device tool): a jlink'ed JDK, JCCL's jars and libnccl-net.so, NVIDIA
# nccl-tests' source, and Open MPI's headers (the GPU machine has Open MPI's runtime, not its headers).
#
# usage: plugins/shim/nccl-tests/pack.sh [NCCL_TESTS_SOURCE]
#   NCCL_TESTS_SOURCE: a checkout of github.com/NVIDIA/nccl-tests (default: cloned into target/)
#   JCCL_BEFORE_REV=REV also packs the shim and jars of git revision REV as .device/jccl-before, so
#   that run.sh's "before" configurations measure it beside this build in the same run;
#   JCCL_BUILDS="NAME=REV ..." packs more revisions the same way, as .device/jccl-build-NAME, which
#   run.sh's "build-NAME" configurations run (experiment commits measured in one device call
#   without landing their knobs; run.sh aot-train trains each one's AOT cache too)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$root"
dest=.device
src=${1:-}
if [ -z "$src" ]; then
  src=target/nccl-tests-src
  [ -d "$src/.git" ] || git clone -q --depth 1 https://github.com/NVIDIA/nccl-tests "$src" \
    || { echo "cannot clone nccl-tests; pass a checkout as the first argument" >&2; exit 1; }
fi
mpi_include=$(ls -d /usr/lib/x86_64-linux-gnu/openmpi/include 2>/dev/null || true)
[ -n "$mpi_include" ] && [ -f "$mpi_include/mpi.h" ] \
  || { echo "Open MPI headers not found: apt-get install libopenmpi-dev" >&2; exit 1; }

mvn -B -q -ntp -DskipTests package
[ -f "$dest/jdk.tgz" ] || ../shared/device/pack-jdk.sh "$dest"
rm -rf "$dest/jccl" "$dest/nccl-tests-src" "$dest/mpi-include"
mkdir -p "$dest/jccl" "$dest/nccl-tests-src"
cp cli/target/lib/*.jar cli/target/lib/*.so cli/target/lib/jccl-shim-train "$dest/jccl/"
rm -f "$dest"/jccl/netty-* "$dest"/jccl/junit-* "$dest"/jccl/opentest4j-* "$dest"/jccl/open-test-* "$dest"/jccl/apiguardian-*
if [ -d "$src/.git" ] || git -C "$src" rev-parse >/dev/null 2>&1; then
  git -C "$src" archive HEAD | tar -x -C "$dest/nccl-tests-src"
else
  cp -r "$src"/. "$dest/nccl-tests-src/"
fi
cp -r "$mpi_include" "$dest/mpi-include"
rm -rf "$dest/jccl-before" "$dest"/jccl-build-*
builds=${JCCL_BUILDS:-}
[ -n "${JCCL_BEFORE_REV:-}" ] && builds="before=$JCCL_BEFORE_REV $builds"
for b in $builds; do
  name=${b%%=*} rev=${b#*=}
  [[ $b == *=* && $name =~ ^[A-Za-z0-9_]+$ && -n $rev ]] \
    || { echo "JCCL_BUILDS: '$b' is not NAME=REV (a name of letters, digits and _)" >&2; exit 1; }
  dir=$dest/jccl-build-$name
  [ "$name" = before ] && dir=$dest/jccl-before
  wt=$(mktemp -d)/jccl-$name
  git worktree add -q --detach "$wt" "$rev"
  (cd "$wt" && mvn -B -q -ntp -DskipTests package -pl cli -am)
  mkdir -p "$dir"
  cp "$wt"/cli/target/lib/jccl-*.jar "$wt"/cli/target/lib/picocli-*.jar "$wt"/cli/target/lib/*.so "$dir/"
  git worktree remove --force "$wt"
  echo "packed $rev ($(git rev-parse --short "$rev")) as $dir"
done
du -sh "$dest" | sed 's/^/packed: /'
