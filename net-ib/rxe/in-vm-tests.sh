#!/usr/bin/env bash
# Runs inside the SoftRoCE VM (started by run-tests.sh): net-ib's tests on rxe0 with the JUnit
# console launcher. Reports go to net-ib/target/rxe-reports (the repository is shared writable).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
ib=net-ib/target
cp="$ib/test-classes:$ib/classes:$(cat "$ib/test-classpath.txt")"
rm -rf "$ib/rxe-reports"
ibv_devinfo -d "${RXE_DEVICE:-rxe0}" | grep -E 'hca_id|state|active_mtu|link_layer' || true
# C1 only: under TCG the C2 compiler costs more than it gains for a test run
exec "$JCCL_JAVA" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC --enable-native-access=ALL-UNNAMED \
    ${JCCL_RXE_TEST_OPTS:-} -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --details=tree --reports-dir "$ib/rxe-reports" \
    ${JCCL_RXE_TEST_SELECT:---select-package io.jccl.net.ib}
