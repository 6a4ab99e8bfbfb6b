"""Question generators behind one interface (:class:`QuestionGenerator`): the offline rule-based :class:`RuleQG`
(the rule sets of :data:`RULE_SETS`) and any Hugging Face seq2seq checkpoint (:class:`Seq2SeqQG`), with the
input templates of the papers' QG models."""
from __future__ import annotations

from tfc.scorers.base import progress_bar
from tfc.scorers.qgqa.candidates import SPACY_MODEL, Candidate, parse
from tfc.scorers.qgqa.qg_rules_clause import clause_questions, repaired_clause_questions
from tfc.scorers.qgqa.qg_rules_sentence import sentence_questions

# The rule sets of the ``qg_rules`` config field. The keys are the names the score caches' signatures hold
# ("rule-qg-<key>" in the QG identity, and the config value itself): never rename them. One rule set is current:
# "v3", the repaired clause rules (the q2/qags DEFAULTS); "v1" and "v2" stay only while committed tables read
# caches scored with them.
RULE_SETS = {
    "v1": sentence_questions,           # the whole sentence's parse (the first committed caches)
    "v2": clause_questions,             # the answer's own clause (the scorer configs' and as-published default)
    "v3": repaired_clause_questions,    # the answer's own clause, repaired (current)
}


class QuestionGenerator:
    """Interface: ``generate(texts, answers) -> list[list[(question, score)]]``, one list per (text,
    answer) pair, best first, at most ``num_return`` long. ``answers`` are :class:`Candidate` objects (or
    plain strings, located in the text by the first case-sensitive match)."""

    name = "qg"

    def identity(self) -> str:
        raise NotImplementedError

    def generate(self, texts: list[str], answers: list, progress: bool = False) -> list[list[tuple[str, float]]]:
        raise NotImplementedError


def _as_candidate(text: str, a) -> Candidate | None:
    if isinstance(a, Candidate):
        return a
    if not isinstance(a, str):
        raise TypeError(f"an answer must be a Candidate or str, not {type(a).__name__}")
    i = text.find(a)
    return None if i < 0 or not a.strip() else Candidate(a, i, i + len(a), "")


class RuleQG(QuestionGenerator):
    """Offline rule-based QG with the rule set ``rules`` (a key of :data:`RULE_SETS`; default ``"v1"``,
    :func:`sentence_questions`). Scores: 0 for the moved question, -1 for the in-situ variant. Answers not found
    in the text get no question."""

    name = "rule"
    VERSION = "rule-qg-v1"     # the identity of the sentence rules ("v1", in the committed caches' signatures)

    def __init__(self, num_return: int = 1, rules: str = "v1"):
        if num_return < 1:
            raise ValueError("num_return must be >= 1")
        if rules not in RULE_SETS:
            raise ValueError(f"unknown rule set {rules!r}; use one of {tuple(RULE_SETS)}")
        self.num_return, self.rules = num_return, rules
        self._questions = RULE_SETS[rules]

    @property
    def version(self) -> str:
        return f"rule-qg-{self.rules}"

    def identity(self) -> str:
        return f"{self.version}+{SPACY_MODEL}"

    def generate(self, texts, answers, progress=False):
        if len(texts) != len(answers):
            raise ValueError(f"texts and answers differ in length: {len(texts)} != {len(answers)}")
        docs = parse(list(texts))
        out = []
        for doc, text, a in zip(docs, texts, answers):
            c = _as_candidate(text, a)
            if c is None:
                out.append([])
                continue
            qs = self._questions(doc, c.start, c.end)[: self.num_return]
            out.append([(q, -float(i)) for i, q in enumerate(qs)])
        return out


# QG input templates of the papers' checkpoints ({answer}, {context})
T5_AP_TEMPLATE = "answer: {answer}  context: {context}"   # mrm8488/t5-base-finetuned-question-generation-ap (Q²)
QAGS_TEMPLATE = "{context} [ANS] {answer}"                # QAGS's QG data (qg_utils.py: f"{txt} [ANS] {ans}")


