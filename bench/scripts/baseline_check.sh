#!/usr/bin/env bash
# baseline_check.sh - do parlite-bench's SQLite figures agree with the shared/bench C programs?
#
# Runs each workload on the C program (system libsqlite3) and on `parlite-bench --engine
# sqlite` (rusqlite, bundled SQLite) with the same parameters, back to back, alternating which
# goes first, REPS times, and prints both lines (prefixed `C ` and `RS `). Before every pair a
# 200-fdatasync probe records the disk's regime (this VM's disk flips between ~0.1 and ~4 ms
# per flush). See BENCHMARKS.md, "Baseline check".
#
# usage: CB=/tmp/cbench B=target/release/parlite-bench D=/tmp/cbench/db bench/scripts/baseline_check.sh
#   CB: a copy of shared/bench, built with `make` (outside the repo)
#   env: REPS=3 S=3 (seconds per timed point) OUT=FILE
set -u
CB=${CB:?set CB to a built copy of shared/bench}
B=$(realpath "${B:-target/release/parlite-bench}")
D=${D:-$CB/db}
REPS=${REPS:-3}
S=${S:-3}
OUT=${OUT:-$CB/baseline-check-$(date +%Y%m%d-%H%M).txt}
mkdir -p "$D"
cd "$CB" || exit 2
sec() { echo "# $(date -u +%T) $* | disk: $(./fsync_lat "$D" 200 fdatasync overwrite | grep -o 'median_us=[0-9.]*')" | tee -a "$OUT"; }
c() { echo "C   $(timeout 600 "$@" 2>/dev/null)" | tee -a "$OUT"; }
r() { timeout 600 "$B" --engine sqlite --dir "$D" "$@" 2>/dev/null | grep 'engine=sqlite' | sed 's/^/RS  /' | tee -a "$OUT"; }
# pair FIRST_IS_C C_ARGS... -- RS_ARGS...
pair() {
  local cfirst=$1; shift
  local cargs=() rargs=()
  while [ "$1" != -- ]; do cargs+=("$1"); shift; done; shift
  rargs=("$@")
  if [ "$cfirst" = 1 ]; then c "${cargs[@]}"; r "${rargs[@]}"; else r "${rargs[@]}"; c "${cargs[@]}"; fi
}
sec "df: $(df -T "$D" | tail -1)"
for rep in $(seq "$REPS"); do
  odd=$((rep % 2))
  for y in full normal; do for n in 1 20 100; do
    sec "bdb_update n=$n sync=$y rep=$rep"
    pair $odd ./bdb_update -d "$D" -n $n -s "$S" -j wal -y $y -- --threads $n --seconds "$S" --sync $y bdb_update
  done; done
  for x in "" -x; do
    bx=(); [ -n "$x" ] && bx=(--batch)
    sec "mt_insert journal=wal $x rep=$rep"
    pair $odd ./mt_insert -d "$D" -j wal -y full $x -- --journal wal mt_insert "${bx[@]}"
  done
  for m in "delete full" "wal normal"; do set -- $m
    sec "kv_ops $m rep=$rep"
    pair $odd ./kv_ops -d "$D" -j $1 -y $2 -- --journal $1 --sync $2 kv_ops
  done
  for P in "" -P; do
    bp=(); [ -n "$P" ] && bp=(--plain-columns)
    first=-f
    for mix in 1:0 10:0 1:10 0:10; do u=${mix%:*}; k=${mix#*:}
      sec "hc_mixed $mix $P rep=$rep"
      [ $odd = 0 ] && r --threads 1,2 --seconds "$S" hc_mixed --mix $mix "${bp[@]}"
      c ./hc_mixed -d "$D" -n 1 -u $u -c $k -s "$S" $P $first; first=
      c ./hc_mixed -d "$D" -n 2 -u $u -c $k -s "$S" $P
      [ $odd = 1 ] && r --threads 1,2 --seconds "$S" hc_mixed --mix $mix "${bp[@]}"
    done
  done
done
sec done
