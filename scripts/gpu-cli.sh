#!/usr/bin/env bash
# gpu-cli.sh - every kfuse command on every example graph, on the GPU
# machine, after scripts/gpu-check.sh has built build-gpu: check, plan,
# compile --json, run --check --json and bench --json per graph, plus info,
# --version, cache stats, emit, plan --dot, run --trace and two text runs
# for docs/cli.md. Writes ONE file, $OUT/cli.txt (a summary table, then
# each command line and its output, long outputs cut), and prints the
# summary table, one line per graph.
#
#   scripts/gpu-cli.sh
#
# Environment: OUT (default ./out), BUILD (build-gpu), GRAPHS (graph names
# to run, default every examples/graphs/*.yaml), PAR (graphs checked at once
# in the first phase; 4), CHECK_LIMIT (run --check-limit; 5e8: graphs whose
# CPU reference would cost more are checked against the unfused plan on the
# GPU), RUN_TIMEOUT (150 s per run), BENCH_TIMEOUT (90 s per bench), ITERS
# (bench --iters; 10). Budget: about 3 minutes on a 16-core H200 host.
#
# Phase 1 runs check/plan/compile/run of PAR graphs at once (CPU references
# and NVRTC use many cores; `run` times are taken beside other runs), phase 2
# benches one graph at a time, alone on the GPU. Exit 0 when every command
# did what it should.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/out}
build=${BUILD:-$root/build-gpu}
PAR=${PAR:-4}
CHECK_LIMIT=${CHECK_LIMIT:-5e8}
RUN_TIMEOUT=${RUN_TIMEOUT:-150}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-90}
ITERS=${ITERS:-10}
K=$build/kfuse
mkdir -p "$OUT"
report=$OUT/cli.txt
t_start=$(date +%s)

if [ -f "$build/env.sh" ]; then
  . "$build/env.sh"
else
  libdirs=$(find "$build/prefix/usr/lib" -maxdepth 2 -type d 2>/dev/null | tr '\n' ':')
  export LD_LIBRARY_PATH="$libdirs$build/prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ ! -x "$K" ]; then
  echo "gpu-cli: no $K: run scripts/gpu-check.sh first" | tee "$report"
  exit 1