class Seq2SeqQG(QuestionGenerator):
    """An HF seq2seq QG model. ``num_beams=1`` is greedy; ``num_return <= num_beams`` beams come back
    with their sequence scores (length-penalised log-probabilities). ``template`` receives
    ``{answer}`` and ``{context}``."""

    name = "seq2seq"

    def __init__(self, checkpoint: str, revision: str | None = None, num_beams: int = 1, num_return: int = 1,
                 max_new_tokens: int = 64, template: str = T5_AP_TEMPLATE,
                 strip_prefix: str = "question:", device: str | None = None, batch_size: int = 8,
                 max_input_length: int = 512):
        if num_return > num_beams:
            raise ValueError(f"num_return ({num_return}) cannot exceed num_beams ({num_beams})")
        self.checkpoint, self.revision = checkpoint, revision
        self.num_beams, self.num_return, self.max_new_tokens = num_beams, num_return, max_new_tokens
        self.template, self.strip_prefix = template, strip_prefix
        self.device, self.batch_size, self.max_input_length = device, batch_size, max_input_length
        self._model = None

    def identity(self) -> str:
        from tfc import models

        return models.identity(self.checkpoint, self.revision)

    def load(self):
        if self._model is None:
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

            from tfc import models

            path = models.resolve(self.checkpoint)
            self.tok = AutoTokenizer.from_pretrained(path, revision=self.revision)
            self._model = AutoModelForSeq2SeqLM.from_pretrained(path, revision=self.revision)
            self._device = models.resolve_device(self.device)
            self._model.to(self._device).eval()
        return self

    def generate(self, texts, answers, progress=False):
        import torch

        if len(texts) != len(answers):
            raise ValueError(f"texts and answers differ in length: {len(texts)} != {len(answers)}")
        self.load()
        prompts = []
        for t, a in zip(texts, answers):
            a = a.text if isinstance(a, Candidate) else a
            prompts.append(self.template.format(answer=a, context=t))
        uniq = list(dict.fromkeys(prompts))
        res: dict[str, list] = {}
        order = sorted(range(len(uniq)), key=lambda i: len(uniq[i]))
        batches = [order[s:s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        with torch.inference_mode():
            for b in progress_bar(batches, desc="qg", enabled=progress):
                enc = self.tok([uniq[i] for i in b], return_tensors="pt", padding=True, truncation=True,
                               max_length=self.max_input_length).to(self._device)
                gen = self._model.generate(**enc, num_beams=self.num_beams, num_return_sequences=self.num_return,
                                           max_new_tokens=self.max_new_tokens, do_sample=False,
                                           output_scores=True, return_dict_in_generate=True)
                seqs = self.tok.batch_decode(gen.sequences, skip_special_tokens=True)
                if self.num_beams > 1:
                    scores = gen.sequences_scores.float().cpu().numpy().tolist()
                else:
                    scores = [0.0] * len(seqs)
                for j, i in enumerate(b):
                    part = []
                    for k in range(self.num_return):
                        q = seqs[j * self.num_return + k].strip()
                        if self.strip_prefix and q.lower().startswith(self.strip_prefix):
                            q = q[len(self.strip_prefix):].strip()
                        part.append((q, float(scores[j * self.num_return + k])))
                    res[uniq[i]] = part
        return [res[p] for p in prompts]


def question_generator(backend: str = "rule", checkpoint: str | None = None, **kw) -> QuestionGenerator:
    """``"rule"`` (offline) or ``"seq2seq"`` (needs ``checkpoint``)."""
    if backend == "rule":
        return RuleQG(num_return=kw.get("num_return", 1))
    if backend == "seq2seq":
        if not checkpoint:
            raise ValueError("the seq2seq QG backend needs a checkpoint (hub id or local directory)")
        return Seq2SeqQG(checkpoint, **kw)
    raise ValueError(f"unknown QG backend {backend!r}; use 'rule' or 'seq2seq'")
