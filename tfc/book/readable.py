"""How the book shows a table: counts as integers, one number of decimals per table, headers in words.

Every ``pandas.DataFrame`` a chapter shows or glues is rendered by :func:`to_html`. The book runner
(``tfc book run``) starts each notebook kernel with this module loaded as an IPython extension, so the
chapters need no per-notebook formatting code; in a notebook of your own, ``%load_ext tfc.book.readable``
gives the same tables (``%unload_ext tfc.book.readable`` goes back to pandas' default).

The rules, applied to a copy (the frame itself is never changed):

* **integers**: a number column whose values are all whole (``836.0``) is shown as integers (``836``);
  whole numbers of 10,000 and more get thousands separators;
* **decimals**: every other number in the table is shown with the same number of decimals, the fewest
  that show each value to at most three decimals (a table rounded to one decimal stays at one);
  p-value columns are the exception (three decimals, ``< 0.001`` below that);
* **headers**: snake_case column and index names become words (``pct_consistent`` -> ``% consistent``,
  ``median_abs_delta`` -> ``median |Δ|``, ``delta`` -> ``Δ``); names that are identifiers with
  dots, slashes or colons (scorer signatures, imported sources) are kept as they are, and so are the
  *values* in the rows (dataset ids such as ``qags_cnndm`` stay usable in code);
* **missing values** show as ``—``; long identifiers get soft line breaks after ``. / : _ -`` so a
  signature column can wrap instead of widening the table;
* the table sits in a ``div.tfc-table-wrap`` that scrolls sideways when it is wider than the page's
  content column (``book/_static/tfc.css``).
"""
from __future__ import annotations

import html
import math
import numbers
import re

import pandas as pd

MISSING = "—"
MAX_DECIMALS = 3
# whole header names -> words (checked before the token rules below)
WORDS: dict[str, str] = {
    "n": "n",
    "n_examples": "examples",
    "pct_consistent": "% consistent",
    "delta": "Δ",
    "abs_delta": "|Δ|",
    "median_abs_delta": "median |Δ|",
    "max_abs_delta": "max |Δ|",
    "mean_abs_delta": "mean |Δ|",
    "standin_median_abs_delta": "stand-in median |Δ|",
    "n_published": "published cells",
    "n_compared": "cells compared",
    "n_within_tol": "within tolerance",
    "n_standin": "stand-in cells",
    "n_cells": "cells",
    "n_scored": "scored",
    "p_value": "p-value",
    "published_as": "published as",
    "min_len": "min length",
    "max_len": "max length",
    "median_len": "median length",
    "avg_len": "mean length",
    "avg_wo_vitc_fever": "mean of 9 sets",
    "avg_zs_wo_paws_vitc_fever": "AVG-ZS",
    "avg_all11": "mean of 11 sets",
    "var_wo_vitc_fever": "variance (9 sets)",
    "ours_column": "our column",
    "overlap_f1_rk": "overlap F1",
    "q2_metric": "Q²",
}
# single tokens of a snake_case name -> words
TOKENS: dict[str, str] = {
    "pct": "%", "avg": "mean", "auc": "AUC", "roc": "ROC", "f1": "F1", "nli": "NLI", "qa": "QA",
    "qg": "QG", "em": "EM", "rouge": "ROUGE", "bleu": "BLEU", "bleu4": "BLEU-4", "rougel": "ROUGE-L", "zs": "ZS",
    "len": "length", "num": "#", "std": "SD", "ci": "CI", "tol": "tolerance", "standin": "stand-in",
    "wo": "w/o", "vitc": "VitC", "fever": "FEVER", "paws": "PAWS", "mnbm": "MNBM", "frank": "FRANK",
    "summeval": "SummEval", "begin": "BEGIN", "dialfact": "DialFact", "cnndm": "CNN/DM", "xsum": "XSum",
    "qags": "QAGS", "q2": "Q²", "id": "id", "ids": "ids", "pos": "pos", "neg": "neg", "diff": "diff",
    "s": "s", "min": "min", "max": "max", "t5": "T5", "anli": "ANLI", "bertscore": "BERTScore",
    "summac": "SummaC", "conv": "Conv", "unieval": "UniEval", "alignscore": "AlignScore", "wecheck": "WeCheck",
    "p": "p", "k": "k",
}
# a token joined to the one before it with a hyphen: rouge_l -> ROUGE-L, t5_11b -> T5-11B
_JOINED: dict[str, dict[str, str]] = {"rouge": {}, "t5": {}, "bleu": {},
                                      "summac": {"zs": "ZS", "conv": "Conv"}}
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
_P_COLUMNS = {"p", "p_value", "p-value", "p value", "pvalue", "p_holm", "p (holm)"}
_BREAK = re.compile(r"([./:_\-])")


