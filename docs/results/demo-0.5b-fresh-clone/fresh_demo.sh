#!/usr/bin/env bash
# Fresh clone, empty pip and model caches: time `make demo`.
set -u
rm -rf /tmp/fresh && mkdir -p /tmp/fresh/cache
git clone -q /work/main /tmp/fresh/atlas
cd /tmp/fresh/atlas
export PIP_CACHE_DIR=/tmp/fresh/cache/pip XDG_CACHE_HOME=/tmp/fresh/cache
unset ATLAS_CACHE_DIR OPENAI_API_KEY ANTHROPIC_API_KEY
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) commit $(git rev-parse --short HEAD)"
start=$(date +%s)
make demo > /tmp/fresh/demo.log 2>&1
rc=$?
end=$(date +%s)
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) rc=$rc seconds=$((end-start))"
