"""Scorer cards: ``book/scorers/<family>.md``, metric cards in the style of Hugging Face evaluate's.

The sentences live in markdown templates, ``book/scorers/templates/<family>.md`` (and the shared partial
``_inputs.md``); every number on a card is computed here, when the card is rendered:

* **How to use**: the default scorer (``tfc.scorers.get(name)``) is run on the card's example pairs, in a fresh
  artifacts directory (so only the shipped weights under ``results/release`` load, as on a fresh clone); a
  default whose weights are not shipped gets :data:`NOT_SHIPPED` instead of an output; the model cards also run the
  ``as-published`` preset with the shipped checkpoints named in place of unshipped ones (:func:`as_published`);
* **Inputs / Output**: what the default answers to blank, ``None`` and mismatched inputs, its declared range;
* **Default configuration and its evidence**: the ``DEFAULTS`` entry against the as-published preset, the dev
  sweeps recorded under ``results/models/<name>/`` (:data:`NOT_RECORDED` while a record is missing);
* **The papers' values**: the published cells of the family's columns beside what the reproduction ledger
  (:mod:`tfc.book.ledger`) recorded for the family's scorers;
* **Citation**: BibTeX built from ``CITATION.cff`` and ``templates/references.yml`` (:mod:`tfc.book.card_citation`).

Placeholders are ``{{key}}`` or ``{{key:argument}}`` (:data:`HANDLERS`); an unknown key is an error, so a
template typo fails the rendering. ``tfc book cards`` renders the cards alone; ``tfc book run`` renders them
after the chapters, from the ledger the chapters just wrote, so ``make book`` shows the cards of its own run.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config
from tfc.book import card_citation, card_presets, ledger, readable, reference

CARDS_DIR = config.REPO_ROOT / "book" / "scorers"
TEMPLATE_DIR = CARDS_DIR / "templates"
TOC = config.REPO_ROOT / "book" / "_toc.yml"

# card -> the registry names it documents (the first is the one its "How to use" runs), in the order of book/_toc.yml
FAMILIES: dict[str, tuple[str, ...]] = {
    "lexical": ("f1", "f1-q2", "rouge1", "rouge2", "rougeL", "rougeL-coco", "rougeL-squad", "bleu4", "bleu4-squad",
                "bleu-q2"),
    "bertscore": ("bertscore",),
    "nli": ("nli",),
    "summac": ("summac-zs", "summac-conv"),
    "qags": ("qags",),
    "q2": ("q2",),
    "alignscore": ("alignscore",),
    "wecheck": ("wecheck",),
    "ensemble": ("ensemble",),
}
# imported per-example outputs (``imported:<source>/<metric>``) that belong to a card
IMPORTED: dict[str, tuple[str, ...]] = {
    "bertscore": ("bertscore_f", "bertscore_p_art"), "nli": ("entailment",), "summac": ("summac_zs", "summac_conv"),
    "qags": ("qags",),
}
# the published (table, column) pairs of each card, listed even where no chapter recorded a value for them
PUBLISHED: dict[str, tuple[tuple[str, str], ...]] = {
    "lexical": (("TRUE-T3", "f1"), ("TRUE-T9", "rouge_l"), ("TRUE-T9", "bleu4"), ("TRUE-T11", "f1"),
                ("QAGS-T1", "rouge_l"), ("QAGS-T1", "bleu4"), ("Q2-T3", "overlap_f1_rk"), ("Q2-T3", "bleu")),
    "bertscore": (("TRUE-T3", "bertscore"), ("TRUE-T10", "bertscore"), ("TRUE-T11", "bertscore"),
                  ("QAGS-T1", "bertscore")),
    "nli": (("TRUE-T3", "anli_t5_11b"), ("TRUE-T10", "anli_t5_11b"), ("TRUE-T11", "anli_t5_11b")),
    "summac": (("TRUE-T3", "summac_zs"), ("TRUE-T9", "summac_conv"), ("TRUE-T10", "summac_zs"),
               ("TRUE-T11", "summac_zs"), ("AS-T2", "summac_zs"), ("AS-T2", "summac_conv")),
    "alignscore": (("AS-T2", "alignscore_base"), ("AS-T3", "alignscore_base")),
    "wecheck": (("WC-T1", "wecheck"),),
    "qags": (("QAGS-T1", "qags"),),
    "q2": (("Q2-T2", "q2_f1"), ("Q2-T2", "q2_nli"), ("TRUE-T3", "q2_metric"), ("TRUE-T10", "q2_metric"),
           ("TRUE-T11", "q2_metric")),
    "ensemble": (("TRUE-T3", "ensemble"), ("TRUE-T10", "ensemble"), ("TRUE-T11", "ensemble")),
}
# the headings every card has, in this order (tests/test_cards.py)
SECTIONS = ("How to use", "Inputs", "Output", "Default configuration and its evidence", "The papers' values",
            "Limitations and bias", "Citation")
# the pairs every card's "How to use" scores: one grounding, a claim it supports and one it contradicts
EXAMPLE = (["The bakery on Elm Street is run by two sisters, who bake bread every morning."] * 2,
           ["Two sisters run the bakery on Elm Street.", "Three brothers run the bakery on Elm Street."])
# the bad inputs of the Inputs section, each scored by the card's default (none of them loads a model)
BAD_INPUTS = ((["   "], ["Lake Orla never freezes."]), ([None], ["Lake Orla never freezes."]),
              ([3], ["Lake Orla never freezes."]), (["Lake Orla freezes every winter."], ["It froze.", "It thawed."]))
DIGITS = 3          # decimals of the printed example output
THRESHOLD = 0.5     # the threshold each card's Output section explains
NOT_RECORDED = "not recorded yet"
NOT_SHIPPED = "(output appears once the default's weights ship: {missing} not under results/release)"
GENERATED = "<!-- generated by `tfc book cards` from book/scorers/templates/{family}.md: edit the template -->"
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)(?::([^{}]*?))?\s*\}\}")


@dataclass
class Context:
    family: str
    names: tuple[str, ...]
    records: pd.DataFrame          # every ledger record (tfc.book.ledger.collected)
    ledger_dir: Path


# -- small helpers -------------------------------------------------------------------------------------------


def _scorer(name: str, preset: str = "default"):
    from tfc import scorers

    return scorers.get(name, preset=preset)


def value_text(v) -> str:
    """A config value as the card shows it (inside backticks)."""
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(value_text(x) for x in v) + ")"
    return str(v)


def md_table(frame: pd.DataFrame, decimals: int | None = None, code: tuple[str, ...] = ()) -> str:
    """A markdown table with :mod:`tfc.book.readable`'s rules (integers, one number of decimals, headers in
    words); the cells of the ``code`` columns go in backticks."""
    frame = frame.reset_index(drop=True)
    shown = readable.formatted(frame, decimals)
    heads = [str(h).replace("|", "\\|") for h in shown.columns]

    def cell(col: str, text: str) -> str:
        text = str(text).replace("\n", " ").replace("|", "\\|")
        return f"`{text}`" if col in code and text != readable.MISSING else text

    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for i in range(len(shown)):
        lines.append("| " + " | ".join(cell(frame.columns[j], shown.iat[i, j]) for j in range(len(heads))) + " |")
    return "\n".join(lines)


def tfc_checkpoints(scorer) -> list[str]:
    """The in-house names (``tfc/<name>``) a scorer's configuration loads, its ensemble members' included."""
    cfg = scorer.config.to_dict()
    out = [v for v in cfg.values() if isinstance(v, str) and v.startswith("tfc/")]
    for member in cfg.get("members") or ():
        out += tfc_checkpoints(_scorer(member))
    return list(dict.fromkeys(out))


def unshipped(name: str) -> list[str]:
    """The in-house checkpoints of ``name``'s default that no release under ``results/release`` ships."""
    from tfc.models import release

    return [c for c in tfc_checkpoints(_scorer(name)) if not release.available(c[4:])]


