"""From cached scores and labels to per-dataset frames and tables.

* :mod:`tfc.results.dataset` scores a dataset through the cache and builds AUC tables;
* :mod:`tfc.results.tables` holds the per-dataset loops (AUC, accuracy, significance, ROC, bins) and the
  sampler :func:`~tfc.results.tables.sample_ids`;
* :mod:`tfc.results.own_files` reads, checks and scores a user's own files (``tfc score --input``);
  :mod:`tfc.results.own_eval` evaluates them (``tfc evaluate``: AUC, PR-AUC, BAcc, ECE, per-group) and
  :mod:`tfc.results.own_report` prints the report.
"""
