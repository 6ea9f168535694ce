# Sourced by run-tests.sh and bench.sh: finds the JDK and the SoftRoCE VM runner, and makes sure
# net-ib's classes, test classes and test class path are built.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../bin/lib/find-jdk.sh
source "$root/bin/lib/find-jdk.sh"
export JCCL_JAVA
rxe=${JCCL_RXE_DIR:-$root/../shared/rxe}
if [ ! -x "$rxe/run-in-rxe-vm.sh" ]; then
  echo "net-ib: no SoftRoCE VM runner at $rxe (set JCCL_RXE_DIR to shared/rxe)" >&2
  exit 2
fi
# The guest sees the host's / read-only but mounts its own /tmp and /mnt, and follows symlinks
# inside the guest: share the runner's real directory explicitly, beside this checkout.
rxe=$(cd "$rxe" && pwd -P)
export RXE_VM_RW="${RXE_VM_RW:-$root}:$(dirname "$rxe")"
if [ ! -f "$root/net-ib/target/test-classpath.txt" ] || [ -n "$(find "$root/net-ib/src" "$root/spi/src" -newer \
     "$root/net-ib/target/test-classpath.txt" -name '*.java' -print -quit)" ]; then
  (cd "$root" && mvn -B -q -Dstyle.color=never -pl net-ib -am -DskipTests process-test-classes) || exit 1
fi
cd "$root"
