#!/usr/bin/env bash
# Mutation testing (issue 14): does the test suite notice a single plausible wrong change?
# Each mutant in scripts/mutants.txt is applied alone to a scratch copy of the source tree,
# built incrementally, and run against two tiers; then reverted. Not in CI (it takes a while:
# about a minute per mutant on 2 cores); run it before each release and after changing a test.
#   unit tier:   tests/qlimits_tests (unit, property, static), the replay, compile-fail and
#                differential tests
#   stress tier: tests/qlimits_stress and qlimits_stress_fences (two threads), if the unit tier
#                did not kill the mutant
# A mutant is "killed" when a tier fails, or when a static_assert (the headers' own, or
# tests/static/) stops the build; any other build failure makes the mutant invalid. A hang
# counts as killed only when something catches it: the stress watchdog
# (tests/stress/stress_support.hpp; its message is in the log) or the tier's own timeout
# (QLIMITS_MUTATE_TIMEOUT seconds per binary, default 90); the table says which.
# Usage: bash scripts/mutate.sh [ID-REGEX]   (only the mutants whose id matches)
# Environment: QLIMITS_MUTATE_DIR (scratch, default /tmp/qlimits-mutate),
#              QLIMITS_MUTATE_ITEMS (stress items, default 2000000), QLIMITS_MUTATE_TIMEOUT,
#              QLIMITS_HANDSHAKE_ROUNDS (ping-pong round trips, default 200000).
# Output: one line per mutant, then the kill rate; logs in $QLIMITS_MUTATE_DIR/logs/<id>.log.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
only=${1:-.}
scratch=${QLIMITS_MUTATE_DIR:-/tmp/qlimits-mutate}
items=${QLIMITS_MUTATE_ITEMS:-2000000}
limit=${QLIMITS_MUTATE_TIMEOUT:-90}
# The one-item ping-pong of tests/stress/handshake_stress.cpp, longer than in CI (fence mutants).
export QLIMITS_HANDSHAKE_ROUNDS=${QLIMITS_HANDSHAKE_ROUNDS:-200000}
src="$scratch/src" bld="$scratch/build" logs="$scratch/logs"
mkdir -p "$src" "$bld" "$logs"
# Each mutant is applied by a few lines of Python.
command -v python3 >/dev/null || { echo "mutate: python3 is needed (apt-get install python3)" >&2; exit 2; }

# The working tree (tracked and untracked files, not build directories) copied into the
# scratch source; only files that differ are copied, so the scratch build stays incremental
# and a mutant left behind by an interrupted run is reverted (a new timestamp: rebuilt).
(cd "$root" && git ls-files -co --exclude-standard) | while IFS= read -r f; do
  [ -f "$root/$f" ] || continue
  if ! cmp -s "$root/$f" "$src/$f"; then
    mkdir -p "$src/$(dirname "$f")" && cp "$root/$f" "$src/$f" || exit 2
  fi
done || { echo "mutate: copying the tree failed" >&2; exit 2; }
# Files gone from the tree go from the scratch copy too (the CMake files glob sources: a
# deleted file left there would still be built).
(cd "$src" && find . -type f -not -path './.git/*' | sed 's|^\./||') | while IFS= read -r f; do
  [ -e "$root/$f" ] || rm -f "$src/$f"
done