def run_example(name: str, groundings: list[str], generations: list[str], preset: str = "default",
                **overrides) -> np.ndarray:
    """A preset's scores of the example pairs (the tests replace this function)."""
    from tfc import scorers

    return scorers.get(name, preset=preset, **overrides).score(groundings, generations, progress=False)


@contextlib.contextmanager
def fresh_artifacts():
    """An empty ``TFC_ARTIFACTS_DIR`` for the duration (the shipped releases install into it, as on a fresh
    clone; a checkpoint trained on this machine but not shipped stays out of the cards)."""
    previous = os.environ.get("TFC_ARTIFACTS_DIR")
    with tempfile.TemporaryDirectory(prefix="tfc-cards-") as tmp:
        os.environ["TFC_ARTIFACTS_DIR"] = tmp
        try:
            yield Path(tmp)
        finally:
            if previous is None:
                os.environ.pop("TFC_ARTIFACTS_DIR", None)
            else:
                os.environ["TFC_ARTIFACTS_DIR"] = previous


def _signature(name: str, preset: str = "default") -> str | None:
    """The signature of a preset, or None where it cannot be computed here (weights neither shipped nor recorded)."""
    try:
        return _scorer(name, preset).signature
    except Exception:  # noqa: BLE001 - an unshipped default has no signature on a fresh clone
        return None


