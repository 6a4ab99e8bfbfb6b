"""SummaC (Laban et al., 2022) as used in TRUE: SummaC-ZS, and the NLI matrices SummaC-Conv reads, on any NLI
checkpoint.

Both build, per example, an NLI matrix over *grounding units x generated units* (units set by the
granularities), reusing :class:`tfc.scorers.nli.NLIEngine`: all (unit, unit) pairs of a call are
deduplicated (the same grounding sentence paired with the same generated sentence is scored once),
sorted by length and batched across examples, with the attention mask.

* **SummaC-ZS** as published (the ``as-published`` preset: summac 0.0.4's ``SummaCZS`` step for step, held to
  the package within 1e-4 by ``benchmarks/bench_peers.py``): both texts split into sentences, sentences of ten
  characters or fewer dropped (``sentence_splitter="summac"``); per generated sentence, the largest P(entail)
  over grounding sentences minus the largest P(contradict) (``score_type="e-c"``, ``reduction="package"``); the
  mean over generated sentences; an example left without a sentence on either side scores 0. ``"e"`` uses the
  entailment probability only. Output range [-1, 1] (``e-c``) or [0, 1] (``e``).
  tfc's own reading (the ``improved`` preset) keeps every sentence and takes the largest P(entail) -
  P(contradict) of one grounding unit (``reduction="cell"``).
  Steps of the package not taken: NLTK's punkt splitter (not available offline; spaCy's sentence recogniser
  instead), the first 100 grounding sentences only (tfc reads all), pairs cut at 500 tokens (tfc chunks an
  over-long unit instead), fp16 on a GPU (tfc's ``dtype`` decides). ``2sents`` and ``paragraph`` are tfc's
  (non-overlapping sentence pairs; paragraphs at blank lines), not the package's.
* **SummaC-Conv** reads the same matrices through a learned head: :mod:`tfc.scorers.summac_conv`.

Granularities: grounding ``sentence | 2sents | window12 | paragraph | document``, generated
``sentence | 2sents | document``; ``window12`` (grounding only) reads every sentence and every pair of
adjacent sentences, so a fact split over two sentences can be found. Any unit longer than the model's budget
is chunked at sentence/token boundaries (never truncated), see :mod:`tfc.text.chunking`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfc import models
from tfc.scorers.base import ModelScorer, ScorerConfig

G_GRAN = ("sentence", "2sents", "window12", "paragraph", "document")
H_GRAN = ("sentence", "2sents", "document")


def _units(texts: list[str], gran: str, splitter: str) -> list[list[str]]:
    """Each text's units. A text the splitter returns no sentence for is one unit, except with the ``"summac"``
    splitter, which drops short sentences as summac 0.0.4 does: there it has no unit (and the example scores 0)."""
    from tfc.text.sentences import DROP_SHORT, resolve_splitter, split_many

    if gran == "document":
        return [[t] for t in texts]
    if gran == "paragraph":
        return [[p.strip() for p in t.split("\n\n") if p.strip()] or [t] for t in texts]
    sents = split_many(texts, splitter)
    fallback = not resolve_splitter(splitter).endswith(DROP_SHORT)   # a text without sentences is one unit
    if gran == "sentence":
        units = sents
    elif gran == "window12":
        units = [s + [" ".join(s[i:i + 2]) for i in range(len(s) - 1)] for s in sents]
    else:
        units = [[" ".join(s[i:i + 2]) for i in range(0, len(s), 2)] for s in sents]
    return [u or ([t] if fallback else []) for u, t in zip(units, texts)]


@dataclass(frozen=True)
class SummaCZSConfig(ScorerConfig):
    checkpoint: str = "tfc/nli-minilm"
    revision: str | None = None
    label_names: tuple[str, ...] | None = None
    grounding_granularity: str = "sentence"
    generated_granularity: str = "sentence"
    score_type: str = "e-c"
    max_length: int | None = None
    min_chunk_tokens: int = 32
    # "summac" (as published): tfc's splitter, then summac 0.0.4's rule, sentences of <= 10 characters dropped
    # (tfc.text.sentences); "auto": every sentence kept (the reading tfc's tables were scored with)
    sentence_splitter: str = "summac"
    clean_claims: bool = False     # AlignScore-style cleaning of the generated text (tfc.text.claims)
    dtype: str = "float32"
    batch_size: int = 16
    device: str | None = None
    # How "e-c" reduces the (grounding unit x generated unit) matrices to one score per generated unit:
    # "package" (as published: what the reference code, ``summac`` 0.0.4 ``SummaCZS.image2score``, computes):
    # max_g P(e) - max_g P(c), each maximum taken separately; "cell": the maximum over grounding units of
    # P(e) - P(c) taken per cell, so the entailing and the contradicting evidence must be the same unit (the
    # reading tfc's in-house models were scored with). With score_type "e" the two are one computation, and the
    # configuration records it as "cell".
    reduction: str = "package"
    # How the per-generated-unit scores become one score: "mean" (SummaC's) or "min" (the weakest generated
    # unit decides). Chosen per model on training-side dev data (tfc.runs.aggregation), never on TRUE.
    generated_reduction: str = "mean"
    calibration: str | None = None     # a shipped calibration map tfc/<name> (tfc.scorers.calibration)

    def __post_init__(self):
        self._check_granularity()
        if self.score_type not in ("e-c", "e"):
            raise ValueError("score_type must be 'e-c' or 'e'")
        if self.reduction not in ("cell", "package"):
            raise ValueError(f"reduction must be 'cell' or 'package'; got {self.reduction!r}")
        if self.score_type == "e":   # max P(e) either way: one configuration, one signature
            object.__setattr__(self, "reduction", "cell")
        if self.generated_reduction not in ("mean", "min"):
            raise ValueError(f"generated_reduction must be 'mean' or 'min'; got {self.generated_reduction!r}")

    def _check_granularity(self):
        if self.grounding_granularity not in G_GRAN:
            raise ValueError(f"grounding_granularity must be one of {G_GRAN}")
        if self.generated_granularity not in H_GRAN:
            raise ValueError(f"generated_granularity must be one of {H_GRAN}")


class _SummaCBase(ModelScorer):
    def tag(self):
        c = self.config
        return f"{models.short_name(c.checkpoint)}-{c.grounding_granularity[:4]}-{c.generated_granularity[:4]}"


    def _load(self):
        from tfc.scorers.nli import NLIEngine

        c = self.config
        self.engine = NLIEngine(c.checkpoint, c.revision, c.label_names, c.max_length, c.dtype, c.device)

    def matrices(self, groundings, generations, batch_size=16, progress=False) -> list[np.ndarray]:
        """Per example an array (n_grounding_units, n_generated_units, n_labels) of class probabilities."""
        from tfc.text.chunking import chunk_many
        from tfc.text.sentences import DROP_SHORT, resolve_splitter

        self.load()
        c, eng = self.config, self.engine
        if c.clean_claims:
            from tfc.text.claims import clean_claims

            generations = clean_claims(list(generations))
        h_units = _units(list(generations), c.generated_granularity, c.sentence_splitter)
        flat_h = [h for hs in h_units for h in hs]
        flat_h, budgets, _ = eng.hyp_budget(flat_h, c.min_chunk_tokens)
        g_units = _units(list(groundings), c.grounding_granularity, c.sentence_splitter)
        # an over-long unit is cut at the splitter's sentence ends, short sentences included (no text is lost)
        chunk_splitter = resolve_splitter(c.sentence_splitter).removesuffix(DROP_SHORT)
        # any grounding unit that does not fit next to the longest hypothesis of its example is chunked
        pos, g_final = 0, []
        flat_units, owners = [], []
        for i, hs in enumerate(h_units):
            b = min(budgets[pos:pos + len(hs)], default=None)
            pos += len(hs)
            if b is None:          # no generated unit: no pair (summac 0.0.4 scores the example 0)
                continue
            for u in g_units[i]:
                flat_units.append(u)
                owners.append((i, b))
        g_final = [[] for _ in groundings]
        for b in sorted({o[1] for o in owners}):
            idx = [k for k, o in enumerate(owners) if o[1] == b]
            for k, ch in zip(idx, chunk_many([flat_units[k] for k in idx], eng.tok, b, splitter=chunk_splitter)):
                flat_units[k] = ch.chunks
        for k, (i, _) in enumerate(owners):
            g_final[i].extend(flat_units[k])
        pairs, shape = [], []
        pos = 0
        for i, hs in enumerate(h_units):
            hh = flat_h[pos:pos + len(hs)]
            pos += len(hs)
            shape.append((len(g_final[i]), len(hh)))
            pairs += [(g, h) for g in g_final[i] for h in hh]
        probs = eng.probs(pairs, batch_size, progress)
        out, k = [], 0
        for ng, nh in shape:
            out.append(probs[k:k + ng * nh].reshape(ng, nh, probs.shape[1]))
            k += ng * nh
        self._shapes = shape
        return out


class SummaCZS(_SummaCBase):
    name = "summac-zs"
    config_cls = SummaCZSConfig

    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        self.output_range = (-1.0, 1.0) if self.config.score_type == "e-c" and not self.calibrated else (0.0, 1.0)

    def _score(self, groundings, generations, batch_size, progress):
        eng = self.load().engine
        if self.config.score_type == "e-c" and eng.i_con is None:
            raise ValueError(f"score_type 'e-c' needs a contradiction label; checkpoint has {eng.labels}")
        mats = self.matrices(groundings, generations, batch_size, progress)
        out = np.empty(len(mats))
        for i, m in enumerate(mats):
            out[i] = reduce_zs(m, eng.i_ent, eng.i_con if self.config.score_type == "e-c" else None,
                               self.config.reduction, self.config.generated_reduction)
        self._aux_keep = _unit_counts(self._shapes)
        return out


def reduce_zs(m: np.ndarray, i_ent: int, i_con: int | None, reduction: str = "cell",
              generated_reduction: str = "mean") -> float:
    """One SummaC-ZS score from ``m[grounding unit, generated unit, label]``: per generated unit the best
    grounding unit, then the mean (or the minimum) over generated units.

    ``i_con=None`` uses the entailment probability only (score_type "e"). An example without a grounding or a
    generated unit scores 0.0, as summac 0.0.4's empty image does."""
    if m.shape[0] == 0 or m.shape[1] == 0:
        return 0.0
    ent = m[:, :, i_ent]
    if i_con is None:
        per_unit = ent.max(axis=0)
    elif reduction == "package":
        per_unit = ent.max(axis=0) - m[:, :, i_con].max(axis=0)
    else:
        per_unit = (ent - m[:, :, i_con]).max(axis=0)
    return float(per_unit.min() if generated_reduction == "min" else per_unit.mean())


def _unit_counts(shapes) -> dict:
    """Cache columns: grounding units (after chunking) and generated units per example."""
    return {"aux_n_grounding_units": np.array([s[0] for s in shapes], dtype=np.int32),
            "aux_n_generated_units": np.array([s[1] for s in shapes], dtype=np.int32)}
