"""SummaC-Conv (Laban et al., 2022): histograms of SummaC's NLI matrices, read by a learned head.

The matrices are SummaC-ZS's (:class:`tfc.scorers.summac._SummaCBase`). The head checkpoint
(``conv_checkpoint``) says which of two computations reads them, so a configuration's signature (which holds the
head's identity) names what ran:

* **The package's head** (as published: summac 0.0.4's ``SummaCConv.compute_histogram`` and ``forward``, step
  for step; held to the package by ``tests/test_reference_values.py`` and ``benchmarks/bench_peers.py``). For each
  of the first 10 generated sentences, the *counts* of grounding sentences whose P(entail) (and P(contradict)
  with ``nli_labels="ec"``) fall in each bin (``"percentile"``: the package's 23 uneven bins, or ``"evenN"``);
  fewer than 10 rows are padded with zero rows. A linear layer maps each row to one value; the values of the
  first *k* rows, *k* the number of non-zero rows, are averaged (``agg``), repeated three times and passed
  through a 3 -> 2 linear layer; the score is the softmax probability of class 1. An example without a sentence
  on either side is read as the package's empty image, one cell of zeros. The head is a directory holding
  either ``summac_conv.json`` (``"head": "package"``) with ``head.safetensors`` (:func:`train_package_head`),
  or the package's own state-dict file (``*.bin``, as the authors released it; its bins are read from its size).
* **tfc's head** (``conv.safetensors``): per generated unit the *fractions* of grounding units per even bin
  (``n_bins``), so documents of any length are comparable, every generated unit kept; a 1-D convolution with
  kernel size 1 maps each histogram to a logit; the mean logit over generated units through a sigmoid.
  Trained with :func:`train_conv` (binary cross-entropy, full batch).

The package trains its head on FactCC's synthetic pairs (AdamW, learning rate 1e-2, batches of 32, 5 epochs),
keeping the checkpoint with the best balanced accuracy on the SummaC benchmark's validation split.
:func:`train_package_head` runs the same loop on the pairs it is given and keeps the last epoch: the benchmark's
validation split holds documents of TRUE's evaluation sets, so tfc never selects on it.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfc import models
from tfc.scorers.summac import SummaCZS, SummaCZSConfig, _SummaCBase, _unit_counts

CONV_WEIGHTS = "conv.safetensors"           # tfc's head
PACKAGE_WEIGHTS = "head.safetensors"        # the package's head, saved by tfc
META = "summac_conv.json"
# summac 0.0.4's percentile bins ("based on the percentile of the distribution on some large number of summaries")
PERCENTILE_BINS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.07, 0.13, 0.37, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.955, 0.96,
                   0.965, 0.97, 0.975, 0.98, 0.985, 0.99, 0.995, 1.0)
PACKAGE_ROWS = 10                           # the package reads the first 10 generated sentences
AGGS = ("mean", "min", "max", "all")


@dataclass(frozen=True)
class SummaCConvConfig(SummaCZSConfig):
    checkpoint: str = "tfc/sent-minilm-v8-int8"
    conv_checkpoint: str = "tfc/summac-conv-package-minilm"   # the package's head, fitted on training-side pairs
    n_bins: int = 50           # tfc's head only: a package head carries its own bins
    nli_labels: str = "e"      # "e" or "ec": which probabilities are histogrammed

    def __post_init__(self):   # not SummaC-ZS's checks: the conv model reads neither score_type nor reduction
        self._check_granularity()
        object.__setattr__(self, "reduction", "cell")   # unused here: recorded as one value, so one signature
        if self.nli_labels not in ("e", "ec"):
            raise ValueError("nli_labels must be 'e' or 'ec'")


# -- the package's head ------------------------------------------------------------------------------------------
def package_bins(bins: str) -> list[float]:
    """The package's bin edges: ``"percentile"`` or ``"evenN"`` (``np.arange`` edges, as the package builds them)."""
    if bins == "percentile":
        return list(PERCENTILE_BINS)
    if bins.startswith("even") and bins[4:].isdigit() and int(bins[4:]) > 0:
        n = int(bins[4:])
        return list(np.arange(0, 1, 1 / n)) + [1.0]
    raise ValueError(f"bins must be 'percentile' or 'evenN'; got {bins!r}")


