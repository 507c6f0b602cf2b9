#!/usr/bin/env bash
# On the device machine, in one call that carries .gpu-carry (made here by bench/gpu_carry.py):
# unpack the packages its image lacks, then time bf16 PARA-GRPO steps (bench/gpu_grpo.py).
# The JSON goes to $OUT when the device tool sets it (it comes back), else to bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
archive=.gpu-carry/site.tar.xz
if [ ! -f "$archive" ]; then
    echo "bench/gpu_run.sh: no $archive; run 'python bench/gpu_carry.py' where the registry" \
         "is reachable, and carry .gpu-carry" >&2
    exit 2
fi
site="${TMPDIR:-/tmp}/paravt-gpu-site"
rm -rf "$site" && mkdir -p "$site"
tar -xJf "$archive" -C "$site"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
exec python3 bench/gpu_grpo.py --json "${OUT:-bench}/gpu_grpo.json" "$@"
