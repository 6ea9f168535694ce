#!/usr/bin/env bash
# JCCL's device all-reduce against real NCCL's, bit for bit, on the same inputs, on the GPU machine:
# nccl_reference.py has NCCL (through PyTorch) all-reduce seeded random data of every type and
# operation on two ranks of GPU 0; NcclReferenceTest runs JCCL's two ranks (P2P ring, then host
# staging) on those inputs and prints the table of differing elements; non-zero exit on any.
#
# Here:   mvn -B -q install -DskipTests && plugins/shim/nccl-tests/pack.sh    (JDK and launcher in .device)
# There:  cuda/nccl-compare.sh [COUNT]   (carry .device and the class folders gpu-tests.sh names)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck disable=SC1091 # written by pack.sh
[ -f .device/activate.sh ] && source .device/activate.sh
command -v java > /dev/null || { echo "no java: run pack.sh here and carry .device" >&2; exit 2; }
ref=${JCCL_NCCL_REFERENCE_DIR:-/tmp/jccl-nccl-reference}
python3 cuda/nccl_reference.py "$ref" "${1:-1048579}"
cp=cuda/target/classes:cuda/target/test-classes:spi/target/classes:core/target/classes:core/target/test-classes
cp=$cp:net-socket/target/classes
JCCL_NCCL_REFERENCE_DIR=$ref exec java --enable-native-access=ALL-UNNAMED -jar .device/junit-console.jar execute \
  -cp "$cp" --select-class io.jccl.core.NcclReferenceTest --details=tree --disable-banner --disable-ansi-colors \
  --fail-if-no-tests