# -- How to use, Inputs, Output --------------------------------------------------------------------------------


def example_code(name: str, preset: str = "default", overrides: dict | None = None) -> str:
    """The three statements of a card's "How to use" (a preset other than the default and each override named, one
    per line), one string of the example per line."""
    g, h = ((",\n" + " " * 9).join(json.dumps(t, ensure_ascii=False) for t in side) for side in EXAMPLE)
    args = (f', preset="{preset}"' if preset != "default" else "") + \
        "".join(f",\n                {k}={json.dumps(v)}" for k, v in (overrides or {}).items())
    return (f'from tfc import scorers\ns = scorers.get("{name}"{args})\n'
            f"s.score([{g}],\n        [{h}],\n        progress=False).round({DIGITS})")


def how_to_use(ctx: Context, arg: str) -> str:
    name = arg or ctx.names[0]
    return _usage(name, "default", {}, unshipped(name))


def as_published(ctx: Context, arg: str) -> str:
    """The ``as-published`` preset's call with the shipped checkpoints named in place of the unshipped ones
    (:func:`tfc.book.card_presets.shipped_swaps`) and its output; the note when one has no shipped stand-in."""
    name = arg or ctx.names[0]
    return _usage(name, "as-published", *card_presets.shipped_swaps(name))


def _usage(name: str, preset: str, overrides: dict, missing: list[str]) -> str:
    """A preset's call on the example pairs and its printed output (:data:`NOT_SHIPPED` when weights are missing)."""
    if missing:
        out = NOT_SHIPPED.format(missing=", ".join(missing))
    else:
        got = run_example(name, *EXAMPLE, **({"preset": preset} if preset != "default" else {}), **overrides)
        out = repr(np.round(np.asarray(got, dtype=float), DIGITS))
    return f"```python\n{example_code(name, preset, overrides)}\n```\n\n```none\n{out}\n```"


def _outcome(scorer, groundings, generations) -> str:
    try:
        return repr(scorer.score(groundings, generations, progress=False))
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def bad_inputs(ctx: Context, arg: str) -> str:
    name = arg or ctx.names[0]
    s = _scorer(name)
    rows = [{"call": f"s.score({g!r}, {h!r})", "result": _outcome(s, g, h)} for g, h in BAD_INPUTS]
    return md_table(pd.DataFrame(rows), code=("call", "result"))


def ranges(ctx: Context, arg: str) -> str:
    rows = []
    for n in ctx.names:
        s = _scorer(n)
        rows.append({"scorer": n, "lowest": float(s.output_range[0]), "highest": float(s.output_range[1]),
                     "blank input scores": float(s.empty_score)})
    return md_table(pd.DataFrame(rows), code=("scorer",))


def config_value(arg: str, preset: str) -> str:
    name, _, field = arg.rpartition(".")
    cfg = _scorer(name, preset).config.to_dict()
    if field not in cfg:
        raise KeyError(f"{name} has no config field {field!r}")
    return value_text(cfg[field])


def batch_size(ctx: Context, arg: str) -> str:
    return value_text(getattr(_scorer(arg or ctx.names[0]).config, "batch_size", None))


