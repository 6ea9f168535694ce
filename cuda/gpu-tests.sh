#!/usr/bin/env bash
# The GPU tests (the CUDA binding, the reduction kernels against the host bit for bit, collectives on
# device buffers ordered on CUDA streams), on a machine
# with a GPU and no Maven: JUnit's console launcher over the compiled classes of this checkout.
# On CPU machines `mvn -B verify` runs the same tests and skips them with the cause.
#
# Here:   mvn -B -q install -DskipTests && plugins/shim/nccl-tests/pack.sh     (JDK and launcher in .device)
# There:  cuda/gpu-tests.sh      (carry .device and cuda/target/classes, cuda/target/test-classes,
#                                 spi/target/classes, core/target/classes, core/target/test-classes,
#                                 net-socket/target/classes)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck disable=SC1091 # written by pack.sh
[ -f .device/activate.sh ] && source .device/activate.sh
command -v java > /dev/null || { echo "no java: run pack.sh here and carry .device, or install a JDK 22+" >&2; exit 2; }
launcher=${JUNIT_CONSOLE:-.device/junit-console.jar}
[ -f "$launcher" ] || { echo "no JUnit console launcher at $launcher (pack.sh puts one in .device)" >&2; exit 2; }
cp=cuda/target/classes:cuda/target/test-classes:spi/target/classes:core/target/classes:core/target/test-classes
cp=$cp:net-socket/target/classes
exec java --enable-native-access=ALL-UNNAMED -jar "$launcher" execute -cp "$cp" \
  --select-package io.jccl.cuda --select-package io.jccl.core.kernel \
  --select-class io.jccl.core.DeviceBufferArgumentsTest --select-class io.jccl.core.DeviceCollectivesTest \
  --select-class io.jccl.core.collective.StreamGateTest --select-class io.jccl.core.PeerRingTest \
  --select-class io.jccl.core.device.PeerRingSourceTest \
  --details=tree --disable-banner --disable-ansi-colors --fail-if-no-tests
