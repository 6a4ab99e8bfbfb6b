#!/usr/bin/env bash
# Build the peer venv (summac 0.0.4, bert-score) used by benchmarks/bench_peers.py (a no-op when it is
# already built from the current requirements.txt). Measured: about 2 minutes with a warm pip cache.
# Separate from the project's venv on purpose: summac pins an old huggingface-hub/transformers.
#   benchmarks/peers/setup.sh            # -> $TFC_PEER_VENV (default ~/.cache/tfc/peer-venv)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${TFC_PEER_VENV:-$HOME/.cache/tfc/peer-venv}"
py="${PYTHON:-python3}"
stamp="$venv/.tfc-peer-requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$venv"; exit 0          # already built from these requirements
fi
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
# torch first, alone and pinned, so that no later resolution can reach for a CUDA build
"$venv/bin/python" -m pip install -q torch==2.13.0
"$venv/bin/python" -m pip install -q -r "$here/requirements.txt"
# AlignScore's inference loop (the PyPI fork of yuh-zha/AlignScore), without its dependencies: only its
# inference_per_example code is run (benchmarks/peers/reference_values.py), with stand-ins for its
# PyTorch-Lightning model class and spaCy; its pins (protobuf<=3.20.3) conflict with summac's environment
"$venv/bin/python" -m pip install -q --no-deps "alignscore-SpeedOfMagic==$(sed -n 's/^# alignscore-SpeedOfMagic==//p' "$here/requirements.txt")"
"$venv/bin/python" - <<'PY'
import summac, bert_score, torch, transformers
print("peer venv ok: torch", torch.__version__, "transformers", transformers.__version__,
      "bert-score", bert_score.__version__)
PY
echo "$want" > "$stamp"
echo "$venv"
