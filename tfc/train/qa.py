"""The in-house extractive QA model ``tfc/qa-minilm``: training on the one engine, evaluation, checkpoints (``tfc train qa``).

Its data set is :mod:`tfc.train.qa_set` (:func:`tfc.train.qa_set.build_qa_set`, :func:`tfc.train.qa_set.xquad_frame`).

**Model**: the offline MiniLM-L6 encoder with a fresh ``AutoModelForQuestionAnswering`` span head;
the no-answer target is position 0 (``[CLS]``) for both start and end, the SQuAD 2.0 convention that
:class:`tfc.scorers.qgqa.ExtractiveQA` decodes. Seeded, length-grouped batches, AdamW with linear
warm-up/decay, gradient clipping, optional time limit. Evaluation on the held-out slice: exact match and
F1 on answerable questions, accuracy on no-answer questions (:func:`evaluate_qa`).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tfc import config
from tfc.train.qa_set import COLUMNS

ANSWERABLE = {"self", "cross", "contrast", "ground", "long", "xquad"}


# --------------------------------------------------------------------------------------------------
# training

@dataclass
class QATrainConfig:
    name: str = "qa-minilm"
    base: str = "minilm"
    max_length: int = 384
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    max_steps: int = 2000
    max_minutes: float | None = None
    seed: int = 2022
    device: str = "cpu"
    num_threads: int | None = None
    grad_clip: float = 1.0
    log_every: int = 20
    length_pool: int = 8
    doc_stride: int | None = None  # window overlap in tokens; None = max_length // 3 (128 at 384), 0 = no windows
    eval_every: int = 0            # steps between dev-curve points (held-out pairs and XQuAD); 0 = end only
    checkpoint_every: int = 0      # steps between resumable state writes (0 = none)
    init: str | None = None        # start from a trained checkpoint's encoder (dir or tfc/<name>) instead of `base`
    dtype: str = "fp32"            # "bf16": autocast (fp32 weights), fast only where the CPU or GPU has native bf16
    freeze: tuple[str, ...] = ()   # parameter-name parts kept at the base's values (tfc.train.engine.freeze_parameters)
    quant_aware_steps: int = 0     # the last N steps train through the release's int8 delta packing (tfc.train.quant_aware)

    @property
    def stride(self) -> int:
        return self.max_length // 3 if self.doc_stride is None else int(self.doc_stride)

    def validate(self):
        for k in ("max_length", "batch_size", "max_steps"):
            if int(getattr(self, k)) < 1:
                raise ValueError(f"{k} must be >= 1; got {getattr(self, k)}")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ValueError("max_minutes must be > 0")
        if not 0 <= self.stride < self.max_length:
            raise ValueError(f"doc_stride must lie in [0, max_length); got {self.doc_stride}")
        for k in ("eval_every", "checkpoint_every"):
            if int(getattr(self, k)) < 0:
                raise ValueError(f"{k} must be >= 0; got {getattr(self, k)}")


def encode_examples(tok, frame: pd.DataFrame, max_length: int, stride: int | None = None):
    """Tokenise (question, context) with ``only_second`` truncation and map answers to token positions
    (0, 0 for no answer). Rows whose answer falls outside the kept context are returned as ``lost``
    (counted, never silently mislabelled).

    ``stride=None``: one feature per row (the context cut at ``max_length``); returns
    ``(enc, starts, ends, keep)``. ``stride`` = k > 0: **document stride**, as SQuAD readers are trained and as
    :class:`tfc.scorers.qgqa.ExtractiveQA` reads: a long context becomes windows of ``max_length`` tokens that
    overlap by ``k``; a window holding the whole answer is labelled with it, a window without it is labelled
    no-answer (position 0), the SQuAD 2.0 convention. Returns ``(enc, starts, ends, keep, owner)`` per window
    (``owner`` = the row it came from); a row is lost only when no window holds its whole answer (an answer
    longer than a window) or its question leaves no room for context."""
    if stride is None:
        enc = tok(frame["question"].tolist(), frame["context"].tolist(), truncation="only_second",
                  max_length=max_length, return_offsets_mapping=True)
        owner = np.arange(len(frame))
    else:
        if not 0 < stride < max_length:
            raise ValueError(f"stride must lie in (0, max_length); got {stride}")
        enc = tok(frame["question"].tolist(), frame["context"].tolist(), truncation="only_second",
                  max_length=max_length, stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True)
        owner = np.asarray(enc["overflow_to_sample_mapping"])
    a_starts = frame["answer_start"].to_numpy()
    a_texts = frame["answer_text"].tolist()
    starts, ends, has = [], [], []
    for i, r in enumerate(owner):
        a_start = int(a_starts[r])
        if a_start < 0:
            starts.append(0), ends.append(0), has.append(True)
            continue
        a_end = a_start + len(a_texts[r])
        s = e = None
        for t, (sid, (o1, o2)) in enumerate(zip(enc.sequence_ids(i), enc["offset_mapping"][i])):
            if sid != 1:
                continue
            if s is None and o1 <= a_start < o2:
                s = t
            if o1 < a_end <= o2:
                e = t
        ok = s is not None and e is not None and e >= s
        starts.append(s if ok else 0), ends.append(e if ok else 0), has.append(ok)
    has = np.array(has, dtype=bool)
    if stride is None:
        return enc, np.array(starts), np.array(ends), has
    # a row whose whole answer no window holds is dropped with all its windows (never taught as no-answer);
    # the other windows of an answerable row that lack the answer are no-answer windows
    found = np.zeros(len(frame), dtype=bool)
    found[owner[has]] = True
    return enc, np.array(starts), np.array(ends), found[owner], owner


class SpanObjective:
    """The extractive QA objective of the one training engine (:func:`tfc.train.engine.train`): rows are
    ``question, context, answer_text, answer_start``; the model is ``AutoModelForQuestionAnswering`` on the
    base encoder (a fresh span head); targets are token positions (0, 0 = no answer); the loss is the
    span head's own (mean of the start and end cross-entropies). Rows whose answer falls outside the kept
    context are dropped and counted (``lost``), never mislabelled."""

    kind = "qa-span"
    loss_doc = "mean of the start- and end-position cross-entropies (the span head's loss); no answer = position 0"

    def __init__(self, stride: int | None = None, dev_sets: dict[str, pd.DataFrame] | None = None):
        self.lost = 0
        self.kept_rows = 0
        self.stride = stride
        self.resume_salt = f"stride={stride}"
        # the dev curve: named frames in the QA set's columns (the held-out self-supervised pairs, XQuAD), read
        # by the model in training every ``eval_every`` steps (the engine calls evaluate with their concatenation)
        self.dev_sets = {k: v for k, v in (dev_sets or {}).items() if v is not None and len(v)}

    def validate(self, df: pd.DataFrame, cfg) -> pd.DataFrame:
        missing = set(COLUMNS) - set(df.columns) - {"pair"}
        if missing:
            raise ValueError(f"QA training frame lacks columns {sorted(missing)}")
        if len(df) == 0:
            raise ValueError("QA training frame is empty")
        return df.reset_index(drop=True)

    def split(self, data: pd.DataFrame, cfg):
        # the held-out slice is made of whole pairs by build_qa_set; the dev sets come in through the constructor
        if not self.dev_sets:
            return data, data.iloc[:0]
        return data, pd.concat([f.assign(_dev=k) for k, f in self.dev_sets.items()], ignore_index=True)

    def data_sha(self, data: pd.DataFrame) -> str:
        import hashlib

        h = hashlib.sha256()
        for r in data.loc[:, ["question", "context", "answer_text", "answer_start", "kind", "source"]].itertuples(index=False):
            h.update(json.dumps([r.question, r.context, r.answer_text, int(r.answer_start), r.kind, r.source],
                                ensure_ascii=False).encode() + b"\n")
        return h.hexdigest()

    def build(self, cfg):
        from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer
        from transformers.utils import logging as hf_logging

        from tfc import models
        from tfc.train.base_encoders import resolve_base

        path = models.resolve(cfg.init) if cfg.init else resolve_base(cfg.base)
        tok = AutoTokenizer.from_pretrained(path)
        v = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()   # "newly initialised qa_outputs" is expected from a plain encoder
        try:
            mcfg = AutoConfig.from_pretrained(path)
            # the span head has 2 outputs (start, end); a classifier's label map must not leak into it
            mcfg.id2label, mcfg.label2id = {0: "start", 1: "end"}, {"start": 0, "end": 1}
            model = AutoModelForQuestionAnswering.from_pretrained(path, config=mcfg)
        finally:
            hf_logging.set_verbosity(v)
        return model, tok

    def prepare(self, tok, train_df: pd.DataFrame, cfg, cache_dir):
        import torch

        from tfc.train.batches import Tokenized

        # a question that leaves no room for context (over half the window) cannot be read: dropped, counted
        q_len = np.array([len(x) for x in tok(train_df["question"].tolist(), add_special_tokens=False)["input_ids"]])
        fits = q_len <= cfg.max_length // 2
        frame = train_df.loc[fits].reset_index(drop=True)
        if self.stride:
            enc, st, en, keep, owner = encode_examples(tok, frame, cfg.max_length, self.stride)
            self.kept_rows = int(len(np.unique(owner[keep])))
        else:
            enc, st, en, keep = encode_examples(tok, frame, cfg.max_length)
            self.kept_rows = int(keep.sum())
        self.lost = int(len(train_df) - self.kept_rows)
        rows = np.flatnonzero(keep)
        ids = [np.asarray(enc["input_ids"][i], dtype=np.int32) for i in rows]
        tts = [np.asarray(enc["token_type_ids"][i], dtype=np.int8) for i in rows] if "token_type_ids" in enc else None
        offsets = np.concatenate([[0], np.cumsum([len(x) for x in ids])]).astype(np.int64)
        key = f"qa-{self.data_sha(train_df)[:16]}-{cfg.max_length}-{self.stride or 0}"
        toks = Tokenized(np.concatenate(ids) if ids else np.zeros(0, np.int32),
                         np.concatenate(tts) if tts else None, offsets,
                         int(sum(len(x) >= cfg.max_length for x in ids)), key)
        return toks, {"start": torch.as_tensor(st[rows]), "end": torch.as_tensor(en[rows])}

    def loss(self, model, feats: dict, targets: dict, idx, cfg, device, autocast):
        with autocast:
            out = model(**feats, start_positions=targets["start"][idx].to(device),
                        end_positions=targets["end"][idx].to(device))
        loss = out.loss.float()
        return loss, {"span": float(loss.detach())}

    def evaluate(self, model, tok, eval_df, cfg, device) -> dict:
        """F1 / EM / abstention per dev set (:func:`evaluate_qa`), read as the scorers read (windows of
        ``max_length`` with the run's stride); the engine records it on the dev curve."""
        if eval_df is None or not len(eval_df) or "_dev" not in eval_df:
            return {}
        from tfc.scorers.qgqa import ExtractiveQA

        was_training = model.training
        model.eval()
        qa = ExtractiveQA.from_model(model, tok, max_length=cfg.max_length,
                                     stride=self.stride or max(1, cfg.max_length // 4))
        out = {}
        for name, frame in eval_df.groupby("_dev", sort=False):
            ev = evaluate_qa(qa, frame.drop(columns="_dev"))
            out[name] = {k: ev[k] for k in ("f1", "exact_match", "answerable_abstained", "no_answer_accuracy")}
            out[name]["by_kind_f1"] = {k: v["f1"] for k, v in ev["by_kind"].items() if "f1" in v}
        model.train(was_training)
        return out

    def data_facts(self, data, train_df, eval_df, toks) -> dict:
        return {"rows": int(len(data)), "train_rows": self.kept_rows, "train_windows": int(len(toks.lengths)),
                "stride": self.stride, "answer_truncated_rows": self.lost,
                "sha256": self.data_sha(data), "by_kind": data["kind"].value_counts().sort_index().to_dict(),
                "median_tokens": float(np.median(toks.lengths)) if len(toks.lengths) else None}

    def save(self, model, tok, target: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(target, safe_serialization=True)
        tok.save_pretrained(target)

    def card(self, target: Path, summary: dict) -> None:
        pass                                 # train_qa writes the QA card once the held-out scores exist


def engine_config(cfg: QATrainConfig):
    """The one engine's configuration for a QA run (no pair heads: the span objective brings its own)."""
    from tfc.train.engine import TrainConfig

    return TrainConfig(name=cfg.name, base=cfg.base, tasks=(), max_length=cfg.max_length, batch_size=cfg.batch_size,
                       lr=cfg.lr, weight_decay=cfg.weight_decay, warmup_ratio=cfg.warmup_ratio, max_steps=cfg.max_steps,
                       max_minutes=cfg.max_minutes, seed=cfg.seed, device=cfg.device, num_threads=cfg.num_threads,
                       grad_clip=cfg.grad_clip, log_every=cfg.log_every, length_pool=cfg.length_pool,
                       loss_weights={}, eval_rows=0, dtype=cfg.dtype, eval_every=cfg.eval_every,
                       checkpoint_every=cfg.checkpoint_every, init=cfg.init, freeze=tuple(cfg.freeze),
                       quant_aware_steps=cfg.quant_aware_steps)


def train_qa(train_df: pd.DataFrame, cfg: QATrainConfig, out_dir=None, heldout: pd.DataFrame | None = None,
             data_report: dict | None = None, progress: bool = False, dev: pd.DataFrame | None = None) -> dict:
    """Train on the one engine, save (``out_dir`` or ``<artifacts>/<name>``), evaluate on ``heldout`` (the
    held-out self-supervised pairs) and on ``dev`` (a human-written dev set, e.g. :func:`tfc.train.qa_set.xquad_frame`);
    returns the summary."""
    from tfc.train import base_encoders, engine

    cfg.validate()
    target = Path(out_dir) if out_dir else config.artifacts_dir() / cfg.name
    # the dev curve reads the held-out pairs and the human-written dev set every eval_every steps
    obj = SpanObjective(stride=cfg.stride or None,
                        dev_sets={"heldout": heldout, "xquad": dev} if cfg.eval_every else None)
    res = engine.train(train_df, engine_config(cfg), out_dir=target, progress=progress, objective=obj,
                     resume=bool(cfg.checkpoint_every))
    ev, dev_ev = {}, {}
    if (heldout is not None and len(heldout)) or (dev is not None and len(dev)):
        from tfc.scorers.qgqa import ExtractiveQA

        qa = ExtractiveQA(str(target), max_length=cfg.max_length, stride=cfg.stride or max(1, cfg.max_length // 4),
                          device=cfg.device)
        ev = evaluate_qa(qa, heldout) if heldout is not None and len(heldout) else {}
        dev_ev = evaluate_qa(qa, dev) if dev is not None and len(dev) else {}
    summary = dict(res.summary)
    summary.update({
        "task": "extractive QA with no-answer ([CLS] = position 0)",
        "config": base_encoders.portable_config(asdict(cfg)), "engine_config": res.summary["config"],
        "data": data_report or {},
        "train_rows": int(len(train_df)), "train_rows_answer_truncated": obj.lost,
        "last_loss_mean20": float(np.mean(res.losses[-20:])) if res.losses else None,
        "heldout_eval": ev, "dev_eval_human": dev_ev,
    })
    (target / "training_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    write_qa_card(target, summary)
    return summary


def evaluate_qa(qa, frame: pd.DataFrame, batch_size: int = 64) -> dict:
    """EM and F1 (SQuAD) on answerable rows, accuracy on no-answer rows, and the overall SQuAD-2 style
    F1 (no-answer rows score 1 when the model abstains)."""
    from tfc.scorers.qgqa import squad_em, squad_f1

    res = qa.answer(frame["question"].tolist(), frame["context"].tolist(), batch_size=batch_size)
    pred = [r.text for r in res]
    has = (frame["answer_start"] >= 0).to_numpy()
    em = np.array([squad_em(g, p) for g, p in zip(frame["answer_text"], pred)])
    f1 = np.array([squad_f1(g, p) for g, p in zip(frame["answer_text"], pred)])
    abst = np.array([not r.has_answer for r in res])
    out = {"rows": int(len(frame)), "answerable": int(has.sum()), "no_answer": int((~has).sum()),
           "exact_match": float(em[has].mean()) if has.any() else None,
           "f1": float(f1[has].mean()) if has.any() else None,
           "answerable_abstained": float(abst[has].mean()) if has.any() else None,
           "no_answer_accuracy": float(abst[~has].mean()) if (~has).any() else None,
           "overall_f1": float(np.where(has, f1, abst).mean()) if len(frame) else None}
    kinds = {}
    for k, g in frame.assign(_f1=f1, _ab=abst).groupby("kind"):
        kinds[k] = {"rows": int(len(g)), "f1" if k in ANSWERABLE else "abstained":
                    float(g["_f1"].mean()) if k in ANSWERABLE else float(g["_ab"].mean())}
    out["by_kind"] = kinds
    return out


def write_qa_card(ckpt_dir, summary: dict) -> Path:
    cfg = summary["config"]
    ev = summary.get("heldout_eval") or {}
    lines = ["---", "library_name: transformers", "pipeline_tag: question-answering", "tags: [extractive-qa, squad2-style, tfc]", "---",
             f"# {summary['name']}", "",
             "In-house extractive QA model of the tfc project (no-answer = the [CLS] position), trained offline on "
             "a self-supervised QA set made with rule-based questions from training-side text only "
             "(leakage-filtered; see `tfc.train.qa`). Loads with `AutoModelForQuestionAnswering`.", "",
             "## Training", "",
             f"- base: `{summary['base_model']}`; steps {summary['steps']} ({summary['stopped_by']}), batch "
             f"{cfg['batch_size']}, lr {cfg['lr']}, max length {cfg['max_length']}, seed {cfg['seed']}"
             + (f"; frozen: {', '.join(cfg['freeze'])}" if cfg.get("freeze") else "")
             + (f"; the last {cfg['quant_aware_steps']} steps trained through the release's int8 delta packing, so "
                "these weights are the packed model's" if cfg.get("quant_aware_steps") else ""),
             f"- {summary['train_rows']} training rows ({summary['train_rows_answer_truncated']} lost to truncation), "
             f"{summary['examples_per_second']} examples/s, {summary['train_seconds']} s on {summary['device']} "
             f"({summary['torch_threads']} threads)", "",
             "## Data", "", "```json", json.dumps({k: v for k, v in (summary.get("data") or {}).items() if k != "leakage"},
                                                 indent=1), "```", "",
             "## Held-out evaluation", ""]
    if ev:
        def f(x):
            return "n/a" if x is None else f"{x:.3f}"

        lines += [f"- exact match {f(ev['exact_match'])}, F1 {f(ev['f1'])} on {ev['answerable']} answerable questions",
                  f"- no-answer accuracy {f(ev['no_answer_accuracy'])} on {ev['no_answer']} unanswerable questions",
                  "", "```json", json.dumps(ev.get("by_kind", {}), indent=1), "```"]
    else:
        lines += ["none"]
    dev = summary.get("dev_eval_human") or {}
    if dev:
        lines += ["", "## Human-written dev set (XQuAD-English, never trained on)", "",
                  f"- exact match {dev['exact_match']:.3f}, F1 {dev['f1']:.3f} on {dev['answerable']} questions; "
                  f"abstained on {dev['answerable_abstained']:.3f} of them"]
    p = Path(ckpt_dir) / "README.md"
    p.write_text("\n".join(lines) + "\n")
    return p


def snapshot_from_state(state_path, like, out_dir, dev: pd.DataFrame | None = None, note: str = "") -> dict:
    """A checkpoint from a QA run's resumable state (``resume_state.pt`` copied during the run): the weights at
    that step, with the architecture and tokenizer of ``like`` (the run's saved checkpoint). Evaluated on
    ``dev`` (e.g. XQuAD-English) when given; writes ``training_summary.json`` (step, examples seen, the dev
    scores, ``note``) and returns it. A weaker reader of the same run, for the QAGS Table 2 analogue."""
    import torch
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    from tfc import models

    state = torch.load(state_path, map_location="cpu", weights_only=True)
    like_name, like = str(like), models.resolve(str(like))
    model = AutoModelForQuestionAnswering.from_config(AutoConfig.from_pretrained(like))
    model.load_state_dict(state["model"])
    tok = AutoTokenizer.from_pretrained(like)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    st = state["st"]
    summary = {"name": f"tfc/{out.name}", "snapshot_of": like_name, "steps": int(st["step"]),
               "examples_seen": int(st["examples"]), "train_seconds": round(float(st["train_s"]), 1), "note": note,
               "stopped_by": "snapshot", "dev_eval_human": {}}
    if dev is not None and len(dev):
        from tfc.scorers.qgqa import ExtractiveQA

        cfg = json.loads((Path(like) / "training_summary.json").read_text())["config"]
        run = QATrainConfig(**{k: v for k, v in cfg.items() if k in QATrainConfig.__dataclass_fields__})
        qa = ExtractiveQA(str(out), max_length=run.max_length, stride=run.stride or max(1, run.max_length // 4))
        summary["dev_eval_human"] = evaluate_qa(qa, dev)
    (out / "training_summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return summary


def make_tiny_qa(path, seed: int = 0) -> Path:
    """A tiny random-weight BERT extractive QA checkpoint (tests and smoke runs; its answers are noise)."""
    import torch
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    from tfc.models.tiny import make_tiny_classifier

    path = Path(path)
    make_tiny_classifier(path, seed=seed, max_position=256)
    cfg = AutoConfig.from_pretrained(path)
    cfg.id2label, cfg.label2id = {0: "start", 1: "end"}, {"start": 0, "end": 1}
    torch.manual_seed(seed)
    model = AutoModelForQuestionAnswering.from_config(cfg).eval()
    tok = AutoTokenizer.from_pretrained(path)
    for f in path.glob("*.safetensors"):
        f.unlink()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
