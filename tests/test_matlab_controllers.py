"""save_mat (MATLAB .mat via scipy.io) and save_controller / load_controller round trips."""

import json
import pathlib

import numpy as np
import pytest
import scipy.io

import tenscontrol as tc
from tenscontrol.model import catalog


@pytest.fixture(scope="module")
def prestressed():
    return tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure


@pytest.fixture(scope="module")
def model(prestressed):
    return tc.linearize(prestressed, kind="passive")


@pytest.fixture(scope="module")
def state_feedback(model):
    return tc.lqr(model, effort=1e-2).controller


@pytest.fixture(scope="module")
def output_feedback(prestressed):
    rng = np.random.default_rng(1)
    m = tc.measurement(prestressed, tc.Selection(nodes=[2], axes="xz", strings=[1]))
    nk, ny, nu = 3, m.n_signals, 2
    return tc.OutputFeedback(rng.normal(size=(nk, nk)), rng.normal(size=(nk, ny)),
                             rng.normal(size=(nu, nk)), rng.normal(size=(nu, ny)), m,
                             strings=[0, 2], gamma_ref=[10.0, 12.5], kind="control")


def cells(value):
    """A cell array of strings from scipy.io.loadmat as a list of str."""
    return [str(c[0]) if c.size else "" for c in value.reshape(-1)]


def test_linear_model_mat_round_trip(model, tmp_path):
    path = tc.save_mat(model, tmp_path / "model.mat")
    back = scipy.io.loadmat(path)
    sys = model.sys
    for name, expected in (("A", sys.A), ("B", sys.B), ("C", sys.C), ("D", sys.D),
                           ("Bu", model.B), ("E", model.E), ("q_ref", model.q[:, None]),
                           ("gamma_ref", model.gamma[:, None])):
        assert back[name].shape == expected.shape, name
        assert np.abs(back[name] - expected).max(initial=0.0) == 0.0, name
    assert cells(back["StateName"]) == list(sys.state_labels)
    assert cells(back["InputName"]) == list(sys.input_labels)
    assert cells(back["OutputName"]) == list(sys.output_labels)
    units = dict(zip(cells(back["InputName"]), cells(back["InputUnit"])))
    assert units["gamma0"] == "N/m" and units["fz2"] == "N"
    assert set(cells(back["StateUnit"])) == {"m", "m/s"}
    assert str(back["kind"][0]) == "passive" and str(back["type"][0]) == "LinearModel"


def test_state_feedback_mat_and_npz_round_trip(state_feedback, tmp_path):
    back = scipy.io.loadmat(tc.save_mat(state_feedback, tmp_path / "K.mat"))
    np.testing.assert_array_equal(back["D"], -state_feedback.K)
    np.testing.assert_array_equal(back["K"], state_feedback.K)
    assert back["A"].shape == (0, 0)
    assert cells(back["OutputName"]) == [f"gamma{k}" for k in state_feedback.strings]
    loaded = tc.load_controller(tc.save_controller(state_feedback, tmp_path / "K.npz"))
    assert type(loaded) is tc.StateFeedback and loaded.kind == state_feedback.kind
    for name in ("K", "q_ref", "strings", "gamma_ref"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(state_feedback, name))


def test_output_feedback_mat_and_npz_round_trip(output_feedback, tmp_path):
    back = scipy.io.loadmat(tc.save_mat(output_feedback, tmp_path / "H.mat"))
    # the command map u = ss(A, B, C, D) y_m = -K(s) y_m, the variables 1.0 wrote
    c = output_feedback
    for name, expected in (("A", c.AK), ("B", c.BK), ("C", -c.CK), ("D", -c.DK)):
        np.testing.assert_array_equal(back[name], expected)
    q, xc = c.measurement.q_ref + 1e-3, np.array([0.3, -0.2, 0.1])
    np.testing.assert_allclose(back["C"] @ xc + back["D"] @ c.measurement(q),
                               c.force_densities(0.0, q, 0 * q, xc), rtol=1e-14)
    np.testing.assert_array_equal(c.sys.C, back["C"])
    np.testing.assert_array_equal(c.sys.D, back["D"])
    assert cells(back["InputName"]) == ["x2", "z2", "l1"]
    assert cells(back["InputUnit"]) == ["m", "m", "m"]
    loaded = tc.load_controller(tc.save_controller(output_feedback, tmp_path / "H.npz"))
    assert type(loaded) is tc.OutputFeedback and loaded.kind == "control"
    for name in ("AK", "BK", "CK", "DK", "strings", "gamma_ref"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(output_feedback, name))
    assert loaded.measurement.names == output_feedback.measurement.names
    q = output_feedback.measurement.q_ref + 1e-3
    np.testing.assert_array_equal(loaded.measurement(q), output_feedback.measurement(q))


