#!/usr/bin/env bash
# The whole test suite in one command: installs what it needs, then builds and runs every
# configuration CI runs. Each configuration is a separate build under build-test/.
#   1. g++ Release, warnings as errors: unit, property, replay, header, consumer, compile-fail,
#      examples, stress tests, and a benchmark smoke run
#   2. clang++ Debug, warnings as errors: the same tests (stress with fewer items)
#   3. ASan+UBSan (clang++, Debug at -O1, the level ASan's documentation recommends; at -O0 the
#      lab's simulations took 723 of this configuration's 836 s of test time): every test
#   4. TSan (clang++): the two-thread stress tests, 10^7 items in all
#   (the stress tests run twice, with the channel's membarrier barrier and with fences forced;
#   the seccomp ping-pong runs 10^7 round trips in configuration 1, 10^5 elsewhere)
#   5. libFuzzer (clang++): every fuzz target for QLIMITS_FUZZ_SECONDS (default 30) seconds
# Usage: bash scripts/test.sh [quick]   ("quick": configuration 1 only)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/deps.sh"
qlimits_install_deps cmake make g++ clang libclang-rt-14-dev libfuzzer-14-dev \
  doctest-dev librapidcheck-dev libboost-dev libbenchmark-dev libreaderwriterqueue-dev || exit 1

jobs=$(nproc)
out="$root/build-test"
mkdir -p "$out"
passed=0 failed=0
failed_names=()

# run NAME CTEST_ARGS -- CMAKE_ARGS...
run() {
  local name=$1 ctest_args=$2
  shift 3
  local dir="$out/$name" t0=$SECONDS
  echo "=== $name: configure and build" >&2
  if ! cmake -S "$root" -B "$dir" -DQLIMITS_WERROR=ON "$@" >"$dir.configure.log" 2>&1; then
    cat "$dir.configure.log"; failed=$((failed + 1)); failed_names+=("$name (configure)"); return
  fi
  if ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
    grep -E "error|Error" "$dir.build.log" | head -40; failed=$((failed + 1))
    failed_names+=("$name (build)"); return
  fi
  echo "=== $name: test (built in $((SECONDS - t0)) s)" >&2
  local log="$dir.ctest.log" t1=$SECONDS
  (cd "$dir" && ctest --output-on-failure -j"$jobs" $ctest_args) >"$log" 2>&1
  local rc=$?
  grep -E "tests passed|No tests were found" "$log" | tail -1 >&2
  echo "    (tested in $((SECONDS - t1)) s; $SECONDS s since the start)" >&2
  local total fails
  total=$(grep -Eo "out of [0-9]+" "$log" | tail -1 | grep -Eo "[0-9]+")
  fails=$(grep -Eo "[0-9]+ tests failed" "$log" | tail -1 | grep -Eo "^[0-9]+")
  total=${total:-0}; fails=${fails:-0}
  if [ "$rc" -ne 0 ] && [ "$fails" -eq 0 ]; then fails=1; fi
  passed=$((passed + total - fails)); failed=$((failed + fails))
  if [ "$fails" -ne 0 ]; then
    failed_names+=("$name"); sed -n '/The following tests FAILED/,$p' "$log"
    grep -B2 -A25 -E "\*\*\*Failed|Exception|Timeout" "$log" | head -150
  fi
}

run gcc-release "" -- -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
  -DQLIMITS_SECCOMP_ROUND_TRIPS=10000000
if [ -x "$out/gcc-release/bench/qlimits-bench" ]; then
  echo "=== gcc-release: benchmark smoke run" >&2
  if "$out/gcc-release/bench/qlimits-bench" --benchmark_min_time=0.01 >"$out/bench-smoke.log" 2>&1
  then passed=$((passed + 1)); else failed=$((failed + 1)); failed_names+=("benchmark smoke")
    tail -20 "$out/bench-smoke.log"; fi
fi
if [ "${1:-}" != "quick" ]; then
  run clang-debug "" -- -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DQLIMITS_BUILD_BENCHMARKS=OFF -DQLIMITS_STRESS_ITEMS=2000000
  run asan-ubsan "" -- -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DQLIMITS_BUILD_BENCHMARKS=OFF -DQLIMITS_BUILD_EXAMPLES=OFF -DQLIMITS_STRESS_ITEMS=2000000 \
    "-DCMAKE_CXX_FLAGS=-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  run tsan "-L stress" -- -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DQLIMITS_TEST_STRESS_ONLY=ON -DQLIMITS_BUILD_LAB=OFF -DQLIMITS_BUILD_BENCHMARKS=OFF \
    -DQLIMITS_BUILD_EXAMPLES=OFF -DQLIMITS_STRESS_ITEMS=10000000 "-DCMAKE_CXX_FLAGS=-fsanitize=thread -g"
  run fuzz "-L fuzz" -- -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DQLIMITS_BUILD_FUZZERS=ON -DQLIMITS_TEST_FUZZ_ONLY=ON -DQLIMITS_BUILD_LAB=OFF -DQLIMITS_BUILD_BENCHMARKS=OFF \
    -DQLIMITS_BUILD_EXAMPLES=OFF -DQLIMITS_FUZZ_SECONDS="${QLIMITS_FUZZ_SECONDS:-30}"
fi

echo
if [ ${#failed_names[@]} -ne 0 ]; then echo "failed: ${failed_names[*]}"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