def constant(ctx: Context, arg: str) -> str:
    from tfc import scorers
    from tfc.runs import release_drift
    from tfc.runs.auc_drift import DRIFT_LIMIT
    from tfc.scorers import seq2seq_nli

    values = {"threshold": THRESHOLD, "digits": DIGITS, "drift_limit": DRIFT_LIMIT,
              "release_max_abs_diff": release_drift.MAX_ABS_DIFF, "release_max_auc_diff": release_drift.MAX_AUC_DIFF,
              "release_rows": release_drift.ROWS,
              "fast_dtype": scorers.FAST_DTYPE, "seq2seq_positive": seq2seq_nli.POSITIVE,
              "seq2seq_template": seq2seq_nli.TRUE_TEMPLATE}
    return value_text(values[arg])


# -- Default configuration and its evidence --------------------------------------------------------------------


def defaults(ctx: Context, arg: str) -> str:
    """The ``DEFAULTS`` entry of each scorer and its signature, then every field where it leaves the paper's."""
    from tfc import scorers

    rows, diffs = [], []
    for n in ctx.names:
        entry = json.dumps(scorers.DEFAULTS.get(n, {}), ensure_ascii=False, default=str)
        rows.append({"scorer": n, "DEFAULTS entry": entry,
                     "signature of the default": _signature(n) or readable.MISSING})
        d, p = _scorer(n).config.to_dict(), _scorer(n, "as-published").config.to_dict()
        diffs += [{"scorer": n, "field": k, "as published": value_text(p.get(k)), "default": value_text(v)}
                  for k, v in d.items() if p.get(k) != v]
    out = md_table(pd.DataFrame(rows), code=("scorer", "DEFAULTS entry", "signature of the default"))
    if diffs:
        out += "\n\n" + md_table(pd.DataFrame(diffs), code=("scorer", "field", "as published", "default"))
    return out


def config_fields(ctx: Context, arg: str) -> str:
    """Every config field of ``arg`` (default: the card's first scorer): default, as published, in the hash."""
    name = arg or ctx.names[0]
    s, p = _scorer(name), _scorer(name, "as-published").config.to_dict()
    runtime = set(getattr(s.config, "RUNTIME", ()))
    rows = [{"field": k, "default": value_text(v), "as published": value_text(p.get(k)),
             "in the signature": "no" if k in runtime else "yes"} for k, v in s.config.to_dict().items()]
    return md_table(pd.DataFrame(rows), code=("field", "default", "as published"))


def records(ctx: Context, arg: str) -> str:
    """Each in-house checkpoint the card's defaults load: shipped or not, and its record under results/models."""
    from tfc.models import release

    rows = []
    for n in ctx.names:
        for ckpt in tfc_checkpoints(_scorer(n)):
            folder = config.model_records_dir() / ckpt[4:]
            files = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
            ident = folder / "identity.json"
            rows.append({"scorer": n, "checkpoint": ckpt,
                         "shipped": "yes" if release.available(ckpt[4:]) else "no",
                         "record": ", ".join(files) or NOT_RECORDED,
                         "identity": json.loads(ident.read_text()).get("identity") if ident.is_file() else None})
    if not rows:
        return NOT_RECORDED
    return md_table(pd.DataFrame(rows).drop_duplicates(["checkpoint", "scorer"]), code=("scorer", "checkpoint"))


def drift(ctx: Context, arg: str) -> str:
    """Each shipped model the card's defaults load: its release's drift against the training output it was
    packed from (tfc.runs.release_drift), as recorded in results/models/<name>/release_drift.json."""
    from tfc.models import release
    from tfc.runs import release_drift

    rows = []
    for n in ctx.names:
        for ckpt in tfc_checkpoints(_scorer(n)):
            rec = release_drift.recorded(ckpt) if release.available(ckpt[4:]) else None
            if rec is None:
                continue
            rows.append({"checkpoint": ckpt, "read by": rec.get("scorer") or "its training record",
                         "rows per set": rec["rows_per_set"], "largest |score diff|": round(rec["max_abs_diff"], 4),
                         "largest |AUC diff| (points)": round(rec["max_abs_auc_diff"], 3),
                         "within the rule": "yes" if rec["meets_rule"] else "no"})
    if not rows:
        return NOT_RECORDED
    return md_table(pd.DataFrame(rows).drop_duplicates("checkpoint"), code=("checkpoint", "read by"))