def test_what_cannot_be_saved_is_refused(model, tmp_path):
    with pytest.raises(TypeError, match="save_mat: expected a LinearModel, StateFeedback or "
                                        "OutputFeedback, got dict"):
        tc.save_mat({}, tmp_path / "x.mat")
    with pytest.raises(TypeError, match="save_controller: expected a StateFeedback, "
                                        "OutputFeedback, DiscreteFeedback or DiscreteLQG, got "
                                        "LinearModel"):
        tc.save_controller(model, tmp_path / "x.npz")
    other = tmp_path / "other.npz"
    np.savez(other, K=np.eye(2))
    with pytest.raises(ValueError, match=r"other.npz: not a tenscontrol.controller/2 file \(no "
                                         r"'header' entry\)"):
        tc.load_controller(other)


def _as_version_1(controller, path):
    """The .npz file tenscontrol 1.0 wrote for `controller`: format 1, in which OutputFeedback
    was positive feedback u = CK xc + DK y_m, so CK and DK are the negated ones of today."""
    from tenscontrol.control.storage import controller_arrays

    arrays = controller_arrays(controller)
    header = json.loads(str(arrays["header"]))
    assert header["format"] == "tenscontrol.controller/2"
    arrays["header"] = np.array(json.dumps({**header, "format": "tenscontrol.controller/1"}))
    if isinstance(controller, tc.OutputFeedback):
        arrays["CK"], arrays["DK"] = -controller.CK, -controller.DK
    np.savez(path, **arrays)
    return path


def test_controllers_saved_by_version_1_keep_their_meaning(output_feedback, state_feedback,
                                                           tmp_path):
    c = output_feedback
    old = _as_version_1(c, tmp_path / "H1.npz")
    with np.load(old) as data:    # as 1.0 wrote it: the command is +(CK xc + DK y_m)
        assert json.loads(str(data["header"]))["format"] == "tenscontrol.controller/1"
        CK1, DK1 = data["CK"], data["DK"]
    loaded = tc.load_controller(old)
    q, xc = c.measurement.q_ref + 1e-3, np.array([0.3, -0.2, 0.1])
    u_then = CK1 @ xc + DK1 @ c.measurement(q)
    np.testing.assert_array_equal(loaded.force_densities(0.0, q, 0 * q, xc), u_then)
    np.testing.assert_array_equal(loaded.state_derivative(0.0, q, 0 * q, xc),
                                  c.state_derivative(0.0, q, 0 * q, xc))
    for name in ("AK", "BK", "CK", "DK"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(c, name))
    s = tc.load_controller(_as_version_1(state_feedback, tmp_path / "K1.npz"))
    np.testing.assert_array_equal(s.K, state_feedback.K)     # u = -K (x - x*) in both


def test_a_file_written_by_version_1_0_loads_with_its_meaning():
    # written by tenscontrol 1.0's save_controller (the main checkout before issue 19) from
    # the output_feedback fixture above; 1.0 printed force_densities(0, q, 0, xc) =
    # [-0.18692005, -0.24102975] for q = q_ref + 1e-3, xc = [0.3, -0.2, 0.1]
    path = pathlib.Path(__file__).parent / "data" / "output_feedback_1.0.npz"
    with np.load(path) as data:
        assert json.loads(str(data["header"]))["format"] == "tenscontrol.controller/1"
        CK1, DK1 = data["CK"], data["DK"]
    c = tc.load_controller(path)
    q, xc = c.measurement.q_ref + 1e-3, np.array([0.3, -0.2, 0.1])
    u = c.force_densities(0.0, q, 0 * q, xc)
    np.testing.assert_allclose(u, [-0.18692005, -0.24102975], rtol=0, atol=1e-8)
    np.testing.assert_array_equal(u, CK1 @ xc + DK1 @ c.measurement(q))
    np.testing.assert_array_equal(c.CK, -CK1)
    assert "law='u = -(CK xc + DK y_m)'" in repr(c)
