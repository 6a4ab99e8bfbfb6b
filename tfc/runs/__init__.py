"""Scoring runs and their records: which checkpoint scored which dataset, when, and how fast.

* :mod:`tfc.runs.qgqa` runs the QG-QA scorers (QAGS, Q²) over their datasets.
"""
