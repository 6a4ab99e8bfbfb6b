"""Evaluate the score columns of your own file: what ``tfc evaluate`` and ``tfc.evaluate_frame`` run.

Python::

    report = tfc.evaluate_frame(df, label_col="consistent", dev=dev_df, threshold=0.5, group_col="dataset",
                                bins=10, plot="reliability.png")

Each score column gets, with a percentile bootstrap interval over the rows (:func:`tfc.meta.bootstrap_metrics`,
the resamples of :func:`tfc.meta.bootstrap_aucs`), and the rule it used stated in the report's ``rules``:

* ``roc_auc`` (interval ``auc_ci``);
* ``pr_auc_inconsistent``: average precision, label 0 as the positive class, ``-score`` the detector;
* ``bacc_fixed`` at ``threshold_fixed``: the given ``threshold``, else 0.5 (meant for probability scores; a
  column with a score outside [0, 1] then gets a ``warnings`` entry saying 0.5 is not meaningful for it).
  A **given** threshold outside a column's score range is an error (:func:`tfc.meta.check_threshold`);
* ``bacc_dev`` at ``threshold_dev`` (only with ``dev``): the threshold tuned on the dev rows by
  :data:`tfc.meta.thresholds.DEV_RULE` (max BAcc, ties -> smallest), frozen, applied to these rows;
  ``bacc_dev_on_dev`` is its BAcc on the dev rows. The dev frame needs the label and score columns and both
  classes; the evaluated rows never enter the tuning;
* ``bacc_in_sample`` at ``threshold_in_sample`` (and ``accuracy_in_sample``): max sqrt(TPR * (1 - FPR)) tuned
  on these same rows (:func:`tfc.meta.tuned_accuracy`): optimistic, labelled in-sample everywhere;
* ``ece`` (``bins`` equal-width bins over [0, 1]) for probability scores; for other scores ``ece`` is None
  and ``ece_skipped`` says why.

Every prediction is "consistent when score >= threshold". With ``group_col``, ``groups`` holds the same
metrics per group (each group resampled on its own, group ``i`` with the ``i``-th seed drawn from ``seed``
as in :func:`tfc.meta.bootstrap_mean_aucs`) and ``macro``, their unweighted mean over groups with the
interval of that mean. ``plot`` writes a reliability diagram (PNG) of the probability columns.

The report's other keys: ``rows, consistent, inconsistent, label_col, n_boot, n_boot_valid, seed, alpha,
threshold_fixed, threshold_fixed_given, bins, dev`` (the dev rows' counts, or None), ``group_col, rules``
(each rule in words), ``warnings`` (a list of strings; the CLI also prints them on stderr), ``scores`` (one
dict per column, keys as above), ``groups, macro`` (None without ``group_col``), ``comparisons, plot``.
Intervals are ``[low, high]`` lists, None where the metric does not apply.
Bad input raises :class:`~tfc.results.own_files.OwnFileError` (a ``ValueError``) naming the problem; no
metric is ever NaN in the report (an undefined one is None with its reason).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from tfc.results.own_files import SCORE_COLUMNS_ATTR, OwnFileError, _row, check_columns

DEFAULT_THRESHOLD = 0.5
DEFAULT_BINS = 10
IN_SAMPLE_RULE = ("max sqrt(TPR * (1 - FPR)) tuned on the evaluated rows themselves (in-sample: optimistic); "
                  "ties -> the largest such threshold")
# metric key -> interval key (roc_auc keeps its historical name)
CI_KEYS = {"roc_auc": "auc_ci", "pr_auc_inconsistent": "pr_auc_inconsistent_ci", "bacc_fixed": "bacc_fixed_ci",
           "bacc_dev": "bacc_dev_ci", "bacc_in_sample": "bacc_in_sample_ci", "ece": "ece_ci"}


# -- columns ------------------------------------------------------------------------------------
def binary_labels(values, col: str, where: str | None = None, need: str = "ROC AUC") -> np.ndarray:
    """0/1 labels (1 = consistent) from ints, floats, booleans or the strings 0/1/true/false; one class only
    raises (``need`` names what needs both, ``where`` the file)."""
    s = pd.Series(values).reset_index(drop=True)
    at = f" in {where}" if where else ""
    miss = s.isna()
    if miss.any():
        i = int(np.flatnonzero(miss.to_numpy())[0])
        raise OwnFileError(f"{_row(i)}{at}: label column {col!r} has no value ({int(miss.sum())} empty label(s))")
    if pd.api.types.is_bool_dtype(s):
        y = s.astype(int).to_numpy()
    elif pd.api.types.is_numeric_dtype(s):
        y = s.to_numpy(dtype=float)
        bad = sorted(set(np.unique(y).tolist()) - {0, 1})
        if bad:
            vals = ", ".join(f"{v:g}" for v in np.unique(y)[:6])
            raise OwnFileError(f"label column {col!r}{at} is not binary: values {vals} (expected 0/1 with 1 = "
                               "consistent)")
    else:
        mapping = {"0": 0, "1": 1, "true": 1, "false": 0, "0.0": 0, "1.0": 1}
        norm = [str(v).strip().lower() if isinstance(v, (str, bool, int, np.integer)) else None for v in s]
        if any(k not in mapping for k in norm):
            seen = sorted({str(v) for v in s})[:6]
            raise OwnFileError(f"label column {col!r}{at} is not binary: values {', '.join(map(repr, seen))} "
                               "(expected 0/1 or true/false, 1 = consistent)")
        y = np.array([mapping[k] for k in norm])
    y = y.astype(np.int8)
    if len(np.unique(y)) < 2:
        raise OwnFileError(f"label column {col!r}{at} holds one class only (all {int(y[0])}); {need} needs both "
                           "consistent (1) and inconsistent (0) rows")
    return y


def numeric_scores(values, col: str, where: str | None = None) -> np.ndarray:
    """A score column as floats; a missing, non-numeric or infinite value raises, naming its row."""
    at = f" in {where}" if where else ""
    s = pd.Series(values).reset_index(drop=True)
    if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
        conv = pd.to_numeric(s, errors="coerce")
        bad = conv.isna() & s.notna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise OwnFileError(f"{_row(i)}{at}: score column {col!r} holds {s.iloc[i]!r}, not a number")
        s = conv
    x = s.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise OwnFileError(f"{_row(i)}{at}: score column {col!r} has no finite value ({x[i]}; {int(bad.sum())} "
                           "such row(s)); score every row or drop them first")
    return x


def default_score_columns(df: pd.DataFrame, label_col: str, exclude=()) -> list[str]:
    """The columns ``tfc score`` recorded (parquet), else every numeric column but the label, ``exclude``
    (e.g. the group column) and ``*_aux_*``."""
    skip = {label_col, *exclude}
    rec = df.attrs.get(SCORE_COLUMNS_ATTR)
    if isinstance(rec, list) and rec and all(c in df.columns for c in rec):
        return [c for c in rec if c not in skip]
    return [c for c in df.columns if c not in skip and "_aux_" not in str(c)
            and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]


def _score_columns(df: pd.DataFrame, label_col: str, score_cols, group_col, where: str) -> list[str]:
    if score_cols is None:
        score_cols = default_score_columns(df, label_col, exclude=[group_col] if group_col else [])
        if not score_cols:
            raise OwnFileError(f"no numeric score columns besides {label_col!r}; name them with --score-cols "
                               f"(columns: {', '.join(map(repr, map(str, df.columns)))})")
    elif isinstance(score_cols, str):
        score_cols = [c.strip() for c in score_cols.split(",") if c.strip()]
    score_cols = list(dict.fromkeys(score_cols))
    if not score_cols:
        raise OwnFileError("no score columns given")
    check_columns(df, score_cols, where)
    if label_col in score_cols:
        raise OwnFileError(f"{label_col!r} is the label column; it cannot also be a score column")
    if group_col is not None and group_col in score_cols:
        raise OwnFileError(f"{group_col!r} is the group column; it cannot also be a score column")
    return score_cols


def _groups(df: pd.DataFrame, group_col: str, y: np.ndarray, where: str) -> dict:
    """``{group name: row positions}`` in sorted order; a missing value or a one-class group raises."""
    check_columns(df, [group_col], where)
    g = df[group_col].reset_index(drop=True)
    miss = g.isna()
    if miss.any():
        raise OwnFileError(f"{_row(int(np.flatnonzero(miss.to_numpy())[0]))}: group column {group_col!r} has no "
                           f"value ({int(miss.sum())} such row(s))")
    names = g.astype(str).to_numpy()
    out = {}
    for name in sorted(set(names)):
        idx = np.flatnonzero(names == name)
        n_pos = int(y[idx].sum())
        if n_pos in (0, idx.size):
            raise OwnFileError(f"group {name!r} of group column {group_col!r} holds one class only ({idx.size} "
                               f"row(s), all {int(y[idx[0]])}); per-group metrics need both classes in every group")
        out[name] = idx
    return out


# -- thresholds -----------------------------------------------------------------------------------
def _fixed_thresholds(scores: dict, threshold) -> tuple[float, bool, list[str]]:
    """The fixed threshold, whether it was given, and the warnings for the default on non-probability scores."""
    from tfc.meta import check_threshold, is_probability

    if threshold is None:
        warn = []
        for c, s in scores.items():
            if not is_probability(s):
                warn.append(f"score column {c!r} has scores outside [0, 1] (min {s.min():g}, max {s.max():g}): the "
                            f"default threshold {DEFAULT_THRESHOLD:g} is meant for probability scores and is not "
                            "meaningful for it; pass --threshold (threshold=) or use --dev")
        return DEFAULT_THRESHOLD, False, warn
    for c, s in scores.items():
        try:
            t = check_threshold(s, threshold, name=f"score column {c!r}")
        except ValueError as exc:
            raise OwnFileError(f"--threshold (threshold=) {exc}") from None
    return t, True, []


def _dev_thresholds(dev: pd.DataFrame, label_col: str, score_cols: list, dev_where: str) -> tuple[dict, dict]:
    """Per score column the threshold tuned on the dev rows and its BAcc there; and a summary of the dev rows."""
    from tfc.meta import tune_bacc_threshold

    if not isinstance(dev, pd.DataFrame):
        raise TypeError(f"dev must be a pandas DataFrame, not {type(dev).__name__}")
    if len(dev) == 0:
        raise OwnFileError(f"{dev_where} has no rows")
    check_columns(dev, [label_col, *score_cols], dev_where)
    yd = binary_labels(dev[label_col], label_col, where=dev_where, need="tuning a threshold on the dev rows")
    tuned = {c: tune_bacc_threshold(yd, numeric_scores(dev[c], c, where=dev_where)) for c in score_cols}
    info = {"source": dev_where, "rows": int(yd.size), "consistent": int(yd.sum()),
            "inconsistent": int(yd.size - yd.sum())}
    return tuned, info


# -- metrics --------------------------------------------------------------------------------------
def _point(y: np.ndarray, s: np.ndarray, fixed: float, dev: tuple | None, bins: int) -> dict:
    """The point estimates of one score column on rows ``y, s`` (no interval yet)."""
    from tfc.meta import (balanced_accuracy, bacc_at_thresholds, expected_calibration_error, is_probability,
                          pr_auc_inconsistent, roc_auc, tuned_accuracy)

    ins = tuned_accuracy(y, s)
    out = {"roc_auc": roc_auc(y, s), "pr_auc_inconsistent": pr_auc_inconsistent(y, s),
           "threshold_fixed": float(fixed), "bacc_fixed": balanced_accuracy(y, s, fixed),
           "threshold_dev": None, "bacc_dev": None, "bacc_dev_on_dev": None,
           "threshold_in_sample": ins.threshold, "bacc_in_sample": ins.balanced_accuracy,
           "accuracy_in_sample": ins.accuracy, "ece": None, "ece_skipped": None}
    if dev is not None:
        out.update(threshold_dev=dev[0], bacc_dev_on_dev=dev[1], bacc_dev=float(bacc_at_thresholds(y, s, [dev[0]])[0]))
    if is_probability(s):
        out["ece"] = expected_calibration_error(y, s, bins)
    else:
        out["ece_skipped"] = (f"scores outside [0, 1] (min {s.min():g}, max {s.max():g}): not probabilities, so "
                              "the ECE is not defined")
    return out


def _column_rows(y, scores: dict, fixed, dev: dict | None, bins, n_boot, seed, alpha) -> tuple[list, dict, int]:
    """Per score column its point estimates and intervals; also the resampled values and their valid count."""
    from tfc.meta import bootstrap_metrics, percentile_ci

    cols = list(scores)
    points = [_point(y, scores[c], fixed, None if dev is None else dev[c], bins) for c in cols]
    boot, ok = bootstrap_metrics(y, [scores[c] for c in cols], n=n_boot, seed=seed, fixed=[fixed] * len(cols),
                                 dev=None if dev is None else [dev[c][0] for c in cols], bins=bins,
                                 calibrated=[p["ece"] is not None for p in points])
    rows = []
    for j, (c, p) in enumerate(zip(cols, points)):
        row = {"column": c, **p}
        for m, key in CI_KEYS.items():
            row[key] = None if p[m] is None else percentile_ci(boot[m][ok, j], alpha)
        rows.append(row)
    return rows, boot, int(ok.sum())


def _group_rows(y, scores: dict, groups: dict, fixed, dev, bins, n_boot, seed, alpha) -> tuple[list, list]:
    """Per group and column the metrics with their intervals; and per column the macro-average over groups."""
    from tfc.meta import percentile_ci

    seeds = np.random.default_rng(seed).integers(0, 2**32 - 1, size=len(groups))
    rows, boots = [], []
    for (name, idx), s in zip(groups.items(), seeds):
        sub = {c: v[idx] for c, v in scores.items()}
        got, boot, n_valid = _column_rows(y[idx], sub, fixed, dev, bins, n_boot, int(s), alpha)
        n_pos = int(y[idx].sum())
        rows += [{"group": name, "rows": int(idx.size), "consistent": n_pos, "inconsistent": int(idx.size - n_pos),
                  "n_boot_valid": n_valid, **r} for r in got]
        boots.append(boot)
    macro = []
    for j, c in enumerate(scores):
        mine = [r for r in rows if r["column"] == c]
        row = {"column": c, "n_groups": len(groups),
               "n_boot_valid": int(np.isfinite(np.mean([b["roc_auc"][:, j] for b in boots], axis=0)).sum())}
        for m, key in CI_KEYS.items():
            vals = [r[m] for r in mine]
            if any(v is None for v in vals):
                row[m], row[key] = None, None
                continue
            row[m] = float(np.mean(vals))
            row[key] = percentile_ci(np.mean([b[m][:, j] for b in boots], axis=0), alpha)
        macro.append(row)
    return rows, macro


def _comparisons(y, scores: dict, n_boot: int, seed: int, alpha: float) -> list:
    from tfc.meta import bootstrap_auc_diff

    comps, cols = [], list(scores)
    for i in range(len(cols)):
        for j in range(i + 1, len(cols)):
            r = bootstrap_auc_diff(y, scores[cols[i]], scores[cols[j]], n=n_boot, seed=seed, alpha=alpha)
            comps.append({"a": cols[i], "b": cols[j], "auc_a": r.auc_a, "auc_b": r.auc_b, "diff": r.diff,
                          "ci": [r.ci[0], r.ci[1]], "p_value": r.p_value, "n_valid": r.n_valid})
    return comps


def _rules(threshold: float, given: bool, dev: bool, bins: int, n_boot: int, seed: int, alpha: float,
           group_col) -> dict:
    from tfc.meta.calibration import ece_rule
    from tfc.meta.thresholds import DEV_RULE, PR_AUC_RULE, PREDICTION_RULE

    lvl = f"{100 * (1 - alpha):g}%"
    return {
        "prediction": PREDICTION_RULE,
        "threshold_fixed": (f"{threshold:g}, given" if given else
                            f"{threshold:g}, the default for probability scores (scores in [0, 1])"),
        "threshold_dev": DEV_RULE if dev else None,
        "threshold_in_sample": IN_SAMPLE_RULE,
        "pr_auc_inconsistent": PR_AUC_RULE,
        "ece": ece_rule(bins) + "; only for scores in [0, 1]",
        "intervals": (f"{lvl} percentile bootstrap over the evaluated rows ({n_boot} resamples, seed {seed}; "
                      "resamples holding one class dropped); "
                      + ("fixed and dev-tuned thresholds held fixed (dev rows not resampled)" if dev else
                         "the fixed threshold held fixed")
                      + ", the in-sample threshold re-tuned on every resample"),
        "groups": None if group_col is None else (
            f"per value of {group_col!r}: that group's rows (in-sample threshold tuned per group; fixed and dev "
            "thresholds shared); macro = unweighted mean over groups, its interval from within-group resamples "
            "(group i with the i-th seed drawn from seed)"),
    }


def _check_options(n_boot, alpha, bins, plot) -> int:
    from tfc.meta import DEFAULT_N

    n_boot = DEFAULT_N if n_boot is None else int(n_boot)
    if n_boot < 1:
        raise OwnFileError(f"n_boot must be >= 1, got {n_boot}")
    if not 0 < alpha < 1:
        raise OwnFileError(f"alpha must be in (0, 1), got {alpha}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise OwnFileError(f"bins must be a positive int, got {bins!r}")
    if plot is not None:
        from pathlib import Path

        p = Path(plot)
        if p.suffix.lower() != ".png":
            raise OwnFileError(f"{p}: the reliability diagram is written as PNG; give a .png path")
        if not p.parent.is_dir():
            raise OwnFileError(f"{p}: directory {p.parent} does not exist")
    return n_boot


def _plot(y, scores: dict, rows: list, plot, bins: int) -> str:
    from tfc.meta import plot_reliability

    prob = {r["column"]: scores[r["column"]] for r in rows if r["ece"] is not None}
    if not prob:
        raise OwnFileError(f"{plot}: no score column lies in [0, 1], so there is no reliability diagram to draw")
    return str(plot_reliability(y, prob, plot, bins))


def evaluate_frame(df: pd.DataFrame, label_col: str, score_cols=None, n_boot: int | None = None, seed: int = 0,
                   alpha: float = 0.05, where: str = "the input", *, threshold: float | None = None,
                   dev: pd.DataFrame | None = None, dev_where: str = "the dev file", group_col: str | None = None,
                   bins: int = DEFAULT_BINS, plot=None) -> dict:
    """The report of the module docstring (a JSON-ready dict), and a paired bootstrap comparison of the ROC
    AUCs of every two score columns (:func:`tfc.meta.bootstrap_auc_diff`). ``where`` / ``dev_where`` name the
    input and the dev frame in error messages; ``plot`` is a .png path (an existing file is replaced)."""
    n_boot = _check_options(n_boot, alpha, bins, plot)
    if len(df) == 0:
        raise OwnFileError("the input has no rows")
    check_columns(df, [label_col], where)
    if group_col is not None and group_col == label_col:
        raise OwnFileError(f"{label_col!r} is the label column; it cannot also be the group column")
    cols = _score_columns(df, label_col, score_cols, group_col, where)
    y = binary_labels(df[label_col], label_col)
    scores = {c: numeric_scores(df[c], c) for c in cols}
    groups = None if group_col is None else _groups(df, group_col, y, where)
    fixed, given, warnings = _fixed_thresholds(scores, threshold)
    dev_thr, dev_info = (None, None) if dev is None else _dev_thresholds(dev, label_col, cols, dev_where)
    rows, _, n_valid = _column_rows(y, scores, fixed, dev_thr, bins, n_boot, seed, alpha)
    group_rows, macro = (None, None) if groups is None else _group_rows(y, scores, groups, fixed, dev_thr, bins,
                                                                        n_boot, seed, alpha)
    plotted = None if plot is None else _plot(y, scores, rows, plot, bins)
    return {"rows": int(len(y)), "consistent": int(y.sum()), "inconsistent": int(len(y) - y.sum()),
            "label_col": label_col, "n_boot": n_boot, "n_boot_valid": n_valid, "seed": seed, "alpha": alpha,
            "threshold_fixed": fixed, "threshold_fixed_given": given, "bins": int(bins), "dev": dev_info,
            "group_col": group_col, "rules": _rules(fixed, given, dev is not None, bins, n_boot, seed, alpha,
                                                    group_col),
            "warnings": warnings, "scores": rows, "groups": group_rows, "macro": macro,
            "comparisons": _comparisons(y, scores, n_boot, seed, alpha), "plot": plotted}
