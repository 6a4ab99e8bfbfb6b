"""Teaching helpers: small pipeline diagrams (matplotlib, offline) and the exercise convention.

**Diagrams.** :func:`pipeline` draws a left-to-right chain of boxes joined by arrows, optionally in
several rows (a list of lists) and with a note under each box::

    from tfc.book.teach import pipeline
    fig = pipeline([["grounding", "generated text"], ["scorer", "score per example"],
                    ["ROC AUC vs labels"]], title="TRUE: meta-evaluation")

A stage that is a list of labels is drawn as a stack of boxes that all feed the next stage. The
figure is plain matplotlib (no graphviz, no network), so it renders in any offline build.
:data:`PIPELINES` holds the diagrams of the book's chapters by name (``pipeline_for("true")``).

**Exercises.** Chapters end with two or three exercises written as MyST admonitions; the solution
sits in a dropdown admonition so that it is hidden until clicked (no extra package)::

    ```{admonition} Exercise 1
    Which ...?
    ```
    ```{admonition} Solution
    :class: dropdown
    ...
    ```

:func:`exercise` returns that markdown for a question and its solution (for chapters generated from
code); :func:`check_exercises` counts well-formed exercise/solution pairs in a markdown text.
"""
from __future__ import annotations

import re

# chapter name -> stages (each a label or a list of labels drawn as a stack), notes under stages
PIPELINES: dict[str, dict] = {
    "data": {
        "title": "Data: from raw files to examples",
        "stages": [["raw upstream files", "data/MANIFEST (sha256)"], "builders\n(labelling rules)",
                   "Examples\nid, grounding, generated, label", ["checks vs TRUE CSVs", "leakage filter"]],
    },
    "true": {
        "title": "TRUE: one protocol for every metric",
        "stages": [["grounding", "generated text"], "metric\n(score per example)",
                   ["ROC AUC per dataset", "threshold tuned on dev -> accuracy"], "paper vs ours (Δ)"],
    },
    "nli": {
        "title": "NLI scorer",
        "stages": [["grounding = premise", "generated = hypothesis"], "NLI classifier",
                   "P(entailment)", "score"],
    },
    "summac": {
        "title": "SummaC: sentence-level NLI",
        "stages": [["grounding sentences", "generated sentences"], "NLI on every pair",
                   "entailment matrix", ["ZS: max per column, mean", "Conv: histogram -> 1-D conv"]],
    },
    "alignscore": {
        "title": "AlignScore: chunks and claim sentences",
        "stages": [["grounding -> chunks (~350 tokens)", "claim -> sentences"], "alignment model\non every pair",
                   "max over chunks per sentence", "mean over sentences"],
    },
    "qgqa": {
        "title": "QAGS / Q²: ask and compare answers",
        "stages": ["generated text", "answer spans\n-> questions (QG)", ["answer from generated (QA)",
                                                                        "answer from grounding (QA)"],
                   "compare answers\n(F1 / NLI)", "mean over questions"],
    },
    "wecheck": {
        "title": "WeCheck: weak supervision",
        "stages": [["metric 1", "metric 2", "metric k"], "label model\n(weak labels)",
                   "noise-aware fine-tuning", "one fast scorer"],
    },
}


def _as_stack(stage) -> list[str]:
    if isinstance(stage, str):
        return [stage]
    if isinstance(stage, (list, tuple)) and stage and all(isinstance(s, str) for s in stage):
        return list(stage)
    raise TypeError(f"a pipeline stage is a label or a non-empty list of labels, got {stage!r}")


def wrap_label(label: str, width: int = 20) -> str:
    """Wrap each line of a box label at ``width`` characters (explicit newlines are kept)."""
    import textwrap

    return "\n".join(textwrap.fill(line, width) or line for line in label.split("\n"))


