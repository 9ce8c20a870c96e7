"""The edits' argument checks of issue 21: a wrong node count, a member selected twice."""

import numpy as np
import pytest

from tenscontrol.model import catalog


@pytest.fixture(scope="module")
def tbar():
    return catalog.tbar("stedy", damping=1.0)


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("rows", [3, 5])
def test_with_nodes_of_another_node_count_names_the_shape(tbar, rows, keep):
    with pytest.raises(ValueError, match=rf"with_nodes: nodes must have shape \(4, 3\), one row "
                                         rf"per node of the structure, got shape \({rows}, 3\)"):
        tbar.with_nodes(np.zeros((rows, 3)), keep_rest_lengths=keep)


def test_with_nodes_of_the_right_shape_still_works(tbar):
    moved = tbar.with_nodes(tbar.nodes + 0.01)
    assert np.allclose(moved.nodes, tbar.nodes + 0.01)
    assert np.allclose(moved.string_rest_lengths, tbar.string_rest_lengths)


@pytest.mark.parametrize("edit, match", [
    (lambda s: s.with_strings([0, 0], damping=[1, 2]), "which: string 0 is selected 2 times"),
    (lambda s: s.with_strings([1, 2, 1], damping=1.0), "which: string 1 is selected 2 times"),
    (lambda s: s.with_bars([1, 1], radius=0.02), "which: bar 1 is selected 2 times"),
])
def test_a_member_selected_twice_is_refused(tbar, edit, match):
    with pytest.raises(ValueError, match=match + "; select each (string|bar) once"):
        edit(tbar)