def _chosen_table(auc: dict, chosen: str, first: str | None, label: str = "reading") -> str:
    """A sweep's AUC table (option x dev set, and the mean), the chosen row and the first (as-published) marked."""
    t = pd.DataFrame.from_dict(auc, orient="index")
    t.index.name = label
    t = t.reset_index()
    t["chosen"] = np.where(t[label] == chosen, "✓", "")
    if first is not None:
        t["as published"] = np.where(t[label] == first, "✓", "")
    return md_table(t)


def readings(ctx: Context, arg: str) -> str:
    """The dev sweep of ``arg``'s readings (tfc.runs.readings), recorded under its default checkpoint."""
    name = arg or ctx.names[0]
    ckpt = _scorer(name).config.checkpoint
    where = f"`results/models/{ckpt.removeprefix('tfc/')}/readings_dev.json`"
    try:
        from tfc.runs import readings as R
    except ImportError:
        return f"*{NOT_RECORDED}* ({where})"
    rec = R.recorded(ckpt)
    if rec is None or name not in rec.get("chosen", {}):
        return f"*{NOT_RECORDED}* ({where})"
    wide = R.wide(rec)
    wide = wide[wide["scorer"] == name].drop(columns="scorer").set_index("reading")
    sets = pd.DataFrame(rec["dev_sets"]).T.rename_axis("dev set").reset_index()
    sets = sets[[c for c in ("dev set", "rows", "positives", "median_grounding_words") if c in sets]]
    table = _chosen_table(wide.to_dict(orient="index"), rec["chosen"][name], next(iter(R.READINGS[name])))
    margin = md_table(pd.DataFrame([{"margin (AUC points)": float(rec["margin"]), "rows per set": rec["rows_per_set"],
                                     "seed": rec["seed"]}]))
    return f"{where}\n\n{md_table(sets)}\n\n{table}\n\n{margin}"


def conv_heads(ctx: Context, arg: str) -> str:
    """SummaC-Conv's shipped heads (tfc.runs.conv.HEADS): what each reads and its AUC on held-out dev frames."""
    from tfc.runs import conv

    rows = []
    for kind, spec in conv.HEADS.items():
        path = config.model_records_dir() / spec["name"] / "training_summary.json"
        if not path.is_file():
            continue
        rec = json.loads(path.read_text())
        c = rec["config"]
        rows.append({"head": kind, "release": f"tfc/{spec['name']}", "matrices": f"{c['grounding_granularity']} x "
                     f"{c['generated_granularity']}, {c['sentence_splitter']} sentences",
                     "fitted on (rows)": rec["n_examples"], **rec["dev_auc"],
                     "mean dev AUC": round(float(np.mean(list(rec["dev_auc"].values()))), 2)})
    return md_table(pd.DataFrame(rows), code=("release",)) if rows else NOT_RECORDED


def _sweep_paths() -> dict:
    from tfc.runs import qgqa

    return {"q2_nli": qgqa.nli_sweep_path, "q2_option": qgqa.option_sweep_path,
            "q2_candidate": qgqa.candidate_sweep_path, "q2_qg_rules": qgqa.qg_rule_sweep_path}


def sweep(ctx: Context, arg: str) -> str:
    """A recorded dev sweep of the QA-based scorers' options (tfc.runs.qgqa): its AUC table and choice."""
    path = Path(_sweep_paths()[arg]())
    where = f"`{path.relative_to(config.REPO_ROOT) if path.is_relative_to(config.REPO_ROOT) else path.name}`"
    if not path.is_file():
        return f"*{NOT_RECORDED}* ({where})"
    rec = json.loads(path.read_text())
    rows = pd.DataFrame([{"dev set": k, "rows": v} for k, v in rec.get("rows", {}).items()])
    head = f"{where}: *{rec.get('what', '')}*, reader `{rec.get('reader', '')}`"
    return f"{head}\n\n{md_table(rows)}\n\n{_chosen_table(rec['auc'], rec['chosen'], None, 'option')}"


# -- The papers' values (the ledger) -----------------------------------------------------------------------------


def _natural(name: str) -> str:
    """A sort key that orders the numbers inside a name by value ("TRUE-T3" before "TRUE-T11")."""
    return re.sub(r"\d+", lambda m: m.group(0).zfill(8), str(name))


def _owner(signature: str) -> tuple[str, str]:
    """(registry name, imported metric) of a record's signature."""
    s = str(signature or "")
    if s.startswith("imported:"):
        return "", s.split("/")[-1].split(".")[0]
    return re.split(r"[.(]", s)[0], ""