# The unit tier's targets are built for every mutant; the stress binaries only when the unit
# tier did not kill it (most mutants never need them).
unit_targets=(qlimits_tests qlimits-lab qlimits_sw_inline_look qlimits_sw_inline_look_slow)
stress_targets=(qlimits_stress qlimits_stress_fences)
build() {
  cmake --build "$bld" -j"$(nproc)" --target "${unit_targets[@]}" >"$1" 2>&1
}
build_stress() {
  cmake --build "$bld" -j"$(nproc)" --target "${stress_targets[@]}" >>"$1" 2>&1
}
# unit tier, then stress tier; prints how the mutant was killed, or "survived"
run_tiers() {
  local log=$1 rc
  timeout "$limit" "$bld/tests/qlimits_tests" --no-intro=true >>"$log" 2>&1; rc=$?
  if [ $rc -eq 124 ]; then echo "killed: unit (timeout ${limit}s)"; return; fi
  if [ $rc -ne 0 ]; then echo "killed: unit"; return; fi
  (cd "$bld" && timeout "$limit" ctest -R "^(replay|compile-fail|differential):" -j"$(nproc)" --output-on-failure) >>"$log" 2>&1; rc=$?
  if [ $rc -eq 124 ]; then echo "killed: unit (timeout ${limit}s)"; return; fi
  if [ $rc -ne 0 ]; then echo "killed: unit (replay/compile-fail/differential)"; return; fi
  if ! build_stress "$log"; then
    if grep -q "static assertion failed" "$log"; then echo "killed: build (static_assert)"
    else echo "INVALID (stress tier does not compile)"; fi
    return
  fi
  for t in qlimits_stress qlimits_stress_fences; do
    timeout "$limit" "$bld/tests/$t" --no-intro=true >>"$log" 2>&1; rc=$?
    if [ $rc -eq 124 ]; then echo "killed: stress (timeout ${limit}s, no watchdog)"; return; fi
    if [ $rc -ne 0 ]; then
      if grep -q "stress watchdog\|watchdog_fired" "$log"; then echo "killed: stress (watchdog)"
      else echo "killed: stress"; fi
      return
    fi
  done
  echo "survived"
}

echo "mutate: configuring and building the unmutated tree in $bld" >&2
# ccache, when installed (apt-get install ccache), makes each revert's rebuild a cache hit.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ "${launcher[@]}" \
  -DQLIMITS_BUILD_BENCHMARKS=OFF -DQLIMITS_BUILD_EXAMPLES=OFF -DQLIMITS_STRESS_ITEMS="$items" \
  >"$logs/configure.log" 2>&1 || { cat "$logs/configure.log"; exit 2; }
build "$logs/baseline.log" || { tail -30 "$logs/baseline.log"; exit 2; }
base=$(run_tiers "$logs/baseline.log")
if [ "$base" != "survived" ]; then
  echo "mutate: the unmutated tree fails ($base); see $logs/baseline.log" >&2; exit 2
fi

killed=0 total=0 invalid=0
printf '%-28s %-36s %s\n' "mutant" "result" "what it changes"
# mutants.txt: id <TAB> file <TAB> original text <TAB> replacement <TAB> description
while IFS=$'\t' read -r id file orig repl desc; do
  case "$id" in ''|'#'*) continue ;; esac
  [[ "$id" =~ $only ]] || continue
  log="$logs/$id.log"
  : >"$log"
  if [ ! -f "$src/$file" ]; then
    printf '%-28s %-36s %s\n' "$id" "INVALID (no such file: $file)" "$desc"
    invalid=$((invalid + 1))
    continue
  fi
  cp "$src/$file" "$scratch/saved"
  if ! python3 - "$src/$file" "$orig" "$repl" <<'PY' >>"$log" 2>&1
import sys
path, orig, repl = (a.replace("\\n", "\n") for a in sys.argv[1:])
text = open(path).read()
n = text.count(orig)
if n != 1:
    sys.exit(f"original text found {n} times (need exactly 1): {orig!r}")
open(path, "w").write(text.replace(orig, repl))
PY
  then
    result="INVALID (text not found once)"; invalid=$((invalid + 1))
  elif ! build "$log.build"; then
    # A static_assert (in a header or tests/static/) that fails is a test that caught it.
    if grep -q "static assertion failed" "$log.build"; then
      result="killed: build (static_assert)"; total=$((total + 1)); killed=$((killed + 1))
    else
      result="INVALID (does not compile)"; invalid=$((invalid + 1))
    fi
  else
    result=$(run_tiers "$log")
    case "$result" in
      killed*) total=$((total + 1)); killed=$((killed + 1)) ;;
      INVALID*) invalid=$((invalid + 1)) ;;
      *) total=$((total + 1)) ;;
    esac
  fi
  # Revert (a new timestamp: the next build recompiles what the mutant touched).
  cp "$scratch/saved" "$src/$file"
  printf '%-28s %-36s %s\n' "$id" "$result" "$desc"
done <"$root/scripts/mutants.txt"
# Leave the scratch build matching the unmutated tree.
build "$logs/final.log" >/dev/null 2>&1
echo
if [ "$total" -gt 0 ]; then
  echo "killed $killed of $total mutants ($((100 * killed / total)) %); $invalid invalid"
else
  echo "mutate: no mutant ran ($invalid invalid)" >&2
  exit 2
fi
