"""Values the reference implementations compute on fixed inputs, for tests/test_reference_values.py.

Run in the peer venv (benchmarks/peers/setup.sh), never imported by tfc:

    ~/.cache/tfc/peer-venv/bin/python benchmarks/peers/reference_values.py > tests/golden/reference_values.json

* SummaC-ZS: ``summac.model_summac.SummaCZS.image2score`` (summac 0.0.4) on a fixed image of 3 grounding
  sentences x 2 generated sentences (labels in the package's order: entailment, contradiction, neutral), with
  ``use_con`` on and off (score_type "e-c" and "e").
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
           "alignscore": {"package": f"alignscore-SpeedOfMagic {version('alignscore-SpeedOfMagic')}",
                          **alignscore_values()}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
