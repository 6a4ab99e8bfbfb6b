"""Runs ONE peer implementation inside the peer venv (benchmarks/peers/setup.sh) and prints JSON.

Called by benchmarks/bench_peers.py, never imported by tfc. Input: a JSON file with
``{"peer": "summac" | "bert-score", "groundings": [...], "generations": [...], "checkpoint": dir,
"threads": n, "splits": {text: [sentences]}, ...}``. Output (stdout, last line): JSON with the scores,
the timed seconds and the peer's versions.

* ``summac``: ``summac.model_summac.SummaCZS(granularity="sentence")`` as published (0.0.4), with our
  checkpoint registered in its ``model_map`` (that is how the package takes a model), and its NLTK
  sentence splitter replaced by the sentences tfc used (NLTK's punkt data cannot be downloaded here,
  and identical units make the score comparison test the rest of the computation). The package then
  drops sentences of 10 characters or fewer, as its own ``split_sentences`` does (``keep_short=True``
  returns tfc's sentences as they are, for tfc's reading that keeps them).
  ``max_doc_sents`` is raised from 100 to 10,000 so both sides score the same pairs.
* ``summac-conv``: ``summac.model_summac.SummaCConv(models=[<our checkpoint>], bins=..., nli_labels="e",
  start_file=<the head's weights as a state-dict file>)``, ``score`` as published, with the same sentence
  splitting as ``summac`` above.
* ``bert-score``: ``bert_score.score(cands, refs, model_type=<dir>, num_layers=...)``, the library's
  documented call, which loads the model on every call; also timed: a ``BERTScorer`` object built
  once (``bert_score_object_seconds``) for a like-for-like comparison.
"""
import json
import os
import sys
import time


def _register(M, cfg):
    """Our checkpoint in the package's ``model_map``, and its sentence splitter replaced by tfc's sentences."""
    M.model_map["tfc-checkpoint"] = {"model_card": cfg["checkpoint"], "entailment_idx": cfg["entailment_idx"],
                                     "contradiction_idx": cfg["contradiction_idx"]}
    splits = cfg["splits"]
    keep_short = cfg.get("keep_short", False)

    def split_sentences(self, text):
        sents = splits[text]
        return sents if keep_short else [s for s in sents if len(s) > 10]

    M.SummaCImager.split_sentences = split_sentences


def summac_conv(cfg):
    import torch
    from summac import model_summac as M

    _register(M, cfg)
    model = M.SummaCConv(models=["tfc-checkpoint"], bins=cfg["bins"], nli_labels="e", granularity="sentence",
                         device="cpu", imager_load_cache=False, max_doc_sents=10_000, start_file=cfg["start_file"])
    g, h = cfg["groundings"], cfg["generations"]
    model.imagers[0].load_nli()
    model.score(g[:2], h[:2])                                 # warm-up, as for tfc
    model.imagers[0].cache = {}
    t0 = time.perf_counter()
    out = model.score(g, h)
    dt = time.perf_counter() - t0
    return {"scores": [float(x) for x in out["scores"]], "seconds": dt, "torch_threads": torch.get_num_threads()}


def summac(cfg):
    import torch
    from summac import model_summac as M

    _register(M, cfg)
    model = M.SummaCZS(granularity="sentence", model_name="tfc-checkpoint", device="cpu",
                       imager_load_cache=False, max_doc_sents=10_000)
    g, h = cfg["groundings"], cfg["generations"]
    model.imager.load_nli()                                   # load outside the timer (tfc's is loaded too)
    warm = model.score(g[:2], h[:2])                          # warm-up, as for tfc
    model.imager.cache = {}                                   # no reuse of the warm-up's images
    t0 = time.perf_counter()
    out = model.score(g, h, batch_size=cfg.get("batch_size", 128))
    dt = time.perf_counter() - t0
    del warm
    return {"scores": [float(x) for x in out["scores"]], "seconds": dt,
            "n_pairs": int(sum(im.shape[1] * im.shape[2] for im in out["images"])),
            "torch_threads": torch.get_num_threads()}


def bertscore(cfg):
    import bert_score
    import torch

    g, h = cfg["groundings"], cfg["generations"]
    kw = dict(model_type=cfg["checkpoint"], num_layers=cfg["num_layers"], lang="en", device="cpu",
              batch_size=cfg.get("batch_size", 64))
    bert_score.score(h[:2], g[:2], **kw)                     # warm-up (imports, file cache)
    t0 = time.perf_counter()
    P, R, F = bert_score.score(h, g, **kw)                   # the documented call: loads the model each time
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    scorer = bert_score.BERTScorer(**kw)
    load = time.perf_counter() - t1
    t1 = time.perf_counter()
    P2, _, _ = scorer.score(h, g, batch_size=kw["batch_size"])
    dt_obj = time.perf_counter() - t1
    return {"scores": P.double().tolist(), "seconds": dt, "bert_score_object_seconds": dt_obj,
            "bert_score_object_load_seconds": load, "object_scores_equal": bool(torch.equal(P, P2)),
            "torch_threads": torch.get_num_threads()}


def main():
    cfg = json.load(open(sys.argv[1]))
    import torch

    if cfg.get("threads"):
        torch.set_num_threads(int(cfg["threads"]))
    res = {"summac": summac, "summac-conv": summac_conv, "bert-score": bertscore}[cfg["peer"]](cfg)
    from importlib import metadata

    res["versions"] = {d: metadata.version(d) for d in ("summac", "bert-score", "torch", "transformers")}
    res["python"] = sys.version.split()[0]
    res["pid"] = os.getpid()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