def header(name) -> str:
    """A column or index name in words: ``pct_consistent`` -> ``% consistent``; identifiers kept."""
    if name is None:
        return ""
    if not isinstance(name, str):
        return str(name)
    if name in WORDS:
        return WORDS[name]
    if " " in name and re.fullmatch(r"[a-z0-9_ ]+", name) and "_" in name:
        return " ".join(header(w) for w in name.split(" "))
    if re.fullmatch(r"[a-z][a-z0-9]*", name):
        return TOKENS.get(name, name)
    if not _SNAKE.match(name):
        return name
    toks = name.split("_")
    words = []
    for i, t in enumerate(toks):
        if t == "n" and i == 0:
            words.append("#")
        elif t == "abs" and i + 1 < len(toks) and toks[i + 1] == "delta":
            words.append("|Δ|")
        elif t == "delta" and i > 0 and toks[i - 1] == "abs":
            continue
        elif t == "delta":
            words.append("Δ")
        elif i > 0 and toks[i - 1] in _JOINED and words:
            words[-1] = f"{words[-1]}-{_JOINED[toks[i - 1]].get(t, t.upper())}"
        else:
            words.append(TOKENS.get(t, t))
    return " ".join(words)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _finite(v) -> bool:
    return _is_number(v) and math.isfinite(float(v))


def _needed_decimals(v: float) -> int:
    """The fewest decimals (0..MAX_DECIMALS) that show ``v`` as it reads at MAX_DECIMALS decimals."""
    target = round(float(v), MAX_DECIMALS)
    for d in range(MAX_DECIMALS + 1):
        if abs(round(float(v), d) - target) < 10 ** -(MAX_DECIMALS + 2):
            return d
    return MAX_DECIMALS


def _is_p_column(name) -> bool:
    last = name[-1] if isinstance(name, tuple) else name
    return isinstance(last, str) and last.strip().lower() in _P_COLUMNS


def _column_groups(cols: pd.Index) -> list:
    """A group key per column: columns of one quantity (``<name>`` over ``paper | ours | Δ``) share a key,
    so that they are shown alike; other columns are their own group."""
    g = grouped_columns(cols)
    if not isinstance(g, pd.MultiIndex):
        return list(range(len(cols)))
    first = [t[0] for t in g]
    last = [t[-1] for t in g]
    stat_first = set(first) <= set(_STATS)
    keys = []
    for i, (a, b) in enumerate(zip(first, last)):
        k = b if stat_first else a
        keys.append(("g", k) if k != "" and (b in _STATS or a in _STATS) else i)
    return keys


def _whole_columns(frame: pd.DataFrame) -> set:
    """Positions of the columns shown as integers: every number in them is whole (``836.0``), and so is
    every number of the other columns of the same quantity (a Δ column of zeros beside percentages
    keeps the percentages' decimals)."""
    whole, has_num = {}, {}
    for i in range(frame.shape[1]):
        nums = [v for v in frame.iloc[:, i] if _finite(v)]
        has_num[i] = bool(nums)
        whole[i] = bool(nums) and all(float(v).is_integer() for v in nums) and not _is_p_column(frame.columns[i])
    keys = _column_groups(frame.columns)
    ok_group = {}
    for i, k in enumerate(keys):
        if has_num[i]:
            ok_group[k] = ok_group.get(k, True) and whole[i]
    return {i for i in range(frame.shape[1]) if whole[i] and ok_group.get(keys[i], True)}


def table_decimals(frame: pd.DataFrame) -> int:
    """One number of decimals for every non-whole number of ``frame`` (p-value columns excluded)."""
    whole = _whole_columns(frame)
    d = 0
    for i in range(frame.shape[1]):
        if i in whole or _is_p_column(frame.columns[i]):
            continue
        for v in frame.iloc[:, i]:
            if _finite(v) and not float(v).is_integer():
                d = max(d, _needed_decimals(v))
                if d == MAX_DECIMALS:
                    return d
    return max(d, 1) if any(True for i in range(frame.shape[1]) if i not in whole) else d


def _fmt_int(v, separators: bool = True) -> str:
    iv = int(round(float(v)))
    t = f"{abs(iv):,}" if separators and abs(iv) >= 1000 else str(abs(iv))
    return f"−{t}" if iv < 0 else t


def _id_like(name) -> bool:
    last = name[-1] if isinstance(name, tuple) else name
    last = str(last).lower().strip()
    return last in {"id", "ids", "seed", "year", "commit"} or last.endswith(("id", "_id", " id", "ids", "seed"))


