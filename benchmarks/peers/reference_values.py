"""Values the reference implementations compute on fixed inputs, for tests/test_reference_values.py.

Run in the peer venv (benchmarks/peers/setup.sh), never imported by tfc:

    ~/.cache/tfc/peer-venv/bin/python benchmarks/peers/reference_values.py > tests/golden/reference_values.json

* SummaC-ZS: ``summac.model_summac.SummaCZS.image2score`` (summac 0.0.4) on a fixed image of 3 grounding
  sentences x 2 generated sentences (labels in the package's order: entailment, contradiction, neutral), with
  ``use_con`` on and off (score_type "e-c" and "e").
* SummaC-Conv: ``summac.model_summac.SummaCConv.forward`` (its ``compute_histogram``, first-10-rows cut, row
  layer, mean and 3 -> 2 layer) on fixed images with fixed weights (``percentile`` bins with ``nli_labels="e"``,
  ``even50`` with ``"ec"``): a 3 x 2 image, a 4 x 12 one (more generated sentences than the 10 rows it reads) and
  the package's image of an example without sentences (one cell of zeros); then the softmax probability of class 1.
* AlignScore: ``alignscore.inference.Inferencer.inference_per_example`` (the PyPI fork
  ``alignscore-SpeedOfMagic`` 0.1.4, the same function as yuh-zha/AlignScore's) in ``nli_sp`` mode, on a fixed
  text of 10 sentences and 806 words. Only the function's own code runs: its model is replaced by a lookup that
  records the (context group, claim sentence) pairs it is asked for and returns fixed probabilities, and NLTK's
  ``sent_tokenize`` (whose punkt model is not available offline) by a split after ". ". So the values are the
  reference's grouping of sentences and its reduction (max over groups, mean over claim sentences).
"""
import json
import sys
import types

import numpy as np


def summac_values() -> dict:
    from summac.model_summac import SummaCZS

    # image[label, grounding unit, generated unit]; labels (e, c, n)
    ent = [[0.9, 0.5], [0.2, 0.4], [0.1, 0.05]]
    con = [[0.1, 0.0], [0.8, 0.6], [0.3, 0.9]]
    neu = [[round(1 - e - c, 10) for e, c in zip(er, cr)] for er, cr in zip(ent, con)]
    image = np.array([ent, con, neu])
    out = {"image_e_c_n": image.tolist()}
    for name, use_con in (("e-c", True), ("e", False)):
        z = SummaCZS(model_name="mnli", granularity="sentence", imager_load_cache=False, device="cpu",
                     use_con=use_con)
        out[name] = float(z.image2score(image))
    return out


def _conv_images() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    small = np.array([[[0.9, 0.5], [0.2, 0.4], [0.1, 0.05]], [[0.1, 0.0], [0.8, 0.6], [0.3, 0.9]],
                      [[0.0, 0.5], [0.0, 0.0], [0.6, 0.05]]])
    wide = rng.dirichlet([1.0, 1.0, 1.0], size=(4, 12)).transpose(2, 0, 1)   # (labels, 4 grounding, 12 generated)
    edge = np.array([[[0.0, 1.0, 0.905]], [[1.0, 0.0, 0.01]], [[0.0, 0.0, 0.085]]]).transpose(0, 2, 1)
    return [small, np.round(wide, 6), edge, np.zeros((3, 1, 1))]


def summac_conv_values() -> dict:
    import torch
    from summac.model_summac import SummaCConv

    images = _conv_images()
    out = {"images_e_c_n": [im.tolist() for im in images], "heads": []}
    for bins, labels in (("percentile", "e"), ("even50", "ec")):
        model = SummaCConv(models=["mnli"], bins=bins, nli_labels=labels, device="cpu", imager_load_cache=False)
        width = model.mlp.weight.shape[1]
        with torch.no_grad():   # fixed weights, nothing learned
            model.mlp.weight.copy_(torch.linspace(-1.0, 1.5, width).reshape(1, width))
            model.mlp.bias.fill_(-0.2)
            model.layer_final.weight.copy_(torch.tensor([[0.3, -0.1, 0.2], [-0.4, 0.5, 0.25]]))
            model.layer_final.bias.copy_(torch.tensor([0.05, -0.1]))
            logits, histograms, _ = model.forward(None, None, images=images)
            scores = torch.softmax(logits, dim=-1)[:, 1].tolist()
        out["heads"].append({"bins": bins, "nli_labels": labels,
                             "state": {k: v.tolist() for k, v in model.state_dict().items()},
                             "histograms": [h.tolist() for h in histograms], "scores": scores})
    return out


def _stub_alignscore_imports() -> None:
    """The fork imports spaCy (its SMART modes) and its PyTorch-Lightning model at import time; neither runs in
    ``inference_per_example``, so stand-ins let the module import without them."""
    if "spacy" not in sys.modules:
        sys.modules["spacy"] = types.ModuleType("spacy")
    model = types.ModuleType("alignscore.model")
    model.BERTAlignModel = object
    sys.modules["alignscore.model"] = model


def alignscore_values() -> dict:
    import torch

    _stub_alignscore_imports()
    import alignscore.inference as I

    lengths = [120, 40, 95, 150, 60, 33, 110, 80, 66, 52]          # words per sentence: 806 in all
    sents = [" ".join(f"s{i}w{j}" for j in range(n - 1)) + f" end{i}." for i, n in enumerate(lengths)]
    premise = " ".join(sents)
    hypo = "Claim one holds. Claim two holds too."
    I.sent_tokenize = lambda t: [s if s.endswith(".") else s + "." for s in t.split(". ") if s]
    seen = []

    def inference(premise_mat, hypo_mat):
        seen.extend(zip(premise_mat, hypo_mat))
        # P(aligned) of a pair: a fixed function of the group's first sentence index and the claim sentence
        p = [0.1 + 0.2 * (int(a.split("w")[0][1:]) % 4) + (0.05 if "two" in b else 0.0) for a, b in zip(premise_mat, hypo_mat)]
        tri = torch.tensor([[x, 1 - x, 0.0] for x in p])
        return None, None, tri

    inf = object.__new__(I.Inferencer)
    inf.nlg_eval_mode = "nli_sp"
    inf.inference = inference
    score = inf.inference_per_example(premise, hypo)
    groups = list(dict.fromkeys(a for a, _ in seen))
    claims = list(dict.fromkeys(b for _, b in seen))
    matrix = [[float(inference([g], [c])[2][0, 0]) for c in claims] for g in groups]
    return {"sentences": sents, "text": premise, "claim_sentences": claims, "chunk_words": 350,
            "groups": groups, "matrix": matrix, "score": float(score)}


def main():
    from importlib.metadata import version

    out = {"command": "~/.cache/tfc/peer-venv/bin/python benchmarks/peers/reference_values.py",
           "summac": {"package": f"summac {version('summac')}", **summac_values()},
           "summac_conv": {"package": f"summac {version('summac')}", **summac_conv_values()},
           "alignscore": {"package": f"alignscore-SpeedOfMagic {version('alignscore-SpeedOfMagic')}",
                          **alignscore_values()}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
