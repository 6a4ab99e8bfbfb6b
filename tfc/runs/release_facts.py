"""The facts of a shipped sentence-model release, put on its model card: quantisation scheme and size, the
largest probability change on its check pairs, its AUC drift against the unquantised source and of int8-dynamic
inference, its full-set AUCs, and the identity probe (how a 3-way model reads a sentence paired with itself).
The book reads them back from the committed records (:func:`tfc.runs.inhouse_models.recorded_identity_probe`).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from tfc.runs.auc_drift import drift_table
from tfc.runs.cached_aucs import full_set_aucs, named_scorers
from tfc.runs.inhouse_models import SENT_CHECKPOINT, SENT_SOURCE, recipe, record_on_card, sent_reading


def identity_probe(checkpoints: dict, n: int = 200, seed: int = 0) -> pd.DataFrame:
    """How a 3-way model reads a sentence paired with itself: the diagnosis behind sentence mix v2.

    ``n`` premises of the human-labelled SNLI dev/test and TaxiNLI pairs (6-45 words, seeded), each paired with
    itself and with its lower-cased PTB-tokenised form (the form CNN/DM and XSum summaries come in). Per
    model and form: mean P(entail), mean P(contradict), and the share whose most probable label is
    entailment. A sound NLI model puts nearly all of them at entailment."""
    from tfc import data
    from tfc.scorers.nli import NLIEngine
    from tfc.train.contrast import ptb_form
    from tfc.train.synthetic import load_nlp

    pool = pd.concat([data.load(d)["grounding"] for d in ("snli_devtest", "taxinli")], ignore_index=True)
    pool = pd.Series(pd.unique(pool))
    pool = pool[pool.str.split().str.len().between(6, 45)]
    sents = pool.sample(n=min(n, len(pool)), random_state=seed).tolist()
    forms = {"identical": sents, "PTB form": [ptb_form(d) for d in load_nlp().pipe(sents)]}
    rows = []
    for label, ckpt in checkpoints.items():
        try:
            eng = NLIEngine(ckpt, None, None, None, "float32", None)
        except FileNotFoundError as exc:
            rows.append({"model": label, "form": "n/a", "pairs": 0, "note": str(exc)})
            continue
        for form, hyps in forms.items():
            p = eng.probs(list(zip(sents, hyps)), 32, False)
            rows.append({"model": label, "form": form, "pairs": len(sents),
                         "mean P(entail)": float(p[:, eng.i_ent].mean()),
                         "mean P(contradict)": float(p[:, eng.i_con].mean()),
                         "share read as entailment": float((p.argmax(1) == eng.i_ent).mean())})
    return pd.DataFrame(rows)


def record_identity_probe(checkpoints, n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Run :func:`identity_probe` on in-house ``checkpoints`` (``tfc/<name>``, weights installed) and put each
    model's rows on its own card (``eval_results["identity_probe"]``), so the book reads them without the
    weights. Returns the probe's rows."""
    table = identity_probe({c[4:]: c for c in checkpoints}, n=n, seed=seed)
    for c in checkpoints:
        record_on_card(c, {"identity_probe": table[table["model"] == c[4:]].to_dict("records")})
    return table


def _compared_with(checkpoint: str) -> dict:
    """``{label: checkpoint}`` of the model a release's recipe is measured against (empty without one)."""
    try:
        other = recipe(checkpoint).get("compared_with")
    except KeyError:
        return {}
    return {recipe(other).get("label", other[4:]): other} if other else {}


def record_release(name: str = SENT_CHECKPOINT[4:], source: str = SENT_SOURCE, datasets=None, notes=(),
                   reading: dict | None = None, probe_against: dict | None = None) -> dict:
    """Put the release's facts on the model card: scheme, size, identities, the largest probability change
    on the release's check pairs against the unquantised source, and the AUC drift, on the rows both caches
    hold, of (a) the release against the source (both fp32) and (b) int8-dynamic inference against fp32 (both
    on the release; left out when not scored). ``reading``: the SummaC-ZS settings both are read with (default:
    the preset); ``probe_against``: models shown beside the release in the identity probe (default: v1)."""
    from tfc import models
    from tfc.models import release

    meta = json.loads((release.release_dir(name) / release.META).read_text())
    src_probs = np.array(release.check_outputs(models.resolve(source)))
    out = {"release": {"scheme": meta["scheme"], "bytes": meta["bytes"], "source_identity": meta["source_identity"],
                       "materialized_identity": meta["materialized_identity"],
                       "max_abs_prob_diff_on_check_pairs": round(float(np.abs(src_probs - np.array(meta["check_probs"])).max()), 6)}}
    kw = dict(reading or {})
    sc = named_scorers({"source": sent_reading(source, **kw), "release": sent_reading(f"tfc/{name}", **kw),
                        "int8": sent_reading(f"tfc/{name}", "int8-dynamic", **kw),
                        "int8pc": sent_reading(f"tfc/{name}", "int8-dynamic-pc", **kw)})
    for key, (a, b) in {"drift_release_vs_source": ("source", "release"), "drift_int8_vs_fp32": ("release", "int8"),
                        "drift_int8pc_vs_fp32": ("release", "int8pc")}.items():
        d = drift_table(sc[a], sc[b], datasets) if {a, b} <= set(sc) else pd.DataFrame()
        if len(d):
            out[key] = d.round(4).to_dict("records")
    from tfc.train.mix import qafacteval_check

    if "release" in sc:
        aucs = full_set_aucs({"release": sc["release"]}, datasets)
        out["true_full_sets"] = aucs.drop(columns=["model"]).round(4).to_dict("records")

    out["data_checks"] = {"wecheck_qafacteval_score": [qafacteval_check(t) for t in ("dialogue", "paws")]}
    probe = dict(probe_against if probe_against is not None else _compared_with(f"tfc/{name}"))
    out["identity_probe"] = identity_probe({**probe, name: f"tfc/{name}"}).round(4).to_dict("records")
    if reading:
        out["reading"] = kw
    if notes:
        out["notes"] = list(notes)
    record_on_card(f"tfc/{name}", out)
    return out