def family_records(family: str, records: pd.DataFrame) -> pd.DataFrame:
    """The counted ledger records (tfc.book.ledger.counted, non-preset reproductions left out) of a card's scorers."""
    rec = ledger.counted(records)
    if not len(rec):
        return rec
    rec = rec[rec["counted_role"] != "other-config"]
    owners = rec["signature"].map(_owner)
    mine = owners.map(lambda o: o[0] in FAMILIES[family] or o[1] in IMPORTED.get(family, ()))
    return rec[mine.astype(bool)]


def _published(family: str) -> pd.DataFrame:
    rows = []
    for table, column in PUBLISHED[family]:
        pub = reference.load(table)
        pub = pub[(pub["column"] == column) & pub["value"].notna()]
        rows.append(pub.rename(columns={"value": "paper"})[["table", "row", "column", "paper"]])
    return pd.concat(rows, ignore_index=True)


def _rank(rec: pd.DataFrame, names: tuple[str, ...]) -> pd.Series:
    """Which record speaks for a cell: the default's signature, then its readable tag (the same checkpoint and
    reading under an older hash), then a reproduction, imported outputs, a stand-in."""
    sigs = {s for s in (_signature(n) for n in names) if s}
    tags = {s.rsplit(".", 1)[0] for s in sigs}
    order = {"reproduction": 2, "imported": 3, "stand-in": 4}
    return pd.Series([0 if s in sigs else 1 if s.rsplit(".", 1)[0] in tags else order.get(r, 5)
                      for s, r in zip(rec["signature"], rec["counted_role"])], index=rec.index)


def cells(family: str, records: pd.DataFrame) -> pd.DataFrame:
    """Every published cell of the card (its columns, and any cell a family record compared) with ours, Δ, role
    and status; where several configurations were recorded, the one :func:`_rank` puts first (ties: the largest
    |Δ|, the ledger's rule) and how many there were."""
    keys = ["table", "row", "column"]
    rec = family_records(family, records)
    pub = pd.concat([_published(family), rec[keys + ["paper"]]], ignore_index=True).drop_duplicates(keys)
    pub["order"] = range(len(pub))
    if len(rec):
        rec = rec.assign(rank=_rank(rec, FAMILIES[family]), ad=rec["delta"].abs())
        best = rec.sort_values(["rank", "ad"], ascending=[True, False], kind="stable").drop_duplicates(keys)
        n = rec.groupby(keys)["signature"].nunique().rename("configurations").reset_index()
        best = best[keys + ["ours", "delta", "counted_role", "signature"]].merge(n, on=keys)
        pub = pub.merge(best.rename(columns={"counted_role": "role"}), on=keys, how="left")
    else:
        pub = pub.assign(ours=np.nan, delta=np.nan, role=None, signature=None, configurations=np.nan)
    tol = ledger.status_table().set_index("table")["tolerance"]
    pub["tolerance"] = pub["table"].map(tol).fillna(0.5).astype(float)
    within = pub["delta"].abs() <= pub["tolerance"] + ledger.TOLERANCE_EPS
    pub["status"] = [NOT_RECORDED if np.isnan(o) else f"{'within' if w else 'outside'} ±{t:g}"
                     for o, w, t in zip(pub["ours"], within, pub["tolerance"])]
    pub = pub.sort_values(["table", "column", "order"], key=lambda s: s.map(_natural) if s.name == "table" else s,
                          kind="stable")
    return pub.drop(columns=["order"]).reset_index(drop=True)


def papers_summary(ctx: Context, arg: str) -> str:
    c = cells(ctx.family, ctx.records)
    status = ledger.table_ledger(ctx.records).set_index("table")["status"]
    rows = []
    for (table, column), g in c.groupby(["table", "column"], sort=False):
        done = g[g["ours"].notna()]
        rows.append({"table": table, "column": column, "n_published": len(g), "n_compared": len(done),
                     "n_within_tol": int(done["status"].str.startswith("within").sum()),
                     "median_abs_delta": float(done["delta"].abs().median()) if len(done) else np.nan,
                     "roles": ", ".join(sorted(set(done["role"]))) or NOT_RECORDED,
                     "ledger status of the table": status.get(table, readable.MISSING)})
    return md_table(pd.DataFrame(rows), code=("table", "column"))


