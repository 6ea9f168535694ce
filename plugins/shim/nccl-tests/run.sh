#!/usr/bin/env bash
# NVIDIA nccl-tests through JCCL's shim, on a machine with a GPU, real NCCL and Open MPI's mpirun.
# Two ranks share GPU 0 with different NCCL_HOSTID values, so NCCL connects them through its
# network plugin: the shim (NCCL_NET=JcclSocket) or NCCL's own Socket, as each configuration says.
#
#   run.sh check        all_reduce, all_gather, reduce_scatter, broadcast, sendrecv and alltoall,
#                       -c 1, at every ncclNet version the shim exports (v6 to v12) that the
#                       installed NCCL accepts; non-zero exit on any #wrong, crash, hang, version
#                       mismatch or leak reported at the last communicator's destroy
#   run.sh bench CONFIG...   all_reduce and sendrecv (JCCL_BENCH_COLLS), 8 B to 512 MiB, each config;
#                       summarize.py prints the table (best per family, ratios)
#   run.sh lat CONFIG...     the same collectives at 8 B alone, JCCL_LAT_WARMUP (150000) warm-up and
#                       JCCL_LAT_ITERS (2000) timed iterations, so that both families are measured
#                       warm: in bench, 8 B is the first size after start-up. The shim's JVM is still
#                       compiling for 2 to 3 s of calls: on an H200 (async-profiler, 1 s intervals)
#                       its compiler threads took 19 to 54% of the process's samples in the first two
#                       intervals and 0 to 12% after, and NCCL's proxy thread ran JcclSocket's calls
#                       partly interpreted or C1 in the first two. 20000 iterations (about 0.5 s)
#                       timed JcclSocket while it was compiling: all_reduce at 0.82x of NCCL's
#                       Socket (median of 5 rounds alternating with 150000), against 0.96x after
#                       150000 (20 rounds, three calls). summarize.py takes 8 B from these runs if
#                       present. JCCL_LAT_CYCLES=N times N rows of JCCL_LAT_ITERS in each run (-N),
#                       and lat_rows.py gives each run's median row and the ratios between runs
#   run.sh package LIB...  all_reduce and sendrecv, -c 1, through each LIB (DIR/libnccl-net-NAME.so
#                       that `jccl package --jlink` made) with nothing of JCCL set but NCCL_NET_PLUGIN=LIB:
#                       no JCCL_*, no JAVA_HOME, no JDK needed on the machine; the package file names
#                       the transport and its runtime/ runs it. Non-zero exit on any #wrong, crash,
#                       hang, or NCCL not using the package's transport
#   run.sh collnet      all_reduce_perf, -c 1, 8 B to 64 MiB, with NCCL_COLLNET_ENABLE=1 and the shim's
#                       CollNet on JcclCollNet (JCCL_SHIM_COLLNET): forced (NCCL_ALGO=CollNetChain, which
#                       NCCL refuses to run without a usable CollNet; also at ncclCollNet v6) and as
#                       NCCL's tuner chooses; then
#                       the same without CollNet (the baseline). Non-zero exit on any #wrong, crash,
#                       hang, or a forced run whose CollNet JcclCollNet did not reduce
#   run.sh cpu CONFIG...   all_reduce and sendrecv at one size (JCCL_CPU_SIZE, 256M; JCCL_CPU_ITERS
#                       timed iterations, 300), with the cores the box and each rank's threads used in
#                       JCCL_CPU_WINDOW (3) seconds of them, and how long they waited for a core
#                       (cpu_sample.py): what a GB/s costs each
#                       transport, and how many cores a faster one would need
#   run.sh aot-train    writes the shim's AOT cache, jccl/jccl-shim.aot beside the shim (JDK 25+),
#                       with jccl-shim-train (JCCL_AOT_ROUNDS rounds of the shim's warm-up, 200000);
#                       every jccl configuration after it starts its JVM with the cache,
#                       jccl+JCCL_SHIM_AOT_CACHE=off without
#   run.sh ceilings     loopback TCP with many streams, the cost of one small write and read, how
#                       long a parked thread takes to run once woken, and pinned host<->device copies
#   JCCL_ROUNDS=N runs bench or lat N times over the configurations, in turn (OUT/r1..rN), and
#   prints the table over the rounds: medians, each round's ratio, rounds at the goal
#   (JCCL_CHECK_VERSIONS, JCCL_CHECK_COLLS, JCCL_BENCH_COLLS, JCCL_BENCH_ITERS, JCCL_BENCH_MIN and
#   JCCL_BENCH_MAX (sizes, default 8 and 512M) narrow a run;
#   JCCL_BENCH_CHECK=1 makes bench check every result, as -c 1; JCCL_STACKS_AFTER=N prints the
#   Java stacks of each rank of the shim's runs N seconds in, beside the run's log, for a hang;
#   JCCL_RANK_CPUS="0-7 8-15" pins rank r to the (r+1)th CPU list with taskset (pinned, runs of one
#   configuration still differed by up to a fifth on an H200 host: compare medians over rounds);
#   JCCL_SHIM_JVM_OPTS reaches the shim's JVM in every rank, e.g. -Xlog options with a file per rank)
#
# A CONFIG is NET[:TxS][@chN][+VAR=VALUE...]: NET = jccl (the shim), jccl-vN (shim limited to vN),
# before (the shim of the build pack.sh packed with JCCL_BEFORE_REV), build-NAME (one of its
# JCCL_BUILDS), socket (NCCL's own) or shm
# (no network: both ranks on one NCCL_HOSTID with NCCL_P2P_DISABLE=1, so NCCL's SHM transport
# stages every step through host memory as the network path does, with a transport that costs
# nothing: the network path's ceiling; it needs JCCL_GPUS=2, since NCCL refuses two ranks of one
# host on one GPU);
# TxS = NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD; @chN =
# NCCL_MIN_NCHANNELS=N and NCCL_NCHANNELS_PER_NET_PEER=N (collectives and send/recv). JCCL_MPS=1
# runs the ranks under CUDA MPS (see below); JCCL_GPUS=2 puts rank 1 on GPU 1 instead of GPU 0.
#
# Inputs (pack.sh puts them in .device/): JCCL_DEVICE_DIR (default .device) holding jccl/ (jars and
# libnccl-net.so), nccl-tests-src/, mpi-include/; JAVA_HOME or JCCL_JAVA_HOME (a JDK 22+);
# OUT (results, default ./nccl-tests-out). Builds nccl-tests under /tmp/jccl-nccl-tests.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dev=$(cd "${JCCL_DEVICE_DIR:-.device}" && pwd)
out=${OUT:-$PWD/nccl-tests-out}
build=/tmp/jccl-nccl-tests
timeout_s=${JCCL_NCCL_TESTS_TIMEOUT:-180}
mkdir -p "$out"
export JCCL_JAVA_HOME=${JCCL_JAVA_HOME:-${JAVA_HOME:-}}
plugin=$dev/jccl/libnccl-net.so
# The shim of this build and a JDK, for every command but package (which brings its own).
needs_shim() {
  [ -f "$plugin" ] || { echo "no $plugin: run pack.sh on the build machine and carry .device" >&2; exit 2; }
  [ -n "$JCCL_JAVA_HOME" ] || { echo "set JAVA_HOME or JCCL_JAVA_HOME to a JDK 22+" >&2; exit 2; }
}