def layout(stages) -> list[list[tuple[float, float, str]]]:
    """Box centres ``(x, y, label)`` per stage: stage ``i`` at x = i, a stack of ``k`` boxes centred on y = 0
    with unit spacing. Exposed so that the geometry can be tested without drawing."""
    if not isinstance(stages, (list, tuple)) or not stages:
        raise ValueError("a pipeline needs at least one stage")
    out = []
    for i, st in enumerate(stages):
        labels = _as_stack(st)
        k = len(labels)
        out.append([(float(i), (k - 1) / 2 - j, lab) for j, lab in enumerate(labels)])
    return out


def pipeline(stages, title: str | None = None, notes=None, width: float | None = None, ax=None):
    """Draw stages left to right with arrows from every box of a stage to every box of the next.

    ``notes``: optional list (one string or None per stage) written under the stage.
    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    boxes = layout(stages)
    if notes is not None and len(notes) != len(boxes):
        raise ValueError(f"notes has {len(notes)} entries for {len(boxes)} stages")
    n = len(boxes)
    depth = max(len(b) for b in boxes)
    if ax is None:
        fig, ax = plt.subplots(figsize=(width or max(6.0, 2.3 * n), 1.0 + 0.75 * depth + (0.4 if notes else 0)))
    else:
        fig = ax.figure
    bw, bh, dx = 0.78, 0.6, 1.25            # box width/height in data units; stage spacing
    for i, stack in enumerate(boxes):
        for x, y, lab in stack:
            ax.add_patch(FancyBboxPatch((x * dx - bw / 2, y - bh / 2), bw, bh, boxstyle="round,pad=0.04",
                                        fc="#e8f0fa" if i not in (0, n - 1) else "#fdf3e1", ec="#35608f", lw=1.0,
                                        zorder=2))
            ax.text(x * dx, y, wrap_label(lab), ha="center", va="center", fontsize=7.5, zorder=3)
        if i + 1 < n:
            for _, y0, _l in stack:
                for x1, y1, _m in boxes[i + 1]:
                    ax.add_patch(FancyArrowPatch((i * dx + bw / 2 + 0.03, y0), (x1 * dx - bw / 2 - 0.03, y1),
                                                 arrowstyle="-|>", mutation_scale=10, color="#555555", lw=0.8,
                                                 zorder=1))
        if notes and notes[i]:
            low = min(y for _, y, _ in stack)
            ax.text(i * dx, low - bh / 2 - 0.2, notes[i], ha="center", va="top", fontsize=7, color="#555555")
    top = (depth - 1) / 2 + bh / 2 + 0.15
    ax.set_xlim(-bw / 2 - 0.1, (n - 1) * dx + bw / 2 + 0.1)
    ax.set_ylim(-top - (0.5 if notes else 0.05), top + (0.3 if title else 0.05))
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def pipeline_for(name: str, **kw):
    """The diagram of a chapter from :data:`PIPELINES`."""
    if name not in PIPELINES:
        raise KeyError(f"no pipeline {name!r}; known: {', '.join(PIPELINES)}")
    spec = PIPELINES[name]
    return pipeline(spec["stages"], title=kw.pop("title", spec["title"]), **kw)


def exercise(question: str, solution: str, number: int | str = "") -> str:
    """MyST markdown of one exercise with its solution hidden in a dropdown admonition."""
    if not question.strip() or not solution.strip():
        raise ValueError("an exercise needs a question and a solution")
    title = f"Exercise {number}".strip()
    return (f"```{{admonition}} {title}\n{question.strip()}\n```\n\n"
            f"```{{admonition}} Solution\n:class: dropdown\n{solution.strip()}\n```\n")


_EX = re.compile(r"```\{admonition\}\s*Exercise[^\n]*\n(.*?)```", re.S)
_SOL = re.compile(r"```\{admonition\}\s*Solution[^\n]*\n:class:\s*dropdown\s*\n(.*?)```", re.S)


def check_exercises(markdown: str) -> int:
    """Number of exercises in ``markdown``; raises ValueError when exercises and hidden solutions
    do not pair up (each exercise must be followed by a dropdown solution)."""
    ex, sol = _EX.findall(markdown), _SOL.findall(markdown)
    if len(ex) != len(sol):
        raise ValueError(f"{len(ex)} exercises but {len(sol)} hidden (dropdown) solutions")
    return len(ex)
