#!/usr/bin/env bash
# net-ib's tests on a real verbs device: boots ../shared/rxe's SoftRoCE VM (rdma_rxe, about 4 s)
# and runs every test of io.jccl.net.ib in it with the JUnit console launcher. Exit status: the
# tests'. Reports: net-ib/target/rxe-reports. Needs ../shared/rxe/install-deps.sh (as root).
#   JCCL_RXE_TEST_SELECT='--select-class io.jccl.net.ib.IbFaultTest'  runs a subset
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/vm.sh"
exec "$rxe/run-in-rxe-vm.sh" net-ib/rxe/in-vm-tests.sh
