"""Property-based tests of saved trajectory and controller files (hypothesis, issue 21).

- valid files round-trip: random trajectories (lengths, values, NaN and inf included) and
  random StateFeedback / OutputFeedback controllers load back bit for bit;
- a file cut at any length, or with any byte changed, either loads equal to what was saved
  (a change in a field nothing reads, e.g. a zip timestamp) or raises a one-line ValueError
  naming the file;
- an entry replaced by an array of another type or dimension raises a ValueError naming the
  file and the entry.

Example counts are small and explicit (the module runs in a few seconds).
"""

import dataclasses
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenscontrol as tc
from tenscontrol.model import catalog
from tenscontrol.simulation.trajectory_io import ARRAY_KEYS
from depth import examples

QUICK = settings(max_examples=examples(40), deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow,
                                        HealthCheck.function_scoped_fixture])

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
FINITE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@pytest.fixture(scope="module")
def base():
    return tc.simulate(catalog.tbar("stedy", damping=1.0), 0.05)


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as tmp:
        yield tmp


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@st.composite
def trajectories(draw, base):
    """The base trajectory cut to a random length with random values in every array."""
    nt = draw(st.integers(1, len(base.t)))
    arrays = {key: draw(hnp.arrays(np.float64, (nt,) + getattr(base, key).shape[1:],
                                   elements=ANY_FLOAT)) for key in ARRAY_KEYS}
    return dataclasses.replace(base, **arrays, E0=draw(FINITE))


@st.composite
def controllers(draw):
    """A random StateFeedback or OutputFeedback of the T-bar's 4 nodes."""
    s = catalog.tbar("stedy", damping=1.0)
    nq, nu = 3 * s.n_nodes, draw(st.integers(1, 4))
    strings = np.array(draw(st.lists(st.integers(0, 3), min_size=nu, max_size=nu, unique=True)))
    common = dict(strings=strings, gamma_ref=draw(hnp.arrays(np.float64, nu, elements=FINITE)),
                  kind=draw(st.sampled_from(["passive", "control"])))
    if draw(st.booleans()):
        return tc.StateFeedback(K=draw(hnp.arrays(np.float64, (nu, 2 * nq), elements=FINITE)),
                                q_ref=s.nodes.reshape(-1), **common)
    m = tc.measurement(s, tc.Selection(nodes=[2, 3], axes="xz", strings=[0]))
    nk, ny = draw(st.integers(0, 3)), m.n_signals
    AK, BK, CK, DK = (draw(hnp.arrays(np.float64, shape, elements=FINITE))
                      for shape in ((nk, nk), (nk, ny), (nu, nk), (nu, ny)))
    return tc.OutputFeedback(AK, BK, CK, DK, measurement=m, **common)


def controller_fields(c) -> dict:
    out = {f.name: getattr(c, f.name) for f in dataclasses.fields(c) if f.name != "measurement"}
    if isinstance(c, tc.OutputFeedback):
        out.update({f"m_{f.name}": getattr(c.measurement, f.name)
                    for f in dataclasses.fields(c.measurement)})
    return out


def assert_same_controller(a, b):
    assert type(a) is type(b)
    fa, fb = controller_fields(a), controller_fields(b)
    assert fa.keys() == fb.keys()
    for key in fa:
        if isinstance(fa[key], (str, tuple)):
            assert fa[key] == fb[key], key
        else:
            assert same_bits(fa[key], fb[key]), key


def test_trajectories_round_trip(base, folder):
    @QUICK
    @given(trajectories(base))
    def check(traj):
        path = os.path.join(folder, "t.npz")
        traj.save(path)
        back = tc.load_trajectory(path)
        for key in ARRAY_KEYS:
            assert same_bits(getattr(traj, key), getattr(back, key)), key
        assert back.E0 == traj.E0 and back.stats == traj.stats and back.bars == traj.bars

    check()


def test_controllers_round_trip(folder):
    @QUICK
    @given(controllers())
    def check(controller):
        path = os.path.join(folder, "k.npz")
        tc.save_controller(controller, path)
        assert_same_controller(controller, tc.load_controller(path))

    check()


def load_or_refuse(load, path):
    """What `load` gives for `path`: the object, or None after a clean ValueError."""
    try:
        return load(path)
    except ValueError as exc:
        message = str(exc)
        assert type(exc) is ValueError and message.startswith(f"{path}: "), message
        assert "\n" not in message and exc.__cause__ is None
        return None


def damaged(path, data: bytes, name: str) -> str:
    out = os.path.join(os.path.dirname(path), name)
    with open(out, "wb") as f:
        f.write(data)
    return out


@pytest.mark.parametrize("which", ["trajectory", "controller"])
def test_cut_or_changed_files_load_equal_or_are_refused(base, folder, which):
    path = os.path.join(folder, f"{which}.npz")
    if which == "trajectory":
        base.save(path)
        load = tc.load_trajectory

        def same(a):
            return all(same_bits(getattr(a, k), getattr(base, k)) for k in ARRAY_KEYS)
    else:
        s = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
        original = tc.lqr(tc.linearize(s, kind="passive"), effort=1e-2).controller
        tc.save_controller(original, path)
        load = tc.load_controller

        def same(a):
            assert_same_controller(a, original)
            return True
    with open(path, "rb") as f:
        data = f.read()

    @QUICK
    @given(st.integers(0, len(data) - 1), st.integers(0, len(data) - 1), st.integers(1, 255))
    def check(cut, where, flip):
        assert load_or_refuse(load, damaged(path, data[:cut], "cut.npz")) is None
        changed = bytearray(data)
        changed[where] ^= flip
        result = load_or_refuse(load, damaged(path, bytes(changed), "changed.npz"))
        assert result is None or same(result)

    check()


WRONG = {"text": np.array(["a", "b"]), "complex": np.array([1j, 2.0]),
         "pickled": np.array([None, 1], dtype=object), "bools": np.array([True, False]),
         "scalar": np.array(2.5), "3-d": np.zeros((1, 2, 3, 1))}


@pytest.mark.parametrize("which", ["trajectory", "controller"])
def test_an_entry_of_another_type_is_named(base, folder, which):
    path = os.path.join(folder, f"{which}-entries.npz")
    if which == "trajectory":
        base.save(path)
        load = tc.load_trajectory
    else:
        tc.save_controller(tc.StateFeedback(K=np.ones((1, 24)), q_ref=np.zeros(12),
                                            strings=[0], gamma_ref=[1.0]), path)
        load = tc.load_controller
    with np.load(path) as data:
        entries = {k: data[k] for k in data.files}

    @QUICK
    @given(st.sampled_from(sorted(entries)), st.sampled_from(sorted(WRONG)))
    def check(key, wrong):
        value = WRONG[wrong]
        if value.dtype.kind == "U" and entries[key].dtype.kind == "U":
            return  # text for text: the JSON checks, tested in test_fileio
        changed = damaged(path, b"", "e.npz")
        with open(changed, "wb") as f:
            np.savez(f, **{**entries, key: value})
        with pytest.raises(ValueError, match=rf"e.npz: .*'{key}'") as info:
            load(changed)
        assert type(info.value) is ValueError and "\n" not in str(info.value)

    check()
