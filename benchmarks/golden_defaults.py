"""The golden scores of every registered scorer's defaults: tests/golden/defaults.json.

    python benchmarks/golden_defaults.py           # compare with the committed file
    python benchmarks/golden_defaults.py --write   # write it (after a change of default or of shipped weights)

Each scorer, with its defaults and the shipped weights installed into an empty artifacts directory, scores three
fixed pairs written for this file; tests/test_defaults.py checks the scores at atol 1e-5 and the signatures.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

PAIRS = [
    ["The train to Lyon leaves at 9:40 from platform 3.", "The train to Lyon leaves from platform 3."],
    ["Maria planted tomatoes and basil in her garden this spring.", "Maria planted potatoes this spring."],
    ["Hi! I love hiking in the Alps, especially in summer when the meadows bloom.", "I enjoy hiking in the mountains."],
]
OUT = Path(__file__).resolve().parents[1] / "tests" / "golden" / "defaults.json"


def compute() -> dict:
    from tfc import scorers as S

    out = {"pairs": PAIRS, "scorers": {}}
    for name in S.names():
        s = S.get(name)
        got = s.score([p[0] for p in PAIRS], [p[1] for p in PAIRS], progress=False)
        out["scorers"][name] = {"signature": s.signature, "scores": [round(float(v), 7) for v in got]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TFC_ARTIFACTS_DIR"] = tmp          # a fresh clone: only the shipped weights
        got = compute()
    if args.write:
        OUT.write_text(json.dumps(got, indent=1) + "\n")
        print(f"wrote {OUT}")
        return 0
    want = json.loads(OUT.read_text())
    bad = [n for n, v in got["scorers"].items() if want["scorers"].get(n) != v]
    print(json.dumps(got["scorers"], indent=1))
    print("identical" if not bad else f"differs: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