build_nccl_tests() {
  [ -x "$build/bin/all_reduce_perf" ] && return 0
  mkdir -p "$build/mpi/include" "$build/mpi/lib"
  cp -r "$dev/mpi-include/." "$build/mpi/include/"
  # Debian's headers with the machine's libmpi: no C++ bindings (not in the runtime library)
  { echo '#define OMPI_SKIP_MPICXX 1'; cat "$dev/mpi-include/mpi.h"; } > "$build/mpi/include/mpi.h"
  libmpi=$(ls /usr/lib/x86_64-linux-gnu/libmpi.so.40 /usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so.40 2>/dev/null | head -1)
  [ -n "$libmpi" ] || { echo "no libmpi.so.40 on this machine" >&2; return 1; }
  ln -sf "$libmpi" "$build/mpi/lib/libmpi.so"
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
  cc=${cc:-90}
  rm -rf "$build/src" && cp -r "$dev/nccl-tests-src" "$build/src"
  make -C "$build/src" -j"$(nproc)" MPI=1 MPI_HOME="$build/mpi" NCCL_HOME=/usr CUDA_HOME=/usr/local/cuda \
    NVCC_GENCODE="-gencode=arch=compute_$cc,code=sm_$cc" BUILDDIR="$build/bin" > "$out/build.log" 2>&1 \
    || { tail -30 "$out/build.log"; return 1; }
  echo "built nccl-tests ($(grep -o 'NCCL_TESTS_VERSION[^"]*' -r "$build/src/src" 2>/dev/null | head -1)) for sm_$cc"
}