def package_histograms(mats: list[np.ndarray], cols: list[int], bins: str) -> np.ndarray:
    """Per example the package's (10, n_bins * len(cols)) histogram counts: one row per generated unit (the first
    10; zero rows pad), the counts over grounding units of each column's probabilities."""
    edges = package_bins(bins)
    width = (len(edges) - 1) * len(cols)
    out = np.zeros((len(mats), PACKAGE_ROWS, width), dtype=np.float32)
    for i, m in enumerate(mats):
        if m.shape[0] == 0 or m.shape[1] == 0:       # the package's image of an example without sentences
            m = np.zeros((1, 1, m.shape[2]))
        for j in range(min(m.shape[1], PACKAGE_ROWS)):
            out[i, j] = np.concatenate([np.histogram(m[:, j, c], range=(0, 1), bins=edges)[0] for c in cols])
    return out


def _package_module(width: int, agg: str = "mean"):
    import torch

    if agg not in AGGS:
        raise ValueError(f"agg must be one of {AGGS}; got {agg!r}")

    class PackageHead(torch.nn.Module):
        """summac 0.0.4's ``SummaCConv`` layers and ``forward``, without its imagers."""

        def __init__(self):
            super().__init__()
            self.mlp = torch.nn.Linear(width, 1)
            self.layer_final = torch.nn.Linear(3, 2)

        def forward(self, hist):                       # (N, 10, width) -> (N, 2) logits
            n = hist.shape[0]
            seq_lengths = (hist.sum(dim=-1) != 0.0).long().sum(dim=-1).tolist()
            mlp_outs = self.mlp(hist).reshape(n, PACKAGE_ROWS)
            feats = [_agg_features(out[:k], agg) if k > 0 else torch.zeros(3) for out, k in zip(mlp_outs, seq_lengths)]
            return self.layer_final(torch.stack(feats))

    return PackageHead()


def _agg_features(rs, agg: str):
    import torch

    if agg == "all":
        return torch.stack([rs.min(), rs.mean(), rs.max()])
    v = {"mean": rs.mean, "min": rs.min, "max": rs.max}[agg]()
    return torch.stack([v, v, v])


def _package_file_bins(width: int, nli_labels: str) -> str:
    """The bins of a head the package saved, from its input width (23 bins per label: its percentile bins)."""
    per = width // len(nli_labels)
    if per * len(nli_labels) != width:
        raise ValueError(f"a package head of input width {width} cannot read nli_labels={nli_labels!r}")
    return "percentile" if per == len(PERCENTILE_BINS) - 1 else f"even{per}"


def load_head(path: Path, config: SummaCConvConfig):
    """``(kind, module, meta)`` of the head stored at ``path``: kind ``"package"`` or ``"tfc"``."""
    import torch

    bins_files = sorted(path.glob("*.bin"))
    if not (path / META).is_file():
        if len(bins_files) != 1:
            raise ValueError(f"{path}: no {META}, and not one summac state-dict file (*.bin) either")
        state = torch.load(bins_files[0], map_location="cpu", weights_only=True)
        meta = {"head": "package", "agg": "mean",
                "bins": _package_file_bins(state["mlp.weight"].shape[1], config.nli_labels)}
        return "package", _load_state(_package_module(state["mlp.weight"].shape[1]), state, path), meta
    meta = json.loads((path / META).read_text())
    kind = meta.get("head", "tfc")
    keys = ("nli_labels", "grounding_granularity", "generated_granularity") + (("n_bins",) if kind == "tfc" else ())
    for k in keys:
        if meta["config"][k] != getattr(config, k):
            raise ValueError(f"{path}: head was trained with {k}={meta['config'][k]!r}, scorer has {getattr(config, k)!r}")
    from safetensors.torch import load_file

    if kind == "package":
        width = (len(package_bins(meta["bins"])) - 1) * len(config.nli_labels)
        return kind, _load_state(_package_module(width, meta["agg"]), load_file(str(path / PACKAGE_WEIGHTS)), path), meta
    module = _conv_module(config.n_bins * len(config.nli_labels))
    return kind, _load_state(module, load_file(str(path / CONV_WEIGHTS)), path), meta


def _load_state(module, state: dict, path: Path):
    try:
        module.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"{path}: the head's weights do not fit its configuration: {exc}") from None
    return module.eval()


