#!/usr/bin/env bash
# Headroom of ScienceWorld task types with the local 0.5B model (none / learnable / full), test split.
# Usage: bash docs/results/headroom-scienceworld/run.sh TASKS TYPE [TYPE ...]  (writes TYPE-TASKS.json, .episodes.jsonl, .log)
# Run again after a kill: each episode is in TYPE-TASKS.episodes.jsonl as it ends, and --resume keeps them.
set -u
out=$(dirname "$0")
tasks=$1; shift
for t in "$@"; do
  start=$(date +%s)
  atlas headroom --env scienceworld --task-type "$t" --tasks "$tasks" --json \
    --episodes-out "$out/$t-$tasks.episodes.jsonl" --resume > "$out/$t-$tasks.json" 2>> "$out/$t-$tasks.log"
  echo "$t tasks=$tasks exit=$? seconds=$(( $(date +%s) - start ))" >> "$out/timing.txt"
done