# Environment of one configuration, as -x options for mpirun.
config_env() {
  local spec=$1 base layout channels extra
  # NCCL_RUNTIME_CONNECT=0: every connection is made at init, so that the first size measured
  # does not carry the lazy connection set-up of NCCL 2.22+
  local -a env=(NCCL_IB_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_RUNTIME_CONNECT=0)
  # one GPU: both ranks on GPU 0; two: rank r on GPU r (run_one's wrapper sets it; nccl-tests'
  # own choice counts ranks per NCCL_HOSTID, which differ here)
  if [ "${JCCL_GPUS:-1}" = 2 ]; then env+=(JCCL_GPU_PER_RANK=1); else env+=(NCCL_TESTS_DEVICE=0); fi
  [[ $spec == pkg=* ]] || env+=(JCCL_JAVA_HOME="$JCCL_JAVA_HOME")
  [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && env+=(CUDA_MPS_PIPE_DIRECTORY="$CUDA_MPS_PIPE_DIRECTORY")
  IFS=+ read -r -a parts <<< "$spec"
  base=${parts[0]}
  for extra in "${parts[@]:1}"; do env+=("$extra"); done
  channels=""; [[ $base == *@ch* ]] && { channels=${base#*@ch}; base=${base%@ch*}; }
  layout=""; [[ $base == *:* ]] && { layout=${base#*:}; base=${base%%:*}; }
  case $base in
    jccl) env+=(NCCL_NET_PLUGIN="$plugin" NCCL_NET=JcclSocket) ;;
    jccl-v*) env+=(NCCL_NET_PLUGIN="$plugin" NCCL_NET=JcclSocket JCCL_SHIM_MAX_API_VERSION=${base#jccl-v}) ;;
    before) env+=(NCCL_NET_PLUGIN="$dev/jccl-before/libnccl-net.so" NCCL_NET=JcclSocket) ;;
    build-*) [ -f "$dev/jccl-$base/libnccl-net.so" ] || { echo "$spec: no $dev/jccl-$base (pack.sh JCCL_BUILDS)" >&2; return 1; }
             env+=(NCCL_NET_PLUGIN="$dev/jccl-$base/libnccl-net.so" NCCL_NET=JcclSocket) ;;
    socket) env+=(NCCL_NET_PLUGIN=none NCCL_NET=Socket) ;;
    # both ranks on host "jccl-host-shm" (run_one's wrapper)
    shm) [ "${JCCL_GPUS:-1}" = 2 ] || { echo "$spec needs JCCL_GPUS=2: NCCL refuses two ranks of one host on one GPU" >&2; return 1; }
         env+=(NCCL_NET_PLUGIN=none JCCL_ONE_HOST=shm NCCL_P2P_DISABLE=1) ;;
    # nothing of JCCL: the wrapper in run_one drops JAVA_HOME and JCCL_JAVA_HOME too
    pkg=*) env+=(NCCL_NET_PLUGIN="${base#pkg=}" PACKAGE_ONLY=1) ;;
    *) echo "unknown configuration $spec" >&2; return 1 ;;
  esac
  [ -n "$layout" ] && env+=(NCCL_SOCKET_NTHREADS=${layout%x*} NCCL_NSOCKS_PERTHREAD=${layout#*x})
  [ -n "$channels" ] && env+=(NCCL_MIN_NCHANNELS=$channels NCCL_NCHANNELS_PER_NET_PEER=$channels)
  for e in "${env[@]}"; do printf -- '-x\n%s\n' "$e"; done
}

# run_one LOG CONFIG BINARY ARGS...: 2 ranks on GPU 0; prints the exit status (124 = hang)
run_one() {
  local log=$1 spec=$2 bin=$3; shift 3
  local -a xs
  mapfile -t xs < <(config_env "$spec") || return 2
  local root_flags=(); [ "$(id -u)" = 0 ] && root_flags=(--allow-run-as-root)
  local jvm_opts=${JCCL_SHIM_JVM_OPTS:-}
  if [ -n "${JCCL_STACKS_AFTER:-}" ] && [[ $spec != socket* && $spec != shm* ]]; then
    # The shim's JVM runs with -Xrs (SIGQUIT is the host program's), so jcmd cannot start its
    # attach listener by signal: start it with the JVM, and print both ranks' Java stacks while
    # the run is still going (a run that hangs is killed at the timeout, stacks and all).
    jvm_opts="-XX:+StartAttachListener $jvm_opts"
    ( sleep "$JCCL_STACKS_AFTER"
      for pid in $(pgrep -x "${bin:0:15}"); do
        "$JCCL_JAVA_HOME/bin/jcmd" "$pid" Thread.print > "${log%.log}.stacks-$pid.txt" 2>&1
      done ) &
  fi
  # The shim's JVM options reach the ranks (mpirun passes only what -x names), with %p in a file
  # name each rank's own: -Xlog:...:file=$OUT/deopt-%p.log gives a log per rank.
  [ -n "$jvm_opts" ] && [[ $spec != socket* && $spec != shm* ]] && xs+=(-x "JCCL_SHIM_JVM_OPTS=$jvm_opts")
  # JCCL_RANK_CPUS="LIST0 LIST1": rank r runs on CPU list r+1 (taskset), so that every run puts
  # the ranks' threads on the same cores instead of where the scheduler happens to start them
  [ -n "${JCCL_RANK_CPUS:-}" ] && xs+=(-x "JCCL_RANK_CPUS=$JCCL_RANK_CPUS")
  timeout -k 10 "$timeout_s" mpirun "${root_flags[@]}" --bind-to "${JCCL_MPI_BIND:-none}" -np 2 \
    "${xs[@]}" \
    sh -c '[ -z "$PACKAGE_ONLY" ] || unset JAVA_HOME JCCL_JAVA_HOME PACKAGE_ONLY;
           [ -z "$JCCL_GPU_PER_RANK" ] || export NCCL_TESTS_DEVICE=$OMPI_COMM_WORLD_RANK;
           pin=""; [ -z "$JCCL_RANK_CPUS" ] || pin="taskset -c $(echo $JCCL_RANK_CPUS | cut -d" " -f$((OMPI_COMM_WORLD_RANK + 1)))";
           NCCL_HOSTID=jccl-host-${JCCL_ONE_HOST:-$OMPI_COMM_WORLD_RANK} exec $pin "$0" "$@"' "$build/bin/$bin" "$@" > "$log" 2>&1
  echo $?
}

check() {
  needs_shim
  build_nccl_tests || exit 1
  local failures=0 v coll log rc loaded problem accepted_max=0
  printf '%-8s %-16s %-8s %-10s %s\n' version collective exit oob problem | tee "$out/check.txt"
  for v in ${JCCL_CHECK_VERSIONS:-6 7 8 9 10 11 12}; do
    for coll in ${JCCL_CHECK_COLLS:-all_reduce all_gather reduce_scatter broadcast sendrecv alltoall}; do
      log="$out/check-v$v-$coll.log"
      rc=$(run_one "$log" "jccl-v$v" "${coll}_perf" -b 8 -e 64M -f 8 -g 1 -c 1 -n 5 -w 2)
      loaded=$(grep -o 'Loaded net plugin [^ ]* (v[0-9]*)' "$log" | head -1 | grep -o 'v[0-9]*)' | tr -d 'v)')
      if [ -n "$loaded" ] && [ "$loaded" != "$v" ]; then
        # the installed NCCL does not know v$v and took an older table: not this version's test
        printf '%-8s %-16s %-8s %-10s %s\n' "v$v" "$coll" - - "not accepted by this NCCL (it took v$loaded)" | tee -a "$out/check.txt"
        break
      fi
      oob=$(grep -o 'Out of bounds values *: *[0-9]*' "$log" | grep -o '[0-9]*$' | sort -n | tail -1)
      problem=""
      [ "$rc" = 124 ] || [ "$rc" = 137 ] && problem="hang (killed after ${timeout_s} s)"
      [ -z "$problem" ] && grep -qiE 'segmentation fault|signal [0-9]+|core dumped|SIGSEGV' "$log" && problem="crash"
      [ -z "$problem" ] && [ "$rc" != 0 ] && problem="exit $rc"
      [ -z "$problem" ] && [ "${oob:-x}" != 0 ] && problem="wrong results (out of bounds: ${oob:-none reported})"
      [ -z "$problem" ] && ! grep -q 'Assigned NET plugin JcclSocket\|Using network JcclSocket' "$log" && problem="NCCL did not use JcclSocket"
      [ -z "$problem" ] && [ -z "$loaded" ] && problem="no 'Loaded net plugin' line"
      [ -z "$problem" ] && grep -q 'still open (leaked)' "$log" && problem="leak at destroy: $(grep -o '[0-9]* comms and [0-9]* registrations' "$log" | head -1)"
      [ -n "$problem" ] && failures=$((failures + 1))
      printf '%-8s %-16s %-8s %-10s %s\n' "v$v" "$coll" "$rc" "${oob:--}" "${problem:-ok}" | tee -a "$out/check.txt"
    done
  done
  echo "failures: $failures" | tee -a "$out/check.txt"
  [ "$failures" = 0 ]
}

bench() {
  needs_shim
  build_nccl_tests || exit 1
  local spec coll tag
  for spec in "$@"; do
    for coll in ${JCCL_BENCH_COLLS:-all_reduce sendrecv}; do
      tag=$(printf %s "bench-$coll-$spec" | tr -c 'A-Za-z0-9_.@+=-' '_')
      rc=$(run_one "$out/$tag.log" "$spec" "${coll}_perf" -b "${JCCL_BENCH_MIN:-8}" -e "${JCCL_BENCH_MAX:-512M}" -f 2 -g 1 -c "${JCCL_BENCH_CHECK:-0}" -n "${JCCL_BENCH_ITERS:-20}" -w 5)
      echo "$spec $coll exit $rc"
    done
  done
  python3 "$here/summarize.py" "$out" | tee "$out/bench.txt"
}

lat() {
  needs_shim
  build_nccl_tests || exit 1
  local spec coll tag
  for spec in "$@"; do
    for coll in ${JCCL_BENCH_COLLS:-all_reduce sendrecv}; do
      tag=$(printf %s "lat-$coll-$spec" | tr -c 'A-Za-z0-9_.@+=-' '_')
      rc=$(run_one "$out/$tag.log" "$spec" "${coll}_perf" -b 8 -e 8 -g 1 -c 0 -n "${JCCL_LAT_ITERS:-2000}" \
        -w "${JCCL_LAT_WARMUP:-150000}" -N "${JCCL_LAT_CYCLES:-1}")
      echo "$spec $coll (8 B, warm) exit $rc"
    done
  done
}

# cpu CONFIG...: one large size per collective, long enough that cpu_sample.py reads, in the
# middle of the timed iterations, how many cores the box and each rank's threads used.
cpu() {
  needs_shim
  build_nccl_tests || exit 1
  local spec coll tag size=${JCCL_CPU_SIZE:-256M}
  for spec in "$@"; do
    for coll in ${JCCL_BENCH_COLLS:-all_reduce sendrecv}; do
      tag=$(printf %s "cpu-$coll-$spec" | tr -c 'A-Za-z0-9_.@+=-' '_')
      rm -f "$out/$tag.log"
      python3 "$here/cpu_sample.py" "$out/$tag.log" "${coll}_perf" "${JCCL_CPU_SKIP:-2}" "${JCCL_CPU_WINDOW:-3}" \
        > "$out/$tag.cpu" &
      sampler=$!
      rc=$(run_one "$out/$tag.log" "$spec" "${coll}_perf" -b "$size" -e "$size" -g 1 -c 0 \
        -n "${JCCL_CPU_ITERS:-300}" -w 20)
      # A run that failed, or ended before the window did, leaves nothing to wait for.
      kill "$sampler" 2>/dev/null
      wait "$sampler" 2>/dev/null
      echo "$spec $coll exit $rc: $(awk '$1 ~ /^[0-9]+$/ && NF >= 12 { print "busbw", $8, "GB/s out of place" }' "$out/$tag.log")"
      if [ -s "$out/$tag.cpu" ]; then
        cat "$out/$tag.cpu"
      else
        echo "cpu: no sample: the run ended before its window (more JCCL_CPU_ITERS) or never started"
      fi
    done
  done
}

package() {
  build_nccl_tests || exit 1
  local failures=0 lib name net coll log rc oob problem
  printf '%-24s %-12s %-8s %-6s %s\n' package collective exit oob problem | tee "$out/package.txt"
  for lib in "$@"; do
    name=$(basename "$lib" .so)
    net=$(sed -n 's/^ *JCCL_SHIM_NET *= *//p' "${lib%.so}.properties" 2>/dev/null | head -1)
    for coll in ${JCCL_CHECK_COLLS:-all_reduce sendrecv}; do
      log="$out/package-$name-$coll.log"
      rc=$(run_one "$log" "pkg=$lib" "${coll}_perf" -b 8 -e 64M -f 8 -g 1 -c 1 -n 5 -w 2)
      oob=$(grep -o 'Out of bounds values *: *[0-9]*' "$log" | grep -o '[0-9]*$' | sort -n | tail -1)
      problem=""
      [ -z "$net" ] && problem="no JCCL_SHIM_NET in ${lib%.so}.properties"
      [ -z "$problem" ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && problem="hang (killed after ${timeout_s} s)"
      [ -z "$problem" ] && grep -qiE 'segmentation fault|signal [0-9]+|core dumped|SIGSEGV' "$log" && problem="crash"
      [ -z "$problem" ] && [ "$rc" != 0 ] && problem="exit $rc: $(grep -m1 -iE 'error|warn' "$log" | cut -c1-200)"
      [ -z "$problem" ] && [ "${oob:-x}" != 0 ] && problem="wrong results (out of bounds: ${oob:-none reported})"
      [ -z "$problem" ] && ! grep -q "Using network $net" "$log" && problem="NCCL did not use $net"
      [ -n "$problem" ] && failures=$((failures + 1))
      printf '%-24s %-12s %-8s %-6s %s\n' "$name" "$coll" "$rc" "${oob:--}" "${problem:-ok}" | tee -a "$out/package.txt"
    done
  done
  echo "failures: $failures" | tee -a "$out/package.txt"
  [ "$failures" = 0 ]
}

collnet() {
  needs_shim
  build_nccl_tests || exit 1
  local failures=0 spec log rc oob problem tag
  # TUNING: NCCL prints the algorithm of each call ("AllReduce: 8 Bytes -> Algo COLLNET_CHAIN ...")
  local cn=NCCL_COLLNET_ENABLE=1+JCCL_SHIM_COLLNET=JcclCollNet+NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
  printf '%-64s %-6s %-6s %s\n' configuration exit oob problem | tee "$out/collnet.txt"
  for spec in "jccl+$cn+NCCL_ALGO=CollNetChain" "jccl-v6+$cn+NCCL_ALGO=CollNetChain" "jccl+$cn" "jccl" "socket"; do
    tag=$(printf %s "collnet-$spec" | tr -c 'A-Za-z0-9_.@+=-' '_' | cut -c1-120)
    log="$out/$tag.log"
    rc=$(run_one "$log" "$spec" all_reduce_perf -b 8 -e 64M -f 4 -g 1 -c 1 -n "${JCCL_BENCH_ITERS:-10}" -w 3)
    oob=$(grep -o 'Out of bounds values *: *[0-9]*' "$log" | grep -o '[0-9]*$' | sort -n | tail -1)
    problem=""
    { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && problem="hang (killed after ${timeout_s} s)"
    [ -z "$problem" ] && grep -qiE 'segmentation fault|signal [0-9]+|core dumped|SIGSEGV' "$log" && problem="crash"
    [ -z "$problem" ] && [ "$rc" != 0 ] && problem="exit $rc: $(grep -m1 -iE 'error|warn' "$log" | cut -c1-200)"
    [ -z "$problem" ] && [ "${oob:-x}" != 0 ] && problem="wrong results (out of bounds: ${oob:-none reported})"
    if [ -z "$problem" ] && [[ $spec == *NCCL_ALGO=CollNet* ]] && ! grep -q 'JcclCollNet group .* reduced [1-9]' "$log"; then
      problem="JcclCollNet's aggregator reduced nothing"
    fi
    if [ -z "$problem" ] && [[ $spec == *NCCL_ALGO=CollNet* ]] && grep -q 'Algo ' "$log" && grep 'Algo ' "$log" | grep -qv 'Algo COLLNET_CHAIN'; then
      problem="NCCL ran some calls on another algorithm than CollNetChain"
    fi
    [ -n "$problem" ] && failures=$((failures + 1))
    printf '%-64s %-6s %-6s %s\n' "$spec" "$rc" "${oob:--}" "${problem:-ok}" | tee -a "$out/collnet.txt"
    grep -iE 'collnet' "$log" | sort | uniq -c | sort -rn | head -12 | cut -c1-220 >> "$out/collnet-lines.txt"
    awk '$1 ~ /^[0-9]+$/ && NF >= 12 { print FILENAME ": " $0 }' "$log" | sed "s|$out/||" >> "$out/collnet-table.txt"
  done
  echo "failures: $failures" | tee -a "$out/collnet.txt"
  [ "$failures" = 0 ]
}

aot_train() {
  needs_shim
  local trainer=$dev/jccl/jccl-shim-train cache=$dev/jccl/jccl-shim.aot lib
  [ -x "$trainer" ] || { echo "no $trainer: run pack.sh (it packs the trainer beside the shim)" >&2; exit 2; }
  rm -f "$cache" "$cache.classpath"
  timeout 180 "$trainer" "$plugin" "${JCCL_AOT_ROUNDS:-200000}" > "$out/aot-train.log" 2>&1
  echo "training exit $?"
  grep -E 'AOT cache written|warm-up: |^WARN' "$out/aot-train.log"
  # The other packed builds too (before, build-NAME), so that none of them is measured cold beside it.
  for lib in "$dev"/jccl-before/libnccl-net.so "$dev"/jccl-build-*/libnccl-net.so; do
    [ -f "$lib" ] || continue
    rm -f "$(dirname "$lib")/jccl-shim.aot" "$(dirname "$lib")/jccl-shim.aot.classpath"
    timeout 180 "$trainer" "$lib" "${JCCL_AOT_ROUNDS:-200000}" > "$out/aot-train-$(basename "$(dirname "$lib")").log" 2>&1
    echo "training $(basename "$(dirname "$lib")") exit $?"
  done
  [ -s "$cache" ]
}

ceilings() {
  gcc -O2 -pthread -o /tmp/jccl-tcp-ceiling "$here/tcp_ceiling.c" || return 1
  gcc -O2 -o /tmp/jccl-tcp-small-write "$here/tcp_small_write.c" || return 1
  gcc -O2 -pthread -o /tmp/jccl-wake-latency "$here/wake_latency.c" || return 1
  nvcc -O2 -o /tmp/jccl-copy-ceiling "$here/copy_ceiling.cu" || return 1
  { for s in 1 4 8 16; do /tmp/jccl-tcp-ceiling "$s" 3; done; /tmp/jccl-tcp-small-write; /tmp/jccl-wake-latency 2000
    /tmp/jccl-copy-ceiling; } |
    tee "$out/ceilings.txt"
}

# Two processes on one GPU are time-sliced by default (about 2 ms slices): a GPU kernel waiting for
# the network then runs only in its own slice, and every transfer is bound by the data in flight per
# slice, not by the transport. CUDA MPS runs both ranks' kernels at once, as two hosts would.
# JCCL_MPS=1 starts an MPS daemon for the run (and stops it after).
if [ "${JCCL_MPS:-0}" = 1 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/jccl-mps CUDA_MPS_LOG_DIRECTORY=/tmp/jccl-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    trap 'echo quit | nvidia-cuda-mps-control' EXIT
    echo "CUDA MPS started"
  else
    echo "CUDA MPS could not start: ranks are time-sliced" >&2
    unset CUDA_MPS_PIPE_DIRECTORY
  fi
fi

# JCCL_ROUNDS=N (bench, lat): N rounds of every configuration, in turn, into OUT/r1..rN, then
# summarize.py's table over the rounds (rounds.txt): one round's ratio is one draw of a spread of
# a fifth between rounds on these machines.
rounds() {
  local fn=$1 n=${JCCL_ROUNDS:-1} base=$out k
  shift
  if [ "$n" -le 1 ]; then
    "$fn" "$@"
    return
  fi
  local dirs=()
  for k in $(seq 1 "$n"); do
    out=$base/r$k
    mkdir -p "$out"
    echo "round $k of $n"
    "$fn" "$@"
    dirs+=("$out")
  done
  out=$base
  python3 "$here/summarize.py" "${dirs[@]}" | tee "$out/rounds.txt"
}

case ${1:-} in
  check) check ;;
  bench) shift; rounds bench "$@" ;;
  lat) shift; rounds lat "$@" ;;
  cpu) shift; cpu "$@" ;;
  ceilings) ceilings ;;
  aot-train) aot_train ;;
  package) shift; package "$@" ;;
  collnet) collnet ;;
  build) build_nccl_tests ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