# -- tfc's head --------------------------------------------------------------------------------------------------
def histogram_features(mats: list[np.ndarray], cols: list[int], n_bins: int) -> list[np.ndarray]:
    """Per example (n_generated_units, n_bins * len(cols)) fractions of grounding units per bin of each label
    column (:func:`_label_cols`); all zero for an example without a grounding unit."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    feats = []
    for m in mats:
        per_h = [np.concatenate([np.histogram(m[:, j, c], bins=edges)[0] / max(1, m.shape[0]) for c in cols])
                 for j in range(m.shape[1])]
        feats.append(np.asarray(per_h, dtype=np.float32).reshape(m.shape[1], n_bins * len(cols)))
    return feats


def _conv_module(n_in: int):
    import torch

    return torch.nn.Conv1d(n_in, 1, kernel_size=1)


def _conv_logits(conv, feats: list[np.ndarray]):
    import torch

    out = []
    for f in feats:
        x = torch.as_tensor(f).T.unsqueeze(0)          # (1, features, n_generated_units)
        if f.shape[0] == 0:                             # no generated unit: read as one empty histogram
            x = torch.zeros(1, f.shape[1], 1)
        out.append(conv(x).mean())
    return torch.stack(out)


def _label_cols(eng, nli_labels: str) -> list[int]:
    if "c" in nli_labels and eng.i_con is None:
        raise ValueError(f"nli_labels {nli_labels!r} needs a contradiction label; checkpoint has {eng.labels}")
    return [eng.i_ent] + ([eng.i_con] if "c" in nli_labels else [])


class SummaCConv(_SummaCBase):
    name = "summac-conv"
    config_cls = SummaCConvConfig
    output_range = (0.0, 1.0)

    def tag(self):
        return super().tag() + "-conv"

    def signature_fields(self):
        d = super().signature_fields()
        d["conv_checkpoint"] = models.identity(self.config.conv_checkpoint)
        return d

    def _load(self):
        super()._load()
        path = Path(models.resolve(self.config.conv_checkpoint))
        if not path.is_dir():
            raise ValueError(f"conv_checkpoint {self.config.conv_checkpoint!r} is not a directory")
        self.head_kind, self.head, self.head_meta = load_head(path, self.config)

    def _score(self, groundings, generations, batch_size, progress):
        import torch

        eng = self.load().engine
        c = self.config
        cols = _label_cols(eng, c.nli_labels)
        mats = self.matrices(groundings, generations, batch_size, progress)
        self._aux_keep = _unit_counts(self._shapes)   # chunking recorded, as for SummaC-ZS
        with torch.inference_mode():
            if self.head_kind == "package":
                hist = torch.as_tensor(package_histograms(mats, cols, self.head_meta["bins"]))
                return torch.softmax(self.head(hist), dim=-1)[:, 1].double().numpy()
            feats = histogram_features(mats, cols, c.n_bins)
            return torch.sigmoid(_conv_logits(self.head, feats)).double().numpy()


# -- training ----------------------------------------------------------------------------------------------------
def _training_matrices(cfg: SummaCConvConfig, datasets, split, sample, seed, frames, batch_size):
    import pandas as pd

    from tfc import data

    zs = SummaCZS(SummaCZSConfig(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(SummaCZSConfig)}))
    parts = list(frames.values()) if frames else [data.load(d, split=split, sample=sample, seed=seed) for d in datasets]
    df = pd.concat(parts, ignore_index=True)
    if df["label"].nunique() != 2:
        raise ValueError("training data needs both labels")
    mats = zs.matrices(df["grounding"].tolist(), df["generated"].tolist(), batch_size)
    trained_on = ([{"frame": k, "rows": int(len(v))} for k, v in frames.items()] if frames else
                  [{"dataset": d, "split": split, "sample": sample, "seed": seed} for d in datasets])
    return df, mats, zs.engine, trained_on


def _out_dir(out: str) -> Path:
    from tfc import config as tfc_config

    path = tfc_config.artifacts_dir() / out[4:] if out.startswith("tfc/") else Path(out)
    path.mkdir(parents=True, exist_ok=True)
    return path


def train_conv(checkpoint: str, datasets: list[str], out: str, split: str | None = None,
               sample: int | None = None, seed: int = 0, epochs: int = 200, lr: float = 1e-2,
               batch_size: int = 16, frames: dict | None = None, **overrides) -> dict:
    """Train tfc's head on labelled (dataset, split) examples, or on ``frames`` (name -> frame of grounding,
    generated, label: e.g. training-side dev pairs), and save it to ``out`` (a directory, or ``tfc/<name>`` -> the
    artifacts dir) as ``conv.safetensors`` with ``summac_conv.json``. Returns the metadata."""
    import torch

    cfg = SummaCConvConfig(checkpoint=checkpoint, **overrides)
    df, mats, eng, trained_on = _training_matrices(cfg, datasets, split, sample, seed, frames, batch_size)
    feats = histogram_features(mats, _label_cols(eng, cfg.nli_labels), cfg.n_bins)
    y = torch.tensor(df["label"].to_numpy(dtype="float32"))
    torch.manual_seed(seed)
    conv = _conv_module(cfg.n_bins * len(cfg.nli_labels))
    opt = torch.optim.Adam(conv.parameters(), lr=lr)
    lossf = torch.nn.BCEWithLogitsLoss()
    for _ in range(epochs):   # full batch: the features are tiny
        opt.zero_grad()
        loss = lossf(_conv_logits(conv, feats), y)
        loss.backward()
        opt.step()
    with torch.no_grad():
        p = torch.sigmoid(_conv_logits(conv, feats)).numpy()
    meta = {"head": "tfc", "config": cfg.to_dict(), "epochs": epochs, "lr": lr, "final_loss": float(loss.item())}
    return _save(conv, CONV_WEIGHTS, out, meta, checkpoint, trained_on, df, p)


def _save(module, weights: str, out: str, meta: dict, checkpoint: str, trained_on, df, p) -> dict:
    from safetensors.torch import save_file

    from tfc.meta import roc_auc

    path = _out_dir(out)
    save_file({k: v.detach().contiguous() for k, v in module.state_dict().items()}, str(path / weights))
    meta = {**meta, "nli_checkpoint": models.identity(checkpoint), "trained_on": trained_on,
            "n_examples": int(len(df)), "train_auc": roc_auc(df["label"].to_numpy(), p)}
    (path / META).write_text(json.dumps(meta, indent=1, default=str))
    return meta


def train_package_head(checkpoint: str, datasets: list[str], out: str, split: str | None = None,
                       sample: int | None = None, seed: int = 0, epochs: int = 5, lr: float = 1e-2,
                       train_batch_size: int = 32, bins: str = "percentile", agg: str = "mean",
                       batch_size: int = 16, frames: dict | None = None, **overrides) -> dict:
    """Train the package's head with ``summac.train_summac``'s loop (AdamW with weight decay 0.01 except on biases,
    cross-entropy over two classes, shuffled batches, examples without a sentence on either side left out) and
    save it to ``out`` as ``head.safetensors`` with ``summac_conv.json``; the last epoch is kept (module docstring).
    ``overrides`` are the scorer configuration's (granularities, splitter). Returns the metadata."""
    import torch

    cfg = SummaCConvConfig(checkpoint=checkpoint, **overrides)
    df, mats, eng, trained_on = _training_matrices(cfg, datasets, split, sample, seed, frames, batch_size)
    hist = torch.as_tensor(package_histograms(mats, _label_cols(eng, cfg.nli_labels), bins))
    keep = torch.tensor([m.shape[0] > 0 and m.shape[1] > 0 for m in mats])
    y = torch.tensor(df["label"].to_numpy(dtype="int64"))
    torch.manual_seed(seed)
    head = _package_module(hist.shape[-1], agg)
    decay = [p for n, p in head.named_parameters() if "bias" not in n]
    no_decay = [p for n, p in head.named_parameters() if "bias" in n]
    # transformers' AdamW, as the package builds it (eps 1e-6); torch's applies the decay before the step, not after
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, eps=1e-6)
    lossf = torch.nn.CrossEntropyLoss()
    idx = torch.nonzero(keep).flatten()
    for _ in range(epochs):
        for batch in idx[torch.randperm(len(idx))].split(train_batch_size):
            loss = lossf(head(hist[batch]), y[batch])
            loss.backward()
            opt.step()
            opt.zero_grad()
    with torch.no_grad():
        p = torch.softmax(head(hist), dim=-1)[:, 1].numpy()
    meta = {"head": "package", "bins": bins, "agg": agg, "config": cfg.to_dict(), "epochs": epochs, "lr": lr,
            "train_batch_size": train_batch_size, "trained_examples": int(len(idx)), "final_loss": float(loss.item())}
    return _save(head, PACKAGE_WEIGHTS, out, meta, checkpoint, trained_on, df, p)
