#!/usr/bin/env bash
# Builds third-party ncclNet plugins from source, to check them with the native-plugin host:
#   bin/jccl plugins --plugin OUT/<plugin>/lib/<library>.so
#   bin/jccl tck --native OUT/<plugin>/lib/<library>.so
# A developer tool, not part of `mvn verify`: it needs the plugins' sources (a git clone, so the
# network, unless --src points at checkouts) and their build dependencies.
#
# Usage: plugins/native/thirdparty/build.sh [--src DIR] [--out DIR] [--cuda DIR] [--jobs N] PLUGIN...
#   PLUGIN        nccl-example | aws-ofi-nccl | rdma-sharp | rdma-sharp-patched | all
#                 rdma-sharp-patched is rdma-sharp with a one-character fix of a logging bug that crashes
#                 its init on verbs devices without a PCI path, SoftRoCE among them (see build_rdma_sharp_patched)
#   --src DIR     where the sources are, or are cloned to: DIR/nccl, DIR/aws-ofi-nccl,
#                 DIR/nccl-rdma-sharp-plugins (default: plugins/native/target/thirdparty/src).
#                 An existing checkout is used as it is; a missing one is cloned at the version below.
#   --out DIR     where the builds go (default: plugins/native/target/thirdparty)
#   --cuda DIR    CUDA toolkit (headers and cudart) for aws-ofi-nccl and rdma-sharp (default /usr/local/cuda)
#   --jobs N      parallel make jobs (default: nproc)
#
# Debian packages: git gcc g++ make autoconf automake libtool pkg-config, and
#   aws-ofi-nccl: libfabric-dev libhwloc-dev (run it with FI_PROVIDER=tcp where there is no EFA)
#   rdma-sharp:   libibverbs-dev (and ibverbs-providers to run it; a verbs device, e.g. SoftRoCE)
# Both also need a CUDA toolkit to build, and aws-ofi-nccl a CUDA driver (libcuda.so) to initialise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src="$here/../target/thirdparty/src"
out="$here/../target/thirdparty"
cuda=/usr/local/cuda
jobs=$(nproc)
plugins=()

# The versions this script was last run with (plugins/tck/README.md reports the kit on them).
NCCL_REPO=https://github.com/NVIDIA/nccl
NCCL_REV=v2.30.7-1
AWS_OFI_REPO=https://github.com/aws/aws-ofi-nccl
AWS_OFI_REV=v1.21.1
RDMA_SHARP_REPO=https://github.com/Mellanox/nccl-rdma-sharp-plugins
RDMA_SHARP_REV=2f5ac02e164336044388b7f1f6242cc0db575fec   # master of 2026-04-02; the last tag, v2.1.0, predates ncclNet v9

die() {
  echo "build.sh: $*" >&2
  exit 1
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --src) src=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --cuda) cuda=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    all) plugins+=(nccl-example aws-ofi-nccl rdma-sharp rdma-sharp-patched); shift ;;
    nccl-example|aws-ofi-nccl|rdma-sharp|rdma-sharp-patched) plugins+=("$1"); shift ;;
    *) die "unknown argument $1 (try --help)" ;;
  esac
