"""The text ``tfc evaluate`` prints for a report of :func:`tfc.results.own_eval.evaluate_frame`."""
from __future__ import annotations

# (metric key, interval key, label, threshold key) in the order the text lists them
LINES = (
    ("roc_auc", "auc_ci", "ROC AUC", None),
    ("pr_auc_inconsistent", "pr_auc_inconsistent_ci", "PR-AUC (inconsistent)", None),
    ("bacc_fixed", "bacc_fixed_ci", "BAcc, fixed threshold", "threshold_fixed"),
    ("bacc_dev", "bacc_dev_ci", "BAcc, dev-tuned threshold", "threshold_dev"),
    ("bacc_in_sample", "bacc_in_sample_ci", "BAcc, in-sample threshold", "threshold_in_sample"),
    ("ece", "ece_ci", "ECE", None),
)
RULE_NAMES = (("prediction", "prediction"), ("threshold_fixed", "fixed threshold"),
              ("threshold_dev", "dev-tuned threshold"), ("threshold_in_sample", "in-sample threshold"),
              ("pr_auc_inconsistent", "PR-AUC"), ("ece", "ECE"), ("intervals", "intervals"), ("groups", "groups"))


def _ci(ci) -> str:
    return "" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _metric_lines(rows: list, lvl: str, bins: int, dev: bool) -> list[str]:
    """One line per (score column, metric): value, interval and the threshold it used."""
    w = max([len("score column")] + [len(str(r["column"])) for r in rows])
    lab = {"ece": f"ECE ({bins} bins)"}
    lines = [f"{'score column':<{w}}  {'metric':<26}  {'value':>7}  {lvl + ' CI':>16}  {'threshold':>10}"]
    for r in rows:
        first = True
        for key, ci_key, label, thr_key in LINES:
            if key == "bacc_dev" and not dev:
                continue
            name = str(r["column"]) if first else ""
            first = False
            label = lab.get(key, label)
            if r.get(key) is None:
                why = r.get("ece_skipped") if key == "ece" else "not computed"
                lines.append(f"{name:<{w}}  {label:<26}  skipped: {why}")
                continue
            thr = f"{r[thr_key]:10.4g}" if thr_key else ""
            lines.append(f"{name:<{w}}  {label:<26}  {r[key]:7.4f}  {_ci(r.get(ci_key)):>16}  {thr}".rstrip())
    return lines


def _group_lines(rep: dict, lvl: str) -> list[str]:
    keys = [(k, lab) for k, _, lab, _ in LINES if k != "bacc_dev" or rep["dev"] is not None]
    short = {"roc_auc": "AUC", "pr_auc_inconsistent": "PR-AUC", "bacc_fixed": "BAcc@t", "bacc_dev": "BAcc dev",
             "bacc_in_sample": "BAcc in-s.", "ece": "ECE"}
    wg = max([len("group")] + [len(str(r["group"])) for r in rep["groups"]] + [len("macro")])
    wc = max([len("score column")] + [len(str(r["column"])) for r in rep["groups"]])
    head = f"{'group':<{wg}}  {'score column':<{wc}}  {'rows':>6}  " + "  ".join(f"{short[k]:>10}" for k, _ in keys)
    n_groups = rep["macro"][0]["n_groups"] if rep["macro"] else 0
    lines = ["", f"per group of {rep['group_col']!r} (intervals in --json), then the macro-average (unweighted "
             f"mean over the {n_groups} groups)", head]

    def cell(v):
        return f"{v:10.4f}" if v is not None else f"{'-':>10}"

    for r in rep["groups"]:
        lines.append(f"{r['group']:<{wg}}  {str(r['column']):<{wc}}  {r['rows']:>6}  "
                     + "  ".join(cell(r[k]) for k, _ in keys))
    for r in rep["macro"]:
        lines.append(f"{'macro':<{wg}}  {str(r['column']):<{wc}}  {'':>6}  " + "  ".join(cell(r[k]) for k, _ in keys))
    lines.append(f"macro-average {lvl} intervals:")
    for r in rep["macro"]:
        lines.append(f"  {r['column']}: " + "; ".join(f"{short[k]} {_ci(r[ci])}" for k, ci, _, _ in LINES
                                                       if r.get(ci) is not None))
    return lines


def format_report(rep: dict, source: str | None = None) -> str:
    """The text ``tfc evaluate`` prints: header, one line per metric and score column, the rules used, the
    per-group table and its macro-average, the warnings and the paired AUC comparisons."""
    lvl = f"{100 * (1 - rep['alpha']):g}%"
    lines = [f"input      {source or '(frame)'}",
             f"rows       {rep['rows']} ({rep['consistent']} consistent, {rep['inconsistent']} inconsistent; "
             f"label column {rep['label_col']!r}, 1 = consistent)",
             f"bootstrap  {rep['n_boot']} resamples over rows ({rep['n_boot_valid']} with both classes), seed "
             f"{rep['seed']}, {lvl} percentile intervals"]
    if rep.get("dev"):
        d = rep["dev"]
        lines.append(f"dev        {d['source']}: {d['rows']} rows ({d['consistent']} consistent, {d['inconsistent']} "
                     "inconsistent), used only to tune the dev threshold")
    lines.append("")
    lines += _metric_lines(rep["scores"], lvl, rep["bins"], rep.get("dev") is not None)
    lines += ["", "rules"]
    for key, name in RULE_NAMES:
        if rep["rules"].get(key):
            lines.append(f"  {name:<20} {rep['rules'][key]}")
    if rep.get("groups"):
        lines += _group_lines(rep, lvl)
    if rep.get("plot"):
        lines += ["", f"reliability diagram written to {rep['plot']}"]
    if rep.get("warnings"):
        lines += ["", "warnings"] + [f"  {w}" for w in rep["warnings"]]
    if rep["comparisons"]:
        lines += ["", "paired bootstrap, AUC(a) - AUC(b)"]
        wa = max(len(str(c["a"])) for c in rep["comparisons"])
        wb = max(len(str(c["b"])) for c in rep["comparisons"])
        lines.append(f"{'a':<{wa}}  {'b':<{wb}}  {'diff':>7}  {lvl + ' CI':>18}  {'p':>6}")
        for c in rep["comparisons"]:
            ci = f"[{c['ci'][0]:+.3f}, {c['ci'][1]:+.3f}]"
            lines.append(f"{c['a']:<{wa}}  {c['b']:<{wb}}  {c['diff']:+7.4f}  {ci:>18}  {c['p_value']:6.3f}")
    return "\n".join(lines)