def _separator_columns(frame: pd.DataFrame) -> set:
    """Columns whose whole numbers get thousands separators: those holding a number of 10,000 or more
    (then every number of 1,000 or more in them does), with the other columns of the same quantity,
    except id-like columns."""
    big = set()
    for i in range(frame.shape[1]):
        if not _id_like(frame.columns[i]) and any(_finite(v) and abs(float(v)) >= 10_000 for v in frame.iloc[:, i]):
            big.add(i)
    keys = _column_groups(frame.columns)
    groups = {keys[i] for i in big}
    return {i for i in range(frame.shape[1]) if not _id_like(frame.columns[i]) and (i in big or keys[i] in groups)}


def cell_text(v, decimals: int, whole: bool = False, p_value: bool = False, separators: bool = False) -> str:
    """One cell as text under the table's rules (see the module docstring)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT:
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if _is_number(v):
        f = float(v)
        if not math.isfinite(f):
            return MISSING if math.isnan(f) else ("∞" if f > 0 else "−∞")
        if p_value:
            return "< 0.001" if 0 <= f < 0.001 else f"{f:.3f}"
        if whole or f.is_integer() and isinstance(v, numbers.Integral):
            return _fmt_int(f, separators)
        if f.is_integer() and decimals == 0:
            return _fmt_int(f, separators)
        t = f"{f:.{decimals}f}"
        if t.startswith("-"):      # a minus sign, and none on a value that rounds to zero ("-0.0")
            t = t[1:] if float(t) == 0 else "−" + t[1:]
        return t
    return str(v)


def formatted(frame: pd.DataFrame, decimals: int | None = None) -> pd.DataFrame:
    """A copy of ``frame`` with every cell as text and headers in words (see the module docstring)."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"formatted() needs a DataFrame, got {type(frame).__name__}")
    d = table_decimals(frame) if decimals is None else int(decimals)
    whole = _whole_columns(frame)
    seps = _separator_columns(frame)
    cols = {}
    for i in range(frame.shape[1]):
        p = _is_p_column(frame.columns[i])
        col = frame.iloc[:, i]
        # a column of mixed values (a transposed record: each row its own quantity) is judged cell by cell
        mixed = col.dtype == object and any(isinstance(v, str) for v in col)
        cols[i] = [cell_text(v, d, whole=i in whole or (mixed and _finite(v) and float(v).is_integer()),
                             p_value=p, separators=i in seps) for v in col]
    out = pd.DataFrame({i: c for i, c in cols.items()}, index=frame.index)
    out.columns = _words_index(grouped_columns(frame.columns))
    out.index = out.index.set_names([header(n) if n is not None else None for n in frame.index.names])
    return out


_STATS = ("paper", "ours", "delta", "signature")


def grouped_columns(cols: pd.Index) -> pd.Index:
    """Flat columns named ``"<name> paper"``, ``"<name> ours"``, ``"<name> delta"`` (as built by the
    chapters' ``wide`` helpers) become two header levels, ``<name>`` over ``paper | ours | Δ``, so that
    the name is printed once; other columns keep an empty upper level. Anything else is unchanged."""
    if isinstance(cols, pd.MultiIndex) or not all(isinstance(c, str) for c in cols):
        return cols
    split = [c.rsplit(" ", 1) if " " in c and c.rsplit(" ", 1)[1] in _STATS else ["", c] for c in cols]
    groups = [g for g, _ in split if g]
    if len(groups) < 2 or len(set(groups)) == len(groups):
        return cols
    return pd.MultiIndex.from_tuples([tuple(x) for x in split], names=[None, cols.name])


def _words_index(idx: pd.Index) -> pd.Index:
    if isinstance(idx, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(header(x) for x in t) for t in idx],
                                         names=[header(n) if n is not None else None for n in idx.names])
    return pd.Index([header(x) for x in idx], name=header(idx.name) if idx.name is not None else None)


def _soft_breaks(text: str, html_ok: bool = False) -> str:
    s = text if html_ok else html.escape(text)
    if html_ok:
        return s
    # long unbroken identifiers (signatures, paths) may wrap after . / : _ -
    return " ".join(_BREAK.sub(r"\1<wbr>", w) if len(w) > 24 else w for w in s.split(" "))


def _is_numeric_text(s: str) -> bool:
    return bool(re.fullmatch(r"[−\-]?[\d,]+(\.\d+)?|< 0\.001|—|∞|−∞", s))


def _show_index(frame: pd.DataFrame) -> bool:
    idx = frame.index
    if isinstance(idx, pd.MultiIndex):
        return True
    if isinstance(idx, pd.RangeIndex) and idx.name is None:
        return False
    return not (idx.name is None and idx.dtype.kind in "iu" and list(idx) == list(range(len(idx))))