done
[[ ${#plugins[@]} -gt 0 ]] || die "say which plugins to build: nccl-example, aws-ofi-nccl, rdma-sharp, rdma-sharp-patched or all (try --help)"
mkdir -p "$src" "$out"
src=$(cd "$src" && pwd)
out=$(cd "$out" && pwd)

need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || die "$tool is not installed (Debian: see the header of $0)"
  done
}

# checkout DIR REPO REV: DIR as it is if it exists, else a clone of REPO at REV.
checkout() {
  local dir=$1 repo=$2 rev=$3
  if [[ -d "$dir" ]]; then
    echo "build.sh: using the sources in $dir ($(git -C "$dir" describe --tags --always 2>/dev/null || echo 'not a git checkout'))"
    return
  fi
  need git
  echo "build.sh: cloning $repo at $rev into $dir"
  git clone -q "$repo" "$dir" ||
    die "cannot clone $repo (no network?): put a checkout at $dir, or pass --src DIR with one in it"
  git -C "$dir" -c advice.detachedHead=false checkout -q "$rev"
}

need_cuda() {
  [[ -f "$cuda/include/cuda_runtime.h" ]] ||
    die "$1 builds against CUDA's headers and runtime, and $cuda/include/cuda_runtime.h does not exist: install a CUDA toolkit or pass --cuda DIR"
}

# NCCL's example plugin: plugins/net/example (ext-net/example before NCCL 2.29.7), compiled as its
# Makefile compiles it. Exports ncclNetPlugin_v2 to _v12; devices() reports 0.
build_nccl_example() {
  need gcc
  checkout "$src/nccl" "$NCCL_REPO" "$NCCL_REV"
  local dir="$src/nccl/plugins/net/example"
  [[ -d "$dir" ]] || dir="$src/nccl/ext-net/example"
  [[ -f "$dir/plugin.c" ]] || die "no plugins/net/example/plugin.c nor ext-net/example/plugin.c in $src/nccl"
  mkdir -p "$out/nccl-example/lib"
  (cd "$dir" && gcc -Inccl -fPIC -shared -o "$out/nccl-example/lib/libnccl-net-example.so" plugin.c)
  echo "$out/nccl-example/lib/libnccl-net-example.so"
}

# aws-ofi-nccl against the system's libfabric and hwloc. --with-libfabric/--with-hwloc are left out
# on purpose: pointing them at /usr puts -isystem /usr/include before g++'s own headers, and
# <cstdlib> then fails with "stdlib.h: No such file or directory".
build_aws_ofi_nccl() {
  need gcc g++ make autoreconf libtoolize pkg-config
  pkg-config --exists libfabric || die "libfabric's development files are missing (Debian: apt-get install libfabric-dev)"
  need_cuda aws-ofi-nccl
  checkout "$src/aws-ofi-nccl" "$AWS_OFI_REPO" "$AWS_OFI_REV"
  (cd "$src/aws-ofi-nccl"; [[ -x configure ]] || ./autogen.sh)
  local build="$out/aws-ofi-nccl/build"
  mkdir -p "$build"
  (cd "$build" &&
    "$src/aws-ofi-nccl/configure" --prefix="$out/aws-ofi-nccl" --with-cuda="$cuda" --disable-tests >configure.log 2>&1 ||
    die "aws-ofi-nccl's configure failed; see $build/configure.log"
  make -j"$jobs" >make.log 2>&1 || die "aws-ofi-nccl's make failed; see $build/make.log"
  make install >install.log 2>&1 || die "aws-ofi-nccl's make install failed; see $build/install.log")
  echo "$out/aws-ofi-nccl/lib/libnccl-net-ofi.so"
}

# nccl-rdma-sharp-plugins: its IB verbs transport (without SHARP or UCX, which need HPC-X). The
# library exports ncclNetPlugin_v6 to _v11 (name "NCCL RDMA Plugin vN"); init fills in the rest of
# the table with the IB plugin (name IBext_vN).
build_rdma_sharp() {
  local sources=${1:-$src/nccl-rdma-sharp-plugins} name=${2:-nccl-rdma-sharp-plugins}
  need gcc make autoreconf libtoolize
  [[ -f /usr/include/infiniband/verbs.h ]] || die "libibverbs' development files are missing (Debian: apt-get install libibverbs-dev)"
  need_cuda nccl-rdma-sharp-plugins
  [[ -n "${1:-}" ]] || checkout "$sources" "$RDMA_SHARP_REPO" "$RDMA_SHARP_REV"
  (cd "$sources"; [[ -x configure ]] || ./autogen.sh)
  local build="$out/$name/build"
  mkdir -p "$build"
  (cd "$build" &&
    "$sources/configure" --prefix="$out/$name" --with-cuda="$cuda" >configure.log 2>&1 ||
    die "$name's configure failed; see $build/configure.log"
  make -j"$jobs" >make.log 2>&1 || die "$name's make failed; see $build/make.log"
  make install >install.log 2>&1 || die "$name's make install failed; see $build/install.log")
  echo "$out/$name/lib/libnccl-net.so"
}

# The same on a copy of the sources with one fix: src/p2p_plugin.c passes *device_path (a char) for
# a %s when realpath("/sys/class/infiniband/DEV/device") fails, which it does for every verbs
# device without a PCI device (rxe, siw), so init dies in vfprintf with SIGSEGV. The fix passes the
# string. Nothing else changes; plugins/tck/README.md reports the kit on both builds.
build_rdma_sharp_patched() {
  checkout "$src/nccl-rdma-sharp-plugins" "$RDMA_SHARP_REPO" "$RDMA_SHARP_REV"
  local copy="$out/nccl-rdma-sharp-plugins-patched/src"
  rm -rf "$copy"
  mkdir -p "$(dirname "$copy")"
  cp -a "$src/nccl-rdma-sharp-plugins" "$copy"
  local bug='WARN("Could not find real path of %s", \*device_path);'
  grep -q "$bug" "$copy/src/p2p_plugin.c" || die "the logging bug this build fixes is not in $copy/src/p2p_plugin.c: build rdma-sharp instead"
  sed -i "s/$bug/WARN(\"Could not find real path of %s\", device_path);/" "$copy/src/p2p_plugin.c"
  echo "build.sh: patched $copy/src/p2p_plugin.c: WARN(..., *device_path) -> WARN(..., device_path)"
  build_rdma_sharp "$copy" nccl-rdma-sharp-plugins-patched
}

for p in "${plugins[@]}"; do
  case "$p" in
    nccl-example) build_nccl_example ;;
    aws-ofi-nccl) build_aws_ofi_nccl ;;
    rdma-sharp) build_rdma_sharp ;;
    rdma-sharp-patched) build_rdma_sharp_patched ;;
  esac
done
