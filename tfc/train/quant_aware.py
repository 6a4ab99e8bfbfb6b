"""Quantisation-aware training: the last steps of a run train the model through the int8 packing it ships in.

A delta release (:mod:`tfc.models.release`, ``--share-with BASE --delta``) stores every matrix the base holds as the
int8 quantisation of its difference from the base, every other matrix (a task head) as its own int8 quantisation,
and every 1-D tensor exactly. Packing after training moves each weight by up to half a quantisation step. Most
scores barely notice, but an extractive reader's answer can hang on a span margin of thousandths of a logit: the
QA reader's release flipped answers against its training output however fine the steps were (per row, per 16
columns), and so missed the release drift rule (:mod:`tfc.runs.release_drift`).

With ``TrainConfig.quant_aware_steps = N`` the last N optimizer steps run through that packing, with the usual
straight-through estimator: for each step's forward and backward passes every matrix the release quantises is
replaced by its packed value (``base + dequant(quant(W - base))``, :func:`tfc.models.release.packed_matrix`); the
gradients, taken there, update the full-precision weights that the optimiser keeps. After the last step the weights
are set to their packed values, so the final dev evaluation and the saved checkpoint are those of the packed model.
Packing that checkpoint again gives it back (the quantisation is idempotent up to float32 rounding): the release
*is* the training output.

Why by hand: torch's quantisation-aware training (``torch.ao.quantization``) fake-quantises module weights and
activations for its own int8 kernels; the release format quantises only weights, and only their difference from a
base, which its observers do not express.
"""
from __future__ import annotations

from contextlib import contextmanager


class PackedWeights:
    """The matrices of ``model`` that a delta release against ``base`` quantises, with their base tensors.

    A matrix is left out when the release would share it unchanged: frozen and equal to the base's, bit for bit
    (the word embeddings of a ``--freeze embeddings.word_embeddings`` run)."""

    def __init__(self, model, base: str):
        import torch

        from tfc.models import release
        from tfc.train.base_encoders import resolve_base

        state = release.base_state(str(resolve_base(base)))
        self.params = []
        for name, p in model.named_parameters():
            if p.dim() != 2 or not p.is_floating_point():
                continue
            key = release.base_key(name, state)
            b = state[key] if key is not None and tuple(state[key].shape) == tuple(p.shape) else None
            if b is not None and not p.requires_grad and torch.equal(p.detach().cpu(), b):
                continue
            self.params.append((name, p, None if b is None else b.to(p.device, torch.float32)))
        if not self.params:
            raise ValueError(f"quantisation-aware training: no matrix of the model would be quantised against {base!r}")

    def names(self) -> list[str]:
        return [n for n, _, _ in self.params]

    def _write_packed(self) -> None:
        import torch

        from tfc.models.release import packed_matrix

        with torch.no_grad():
            for _, p, b in self.params:
                p.copy_(packed_matrix(p.detach(), b))

    @contextmanager
    def active(self):
        """The model with its packed weights inside the block, its full-precision weights back after it (the
        gradients the block computed stay on the parameters)."""
        import torch

        kept = [p.detach().clone() for _, p, _ in self.params]
        self._write_packed()
        try:
            yield
        finally:
            with torch.no_grad():
                for (_, p, _), w in zip(self.params, kept):
                    p.copy_(w)

    def snap(self) -> None:
        """Set the weights to their packed values for good (the end of the run)."""
        self._write_packed()


def start_step(total_steps: int, quant_aware_steps: int) -> int | None:
    """The step from which a run trains through its packing (None: it never does); more quantisation-aware steps
    than the run has is an error."""
    if not quant_aware_steps:
        return None
    if quant_aware_steps > total_steps:
        raise ValueError(f"quant_aware_steps ({quant_aware_steps}) exceeds the run's {total_steps} steps")
    return total_steps - int(quant_aware_steps)


def check_resume(saved_step: int, saved_from: int | None, start: int | None) -> None:
    """A saved state resumes a run only if both trained alike up to it: a state saved before either run reached its
    quantisation-aware steps serves both (a plain run's state at step 1200 continues a run whose last 200 steps are
    quantisation-aware); one saved after does not."""
    inf = float("inf")
    agree_until = min(inf if saved_from is None else saved_from, inf if start is None else start)
    if saved_from != start and saved_step > agree_until:
        raise ValueError(f"the saved state (step {saved_step}) trained through the packing from step {saved_from}, "
                         f"this run does from step {start}: delete it or pass resume=False")