fi
# A fresh cache, so compile times are cold and `cache stats` counts this run.
export KFUSE_CACHE_DIR=$build/cli-cache
rm -rf "$KFUSE_CACHE_DIR"
export KFUSE_PROGRESS=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The graphs, heaviest first so the long runs start early.
all=$(for f in examples/graphs/*.yaml; do basename "$f" .yaml; done)
graphs=""
for g in adam_step mlp_silu cross_entropy attention $all; do
  case " $graphs " in *" $g "*) continue ;; esac
  echo "$all" | grep -qx "$g" || continue
  [ -z "${GRAPHS:-}" ] || case " $GRAPHS " in *" $g "*) ;; *) continue ;; esac
  graphs="$graphs $g"
done

# ---- one step: the command line, its output (cut), exit status, time ----------
# step NAME TIMEOUT MAXLINES CMD...: stdout in $work/NAME.out, the section
# for the report in $work/NAME.txt, the exit status in $work/NAME.rc.
cut_lines() { # keeps the first $1 lines and the last 5; lines past 1500 characters cut
  awk -v max="$1" '
    { if (length($0) > 1500) $0 = substr($0, 1, 1500) " ...(" (length($0) - 1500) " more characters)"
      line[NR] = $0 }
    END { if (NR <= max + 5) { for (i = 1; i <= NR; i++) print line[i]; exit }
          for (i = 1; i <= max; i++) print line[i]
          print "    ... (" (NR - max - 5) " lines left out) ..."
          for (i = NR - 4; i <= NR; i++) print line[i] }'
}

step() {
  local name=$1 limit=$2 maxl=$3
  shift 3
  local t0 t1 rc shown="$*"
  t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null
  rc=$?
  t1=$(date +%s.%N)
  echo "$rc" >"$work/$name.rc"
  {
    echo "\$ ${shown//$K/kfuse}" | sed "s#$root/##g; s#$work/##g"
    cat "$work/$name.out" "$work/$name.err" | sed "s#$root/##g" | cut_lines "$maxl"
    if [ "$rc" = 124 ]; then
      echo "[TIMED OUT after ${limit}s]"
    else
      awk -v rc="$rc" -v a="$t0" -v b="$t1" 'BEGIN { printf "[exit %s, %.1f s]\n", rc, b - a }'
    fi
    echo
  } >"$work/$name.txt"
  return "$rc"
}

# A JSON member of a one-line object: jget KEY FILE (first occurrence).
jget() { grep -o "\"$1\": *[^,}]*" "$2" 2>/dev/null | head -1 | sed 's/^[^:]*: *//; s/"//g'; }
# The largest max_rel_err of a run's outputs ("-" when none was checked).
maxrel() {
  grep -o '"max_rel_err": *[^,}]*' "$1" 2>/dev/null | sed 's/^[^:]*: *//' | grep -v null |
    awk 'BEGIN { m = -1 } { if ($1 + 0 > m) m = $1 + 0 } END { if (m < 0) print "-"; else printf "%.2g\n", m }'
}

# ---- phase 1: per graph, several at once ------------------------------------------
graph_phase1() {
  local g=$1 f=examples/graphs/$1.yaml
  step "$g.1check" 60 40 "$K" check "$f"
  step "$g.2plan" 60 60 "$K" plan "$f"
  step "$g.3compile" 240 20 "$K" compile "$f" --json
  # The unfused plan's kernels too, into the cache, so that bench (phase 2,
  # one at a time) and the unfused oracle do not compile them.
  step "$g.3compile_unfused" 240 20 env KFUSE_NO_FUSION=1 "$K" compile "$f" --json
  step "$g.4run" "$RUN_TIMEOUT" 20 "$K" run "$f" --check --json --check-limit "$CHECK_LIMIT" --iters 5
}

step x0version 10 5 "$K" --version
step x1info 30 40 "$K" info
for g in $graphs; do
  while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do wait -n; done
  graph_phase1 "$g" &
done
# The text forms docs/cli.md shows: the reference oracle at the default
# limit, the unfused oracle, a trace; beside the graphs above.
extras() {
  step x2run_ref "$RUN_TIMEOUT" 30 "$K" run examples/graphs/add_rmsnorm.yaml --check
  step x3run_unfused "$RUN_TIMEOUT" 30 "$K" run examples/graphs/cross_entropy.yaml --check
}
extras &
wait
step x4emit 60 40 "$K" emit examples/graphs/softmax.yaml
step x5dot 60 40 "$K" plan --dot examples/graphs/horizontal.yaml
step x6trace 120 30 "$K" run examples/graphs/softmax.yaml --trace "$work/trace.json" --iters 3
{
  echo "\$ head -c 1500 trace.json; grep -c '\"cat\":\"kernel\"' trace.json"
  head -c 1500 "$work/trace.json" 2>/dev/null
  echo
  echo "... $(wc -l <"$work/trace.json" 2>/dev/null || echo 0) lines," \
    "$(grep -c '"cat":"kernel"' "$work/trace.json" 2>/dev/null || echo 0) kernel spans"
  echo
} >>"$work/x6trace.txt"

# ---- phase 2: benches, one at a time -------------------------------------------------
for g in $graphs; do
  step "$g.5bench" "$BENCH_TIMEOUT" 20 "$K" bench "examples/graphs/$g.yaml" --json --iters "$ITERS" --warmup 2
done
step x7bench_text "$BENCH_TIMEOUT" 20 "$K" bench examples/graphs/softmax.yaml --iters "$ITERS"
step x8cache 30 10 "$K" cache stats

# ---- the summary -------------------------------------------------------------------------
fails=0
ok_rc() { [ "$(cat "$work/$1.rc" 2>/dev/null)" = 0 ]; }
summary() {
  printf '%-18s %-5s %-5s %-7s %-26s %9s %9s %7s %7s %6s\n' graph check plan compile \
    "run (oracle, max rel err)" fused_ms unfused_ms speedup GB/s %copy
  for g in $graphs; do
    local c p k r b run
    c=$(ok_rc "$g.1check" && echo ok || echo FAIL)
    p=$(ok_rc "$g.2plan" && echo ok || echo FAIL)
    k=$(ok_rc "$g.3compile" && echo "$(jget kernels "$work/$g.3compile.out")k" || echo FAIL)
    r=$(cat "$work/$g.4run.rc" 2>/dev/null)
    if [ "$r" = 0 ]; then
      run="ok $(jget oracle "$work/$g.4run.out") $(maxrel "$work/$g.4run.out")"
    elif [ "$r" = 124 ]; then
      run="TIMEOUT"
    else
      run="FAIL($r) $(jget oracle "$work/$g.4run.out") $(maxrel "$work/$g.4run.out")"
    fi
    if ok_rc "$g.5bench"; then
      b=$(printf '%9.4f %9.4f %7.2f %7.0f %6.1f' "$(jget fused_ms "$work/$g.5bench.out")" \
        "$(jget unfused_ms "$work/$g.5bench.out")" "$(jget speedup "$work/$g.5bench.out")" \
        "$(jget gbps "$work/$g.5bench.out")" "$(jget pct_of_copy "$work/$g.5bench.out")" 2>/dev/null)
    else
      b=$(printf '%9s' "FAIL($(cat "$work/$g.5bench.rc" 2>/dev/null))")
    fi
    printf '%-18s %-5s %-5s %-7s %-26s %s\n' "$g" "$c" "$p" "$k" "$run" "$b"
  done
}
for f in "$work"/*.rc; do [ "$(cat "$f")" = 0 ] || fails=$((fails + 1)); done
table=$(summary)
{
  echo "kfuse gpu-cli $(git rev-parse --short HEAD 2>/dev/null) on $(hostname), $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  echo "run --check-limit $CHECK_LIMIT, $PAR graphs at once in phase 1; bench --iters $ITERS alone"
  echo
  echo "$table"
  echo
  echo "$fails command(s) failed; total $(($(date +%s) - t_start)) s"
  echo
  echo "================================================================ commands"
  echo
  cat "$work"/x0version.txt "$work"/x1info.txt
  for g in $graphs; do
    echo "---------------------------------------------------------------- $g"
    cat "$work/$g".[1-5]*.txt 2>/dev/null
  done
  echo "---------------------------------------------------------------- extras"
  cat "$work"/x[2-8]*.txt 2>/dev/null
} >"$report"
echo "$table"
echo "$fails command(s) failed; total $(($(date +%s) - t_start)) s; details in $report"
[ "$fails" = 0 ]
