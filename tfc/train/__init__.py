"""Training pipelines for the in-house checkpoints (import the submodules; nothing heavy is imported here).

* :mod:`tfc.train.engine` -- the one training engine (``TrainConfig``, ``train``, resumable state, the run record);
* :mod:`tfc.train.pair_objective` -- its default objective, multi-head (3-way / binary / regression) pair
  classification (``build_model``, ``validate_frame``, ``evaluate_frame``, ``PairObjective``);
* :mod:`tfc.train.batches` -- pre-tokenised rows and their batches; :mod:`tfc.train.base_encoders` -- the base
  encoders and their portable names; :mod:`tfc.train.checkpoints` -- a checkpoint's dtype on disk and model card
  (``convert_checkpoint_dtype``, ``write_model_card``, ``record_eval_results``);
* :mod:`tfc.train.mix` -- the leakage-filtered training mix cast into the three label spaces (``build_mix``);
* :mod:`tfc.train.synthetic` -- spaCy FactCC-style synthetic pairs (``make_pairs``);
* :mod:`tfc.train.nli` -- ``tfc/nli-minilm`` (``train_nli``);
* :mod:`tfc.train.alignscore` -- ``tfc/alignscore-minilm`` training (``train_alignscore``; the inference
  code is :mod:`tfc.scorers.alignscore_model`);
* :mod:`tfc.train.frames` -- a training frame's required columns and content hashes;
* :mod:`tfc.train.qa` -- ``tfc/qa-minilm`` (``train_qa``), on the QA set of :mod:`tfc.train.qa_set` (``build_qa_set``);
* :mod:`tfc.train.distil` -- distilling a larger teacher into MiniLM: the leakage-filtered pool, the teacher's
  3-way labels (``label_pool``) and the student's frame of ``dist`` rows (the GPU job is :mod:`tfc.runs.distil`);
* :mod:`tfc.train.wecheck` -- WeCheck's fine-tuning (``train_wecheck``), on the weak pool of
  :mod:`tfc.train.wecheck_pool` (with :mod:`tfc.train.labelmodel`); its evaluation runs, :mod:`tfc.train.wecheck_eval`;
* the command line is :mod:`tfc.cli.train` / :mod:`tfc.cli.train_inhouse` (``tfc train ...``).
"""

# the in-house checkpoints `tfc train reproduce` retrains from their committed records, in this order
# (the command is tfc.cli.train_inhouse's; the book's retraining page reads the list too)
REPRODUCED = ("nli-minilm", "alignscore-minilm", "qa-minilm")
