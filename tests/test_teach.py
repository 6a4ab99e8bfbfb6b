"""tfc.book.teach: pipeline diagram geometry and the exercise convention."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from tfc.book import teach  # noqa: E402


def test_layout_centres_stacks():
    boxes = teach.layout(["a", ["b", "c", "d"], "e"])
    assert [[(x, y) for x, y, _ in st] for st in boxes] == [[(0.0, 0.0)], [(1.0, 1.0), (1.0, 0.0), (1.0, -1.0)],
                                                          [(2.0, 0.0)]]
    assert [lab for _, _, lab in boxes[1]] == ["b", "c", "d"]


@pytest.mark.parametrize("bad", [[], "abc", [[]], [["a", 3]], [None]])
def test_layout_rejects_bad_stages(bad):
    with pytest.raises((ValueError, TypeError)):
        teach.layout(bad)


def test_pipeline_draws_boxes_and_arrows():
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    fig = teach.pipeline([["x", "y"], "f", ["p", "q"]], title="t", notes=["in", None, "out"])
    ax = fig.axes[0]
    assert sum(isinstance(p, FancyBboxPatch) for p in ax.patches) == 5
    assert sum(isinstance(p, FancyArrowPatch) for p in ax.patches) == 2 + 2   # 2x1 + 1x2
    assert ax.get_title() == "t"
    with pytest.raises(ValueError):
        teach.pipeline(["a", "b"], notes=["only one"])


def test_every_named_pipeline_draws():
    for name in teach.PIPELINES:
        assert teach.pipeline_for(name).axes
    with pytest.raises(KeyError):
        teach.pipeline_for("nope")


def test_wrap_label():
    assert teach.wrap_label("threshold tuned on dev -> accuracy", 20) == "threshold tuned on\ndev -> accuracy"
    assert teach.wrap_label("a\nb") == "a\nb"


def test_exercise_markdown_pairs_with_hidden_solution():
    md = teach.exercise("Why?", "Because.", 1) + "\n" + teach.exercise("How?", "So.", 2)
    assert md.startswith("```{admonition} Exercise 1\nWhy?\n```")
    assert ":class: dropdown\nBecause." in md
    assert teach.check_exercises(md) == 2
    with pytest.raises(ValueError):
        teach.check_exercises("```{admonition} Exercise 1\nq\n```\n")
    with pytest.raises(ValueError):
        teach.exercise("", "x")
