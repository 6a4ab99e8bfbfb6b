"""Training pipelines for the in-house checkpoints (import the submodules; nothing heavy is imported here).

* :mod:`tfc.train.core` -- shared multi-head (3-way / binary / regression) training, checkpoint I/O,
  model card (``TrainConfig``, ``train``, ``load_multihead``, ``convert_checkpoint_dtype``);
* :mod:`tfc.train.mix` -- the leakage-filtered training mix cast into the three label spaces (``build_mix``);
* :mod:`tfc.train.synthetic` -- spaCy FactCC-style synthetic pairs (``make_pairs``);
* :mod:`tfc.train.nli` -- ``tfc/nli-minilm`` (``train_nli``);
* :mod:`tfc.train.alignscore` -- ``tfc/alignscore-minilm`` training (``train_alignscore``; the inference
  code is :mod:`tfc.scorers.alignscore_model`);
* :mod:`tfc.train.frames` -- a training frame's required columns and content hashes;
* the command line is :mod:`tfc.cli.train` / :mod:`tfc.cli.train_inhouse` (``tfc train ...``).
"""

# the in-house checkpoints `tfc train reproduce` retrains from their committed records, in this order
# (the command is tfc.cli.train_inhouse's; the book's retraining page reads the list too)
REPRODUCED = ("nli-minilm", "alignscore-minilm", "qa-minilm")