def papers_cells(ctx: Context, arg: str) -> str:
    c = cells(ctx.family, ctx.records)
    c = c[["table", "row", "column", "paper", "ours", "delta", "role", "status", "signature", "configurations"]]
    return md_table(c, code=("table", "row", "column", "signature"))


def ledger_source(ctx: Context, arg: str) -> str:
    d = Path(ctx.ledger_dir)
    shown = str(d.relative_to(config.REPO_ROOT)) if d.is_relative_to(config.REPO_ROOT) else str(d)
    r = ctx.records
    row = {"ledger": shown, "chapters": ", ".join(sorted(set(r["chapter"]))) if len(r) else NOT_RECORDED,
           "records": len(r), "modes": ", ".join(sorted({m for m in r["mode"] if m})) if len(r) else readable.MISSING}
    return md_table(pd.DataFrame([row]), code=("ledger",))


# -- Citation ---------------------------------------------------------------------------------------------------


def citation(ctx: Context, arg: str) -> str:
    refs = card_citation.references()
    entries = [card_citation.bibtex(rid.strip(), refs[rid.strip()]) for rid in arg.split(",") if rid.strip()]
    return "```bibtex\n" + "\n\n".join(entries) + "\n```"


# -- rendering ---------------------------------------------------------------------------------------------------

HANDLERS = {
    "how_to_use": how_to_use, "bad_inputs": bad_inputs, "ranges": ranges, "batch_size": batch_size,
    "cfg": lambda ctx, arg: config_value(arg, "default"), "pub": lambda ctx, arg: config_value(arg, "as-published"),
    "improved": lambda ctx, arg: config_value(arg, "improved"),
    "const": constant, "defaults": defaults, "config": config_fields, "records": records, "drift": drift,
    "readings": readings, "conv_heads": conv_heads,
    "sweep": sweep, "papers_summary": papers_summary, "papers_cells": papers_cells, "ledger_source": ledger_source,
    "citation": citation, "as_published": as_published,
}


def template(family: str) -> str:
    """The card's template with its ``{{include:<file>}}`` partials inlined."""
    text = (TEMPLATE_DIR / f"{family}.md").read_text(encoding="utf-8")
    return re.sub(r"\{\{\s*include:([\w.\-]+)\s*\}\}",
                  lambda m: (TEMPLATE_DIR / m.group(1)).read_text(encoding="utf-8").rstrip("\n"), text)


def placeholders(text: str) -> list[tuple[str, str]]:
    """The ``(key, argument)`` of every placeholder left in ``text``."""
    return [(m.group(1), m.group(2) or "") for m in _PLACEHOLDER.finditer(text)]


def fill(text: str, ctx: Context) -> str:
    def one(m: re.Match) -> str:
        key, arg = m.group(1), (m.group(2) or "").strip()
        if key not in HANDLERS:
            raise KeyError(f"templates/{ctx.family}.md: unknown placeholder {{{{{key}}}}}; "
                           f"known: {', '.join(HANDLERS)}")
        return HANDLERS[key](ctx, arg)

    return _PLACEHOLDER.sub(one, text)


def render(family: str, ledger_dir: Path | None = None) -> str:
    """One card's markdown (models run in the current artifacts directory: :func:`render_all` makes it fresh)."""
    if family not in FAMILIES:
        raise KeyError(f"unknown card {family!r}; known: {', '.join(FAMILIES)}")
    d = Path(ledger_dir) if ledger_dir is not None else ledger.ledger_dir()
    ctx = Context(family, FAMILIES[family], ledger.collected(d), d)
    return GENERATED.format(family=family) + "\n" + fill(template(family), ctx).rstrip("\n") + "\n"


def render_all(families=None, ledger_dir: Path | None = None, out_dir: Path = CARDS_DIR, log=print) -> list[Path]:
    """Render the cards (all by default) into ``out_dir``; returns the files written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with fresh_artifacts():
        for family in families or FAMILIES:
            path = out_dir / f"{family}.md"
            path.write_text(render(family, ledger_dir), encoding="utf-8")
            log(f"[tfc book] card {path.relative_to(out_dir.parent) if out_dir.parent in path.parents else path}")
            written.append(path)
    return written