def _truncate(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Rows beyond pandas' ``display.max_rows`` are left out (head and tail kept); returns the number left out."""
    max_rows = pd.get_option("display.max_rows")
    if max_rows is None or len(frame) <= max_rows:
        return frame, 0
    keep = max(2, (pd.get_option("display.min_rows") or 10))
    head = keep // 2
    return pd.concat([frame.iloc[:head], frame.iloc[-head:]]), len(frame) - 2 * head


def to_html(frame: pd.DataFrame, decimals: int | None = None, html_columns=(), caption: str | None = None,
            classes: str = "", max_colwidth: int | None = -1) -> str:
    """The table as HTML, in a sideways-scrolling wrapper. ``html_columns``: columns whose cells are
    already HTML (links) and are not escaped; ``decimals`` overrides the table's computed decimals;
    ``max_colwidth``: text longer than this is cut with "…" (-1: pandas' ``display.max_colwidth``,
    None: never)."""
    shown, left_out = _truncate(frame)
    head_rows = (len(shown) // 2) if left_out else 0
    d = table_decimals(frame) if decimals is None else int(decimals)
    text = formatted(shown, d)
    raw = {i for i, c in enumerate(frame.columns) if c in set(html_columns)}
    if isinstance(text.columns, pd.MultiIndex) and text.columns.nlevels == 2 and text.shape[1] > 0 \
            and all(a == "" for a, _ in text.columns):
        text.columns = pd.Index([b for _, b in text.columns])
    max_w = pd.get_option("display.max_colwidth") if max_colwidth == -1 else max_colwidth
    show_index = _show_index(frame)
    nlev_idx = text.index.nlevels if show_index else 0
    cols = text.columns
    nlev = cols.nlevels
    cls_attr = " ".join(["dataframe", "tfc-table", *classes.split()])
    out = [f'<div class="tfc-table-wrap"><table class="{cls_attr}">']
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead>")
    numeric_col = []
    for i in range(text.shape[1]):
        vals = [v for v in text.iloc[:, i] if v != MISSING]
        numeric_col.append(bool(vals) and all(_is_numeric_text(v) for v in vals))
    for lev in range(nlev):
        out.append("<tr>")
        if nlev_idx:
            if lev == nlev - 1:
                names = list(text.index.names)
                out += [f'<th class="tfc-index-name">{html.escape(n or "")}</th>' for n in names]
            else:
                out.append(f'<th colspan="{nlev_idx}"></th>' if nlev_idx > 1 else "<th></th>")
        labels = [c[lev] if nlev > 1 else c for c in cols]
        i = 0
        while i < len(labels):
            j = i
            # group equal consecutive labels of the upper levels (same prefix) into one spanning cell
            while (j + 1 < len(labels) and lev < nlev - 1 and
                   all((cols[j + 1][k] == cols[i][k]) for k in range(lev + 1))):
                j += 1
            span = j - i + 1
            cls = "tfc-num" if lev == nlev - 1 and numeric_col[i] else ""
            attrs = (f' colspan="{span}"' if span > 1 else "") + (f' class="{cls}"' if cls else "")
            out.append(f"<th{attrs}>{_soft_breaks(str(labels[i]))}</th>")
            i = j + 1
        out.append("</tr>")
    out.append("</thead><tbody>")
    for r in range(len(text)):
        out.append("<tr>")
        if nlev_idx:
            key = text.index[r]
            key = key if isinstance(key, tuple) else (key,)
            out += [f"<th>{_soft_breaks(cell_text(k, d))}</th>" for k in key]
        for i in range(text.shape[1]):
            v = text.iat[r, i]
            if i in raw:
                cell = str(shown.iat[r, i])
            else:
                if max_w and len(v) > max_w:
                    v = v[: max_w - 1] + "…"
                cell = _soft_breaks(v)
            cls = ' class="tfc-num"' if numeric_col[i] else (' class="tfc-long"' if len(v) > 24 else "")
            out.append(f"<td{cls}>{cell}</td>")
        out.append("</tr>")
        if left_out and r == head_rows - 1:
            out.append(f'<tr class="tfc-left-out"><td colspan="{nlev_idx + text.shape[1]}">… '
                       f"{left_out} more rows …</td></tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _repr(frame: pd.DataFrame) -> str:
    return to_html(frame)


def install(shell=None) -> bool:
    """Render DataFrames with :func:`to_html` in an IPython shell (the current one by default).
    Returns False outside IPython."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, _repr)
    return True


def uninstall(shell=None) -> None:
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].pop(pd.DataFrame, None)


def quiet() -> None:
    """No progress bars from transformers (weight loading and saving) and no tqdm widget warning in a chapter's
    kernel: the page shows results, not stderr noise. Warnings that say something stay."""
    import warnings

    warnings.filterwarnings("ignore", message="IProgress not found")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()


def load_ipython_extension(ipython) -> None:      # %load_ext tfc.book.readable (every chapter's kernel)
    install(ipython)
    quiet()


def unload_ipython_extension(ipython) -> None:    # %unload_ext tfc.book.readable
    uninstall(ipython)
