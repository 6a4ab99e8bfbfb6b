"""Data cards: one Markdown block per dataset (task, source, licence, rule, splits, counts, lengths, gaps).

No headings are emitted (cards are rendered inside notebook output, where headings would break the
book's section structure); the title is bold.
"""
from __future__ import annotations

import pandas as pd

import tfc.data as D
from tfc.data.manifest import load_manifest
from tfc.text.words import length_stats


def dataset_summary(names: list[str]) -> pd.DataFrame:
    """name, group, role, status, splits, rows, % consistent (label 1) and the reason/gap."""
    rows = []
    for n in names:
        s = D.info(n)
        rec = {"name": n, "group": s.group, "role": s.role, "status": s.status, "splits": ",".join(s.splits),
               "rows": None, "pct_consistent": None, "note": s.reason or ""}
        if s.status in ("text", "approximate"):
            df = D.load(n)
            rec["rows"] = len(df)
            lab = df["label"][df["label"] >= 0]
            rec["pct_consistent"] = round(100 * lab.mean(), 2) if len(lab) else None
        elif s.status == "label-only":
            lab = D.labels(n)["label"]
            rec["rows"], rec["pct_consistent"] = len(lab), round(100 * lab.mean(), 2)
        rows.append(rec)
    out = pd.DataFrame(rows)
    out["rows"] = out["rows"].astype("Int64")
    return out


def card_facts(name: str, sample: int | None = None, seed: int = 0) -> dict:
    s = D.info(name)
    facts = {"name": name, "group": s.group, "task": s.task, "status": s.status, "role": s.role,
             "source": s.source, "licence": s.licence, "rule": s.rule, "label_space": s.label_space,
             "gaps": s.gaps, "reason": s.reason, "crosscheck": s.crosscheck, "splits": {}}
    man = load_manifest().set_index("path")
    facts["files"] = [(p, man.loc[p, "repo"], man.loc[p, "commit"][:10], man.loc[p, "sha256"][:12])
                      for p in s.raw_files if p in man.index]
    if s.status in ("text", "approximate"):
        df = D.load(name, sample=sample, seed=seed)
        for split, g in df.groupby("split", sort=False):
            lab = g["label"][g["label"] >= 0]
            facts["splits"][split] = {
                "rows": len(g), "pct_consistent": round(100 * lab.mean(), 1) if len(lab) else None,
                "grounding_words": length_stats(g["grounding"]), "generated_words": length_stats(g["generated"])}
    elif s.status == "label-only":
        lab = D.labels(name)["label"]
        facts["splits"]["dev"] = {"rows": len(lab), "pct_consistent": round(100 * lab.mean(), 1)}
    return facts


def _len(d: dict) -> str:
    return f"{d['min_len']}–{d['max_len']}, median {d['median_len']:g}, mean {d['avg_len']:.1f}"


def render_card(name: str, sample: int | None = None, seed: int = 0) -> str:
    f = card_facts(name, sample=sample, seed=seed)
    lines = [f"**{f['name']}** ({f['group']}, {f['task']}; status *{f['status']}*, role *{f['role']}*)", ""]
    lines.append(f"- **Source:** {f['source']}")
    lines.append(f"- **Licence:** {f['licence']}")
    lines.append(f"- **Label rule:** {f['rule']} Label space: {f['label_space']}.")
    if f["splits"]:
        parts = []
        for split, d in f["splits"].items():
            pc = "n/a (no gold label)" if d["pct_consistent"] is None else f"{d['pct_consistent']}% consistent"
            p = f"`{split}`: {d['rows']} rows, {pc}"
            if "grounding_words" in d:
                p += (f"; grounding words {_len(d['grounding_words'])}; generated words {_len(d['generated_words'])}")
            parts.append(p)
        note = f" (sample of {sample} per set)" if sample else ""
        lines.append(f"- **Splits{note}:** " + " · ".join(parts))
    if f["files"]:
        lines.append("- **Raw files:** " + ", ".join(f"`{p}` ({repo}@{c}, sha256 {h}…)" for p, repo, c, h in f["files"]))
    if f["crosscheck"]:
        lines.append(f"- **Checked:** {f['crosscheck']}")
    if f["reason"]:
        lines.append(f"- **Why not loadable:** {f['reason']}")
    lines.append(f"- **Known gaps:** {f['gaps']}")
    return "\n".join(lines) + "\n"


def render_cards(names: list[str], sample: int | None = None, seed: int = 0) -> str:
    return "\n".join(render_card(n, sample=sample, seed=seed) for n in names)
