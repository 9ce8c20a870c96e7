"""tenscontrol.fileio and the readers and writers on it (issue 21): regular files only, size,
UTF-8 and nesting bounds, saved trajectories and controllers checked entry by entry, and every
output written whole or not at all."""

import errno
import json
import os
import zipfile

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol import fileio
from tenscontrol.model import catalog
from tenscontrol.studies.files import read_study_file


@pytest.fixture(scope="module")
def traj():
    return tc.simulate(catalog.tbar("stedy", damping=1.0), 0.05)


@pytest.fixture(scope="module")
def lqr_controller():
    s = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    return tc.lqr(tc.linearize(s, kind="passive"), effort=1e-2).controller


def study_dict():
    return {"pipeline": "norms", "structure": {"catalog": "tbar"},
            "parameters": {"grid": {"prestress": [10.0]}}}


# ---- reading -------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("reader", [tc.run_study_file, tc.load_trajectory, tc.load_controller])
def test_a_fifo_is_refused_without_blocking(tmp_path, reader):
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    with pytest.raises(ValueError, match=r"fifo.json: not a regular file \(a pipe, FIFO"):
        reader(path)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("reader", [tc.load_trajectory, tc.load_controller])
def test_a_device_is_refused(reader):
    with pytest.raises(ValueError, match=r"/dev/zero: not a regular file"):
        reader("/dev/zero")


def test_study_file_errors_name_the_file(tmp_path):
    cases = {
        "bytes.json": (b'{"pipeline": "\xff"}', r"bytes.json: cannot read the file: not UTF-8 "
                                                r"text \(byte 14 is 0xff\)"),
        "deep.json": (b"[" * 100_000 + b"]" * 100_000, r"deep.json: the JSON nests too deeply"),
        "deep2.json": (b"[" * 600 + b"]" * 600, r"deep2.json: the JSON nests too deeply to read "
                                                r"\(more than 500 levels\)"),
        "deep.toml": (b"a = " + b"[" * 100_000 + b"]" * 100_000,
                      r"deep.toml: the TOML nests too deeply"),
        "bytes.toml": (b'pipeline = "\xfe"', r"bytes.toml: cannot read the file: not UTF-8"),
    }
    for name, (data, match) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(tc.StudyFileError, match=match) as info:
            read_study_file(tmp_path / name)
        assert "\n" not in str(info.value) and info.value.__cause__ is None


def test_a_study_file_over_the_size_limit_is_refused(tmp_path):
    from tenscontrol.studies.files import MAX_STUDY_FILE_BYTES
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(MAX_STUDY_FILE_BYTES + 1)  # sparse
    with pytest.raises(tc.StudyFileError, match=r"big.json: the file is larger than the limit "
                                                r"of 1048576 bytes"):
        read_study_file(path)
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(study_dict()))
    assert len(read_study_file(path)[1]) == 1


def save_npz(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def trajectory_entries(traj, tmp_path) -> dict:
    traj.save(tmp_path / "t.npz")
    with np.load(tmp_path / "t.npz") as data:
        return {k: data[k] for k in data.files}


def test_truncated_and_empty_files_name_the_file(traj, tmp_path, lqr_controller):
    path = traj.save(tmp_path / "t.npz")
    tc.save_controller(lqr_controller, tmp_path / "k.npz")
    for name, load in (("t.npz", tc.load_trajectory), ("k.npz", tc.load_controller)):
        data = (tmp_path / name).read_bytes()
        for size in (0, 10, len(data) // 2, len(data) - 1):
            cut = tmp_path / f"cut-{size}-{name}"
            cut.write_bytes(data[:size])
            with pytest.raises(ValueError, match=rf"cut-{size}-{name}: ") as info:
                load(cut)
            assert type(info.value) is ValueError and info.value.__cause__ is None
    assert tc.load_trajectory(path).t.shape == traj.t.shape


BROKEN_TRAJECTORIES = {
    "nodes of the wrong shape": (dict(nodes=np.zeros((3, 2))), r"entry 'nodes' must have shape "),
    "nodes of strings": (dict(nodes=np.array(["a", "b"])), r"entry 'nodes' must hold numbers, "
                                                           r"got a <U1 array"),
    "unknown bar model": (dict(settings__bars="elastic"), r"entry 'settings': 'bars' must be one "
                                                         r"of \('rigid', 'compressible'\)"),
    "missing work": (dict(work=None), r"entry 'work' is missing"),
    "pickled energy": (dict(energy=np.array([object()], dtype=object)),
                       r"entry 'energy' holds pickled objects, which are never loaded"),
    "settings a list": (dict(settings=np.array("[1, 2]")), r"entry 'settings': must be a JSON "
                                                          r"object, got list"),
    "settings as numbers": (dict(settings=np.arange(3.0)), r"entry 'settings' must hold text"),
    "stats of another kind": (dict(settings__stats=[1]), r"'stats' must be an object"),
    "stats with an unknown field": (dict(settings__stats={"steps": 1}),
                                    r"'stats' does not fit SimulationStats"),
    "E0 a string": (dict(settings__E0="1"), r"'E0' must be a number"),
    "structure broken": (dict(structure__nodes=[[0, 0]]), r"entry 'structure': nodes must be"),
    "t of 2 dimensions": (dict(t=np.zeros((2, 2))), r"entry 't' must have 1 dimension"),
    "t of another length": (dict(t=np.zeros(2)), r"entry 'nodes' must have shape \(2, 4, 3\)"),
}


@pytest.mark.parametrize("change, match", BROKEN_TRAJECTORIES.values(),
                         ids=BROKEN_TRAJECTORIES.keys())
def test_a_broken_trajectory_entry_is_named(traj, tmp_path, change, match):
    entries = trajectory_entries(traj, tmp_path)
    for key, value in change.items():
        if "__" in key:  # a field of a JSON entry
            entry, field = key.split("__")
            doc = json.loads(str(entries[entry]))
            doc[field] = value
            entries[entry] = np.array(json.dumps(doc))
        elif value is None:
            del entries[key]
        else:
            entries[key] = value
    path = save_npz(tmp_path / "broken.npz", **entries)
    with pytest.raises(ValueError, match=r"broken.npz: .*" + match) as info:
        tc.load_trajectory(path)
    assert type(info.value) is ValueError and "\n" not in str(info.value)


def test_a_corrupt_entry_is_named(traj, tmp_path):
    entries = trajectory_entries(traj, tmp_path)
    path = tmp_path / "c.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for key, value in entries.items():
            with z.open(key + ".npy", "w") as f:
                np.lib.format.write_array(f, value, allow_pickle=False)
    data = bytearray(path.read_bytes())
    start = data.index(b"nodes.npy") + 40  # inside the deflated 'nodes' member
    data[start:start + 16] = b"\x00" * 16
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"c.npz: entry '\w+' cannot be read .*truncated or "
                                         r"corrupt"):
        tc.load_trajectory(path)


def test_an_archive_too_large_once_unpacked_is_refused(traj, tmp_path):
    path = traj.save(tmp_path / "t.npz")
    with pytest.raises(ValueError, match=r"t.npz: the file is larger than the limit of 100 "):
        tc.load_trajectory(path, max_bytes=100)
    entries = trajectory_entries(traj, tmp_path)
    entries["padding"] = np.zeros(10**6)  # 8 MB that deflate to about 8 kB
    np.savez_compressed(tmp_path / "z.npz", **entries)
    assert (tmp_path / "z.npz").stat().st_size < 10**6
    with pytest.raises(ValueError, match=r"z.npz: the file is larger than the limit of 1000000 "
                                         r"bytes .*unpacks to \d+ bytes"):
        tc.load_trajectory(tmp_path / "z.npz", max_bytes=10**6)


def controller_entries(controller, tmp_path) -> dict:
    tc.save_controller(controller, tmp_path / "k.npz")
    with np.load(tmp_path / "k.npz") as data:
        return {k: data[k] for k in data.files}


BROKEN_CONTROLLERS = {
    "no header": (dict(header=None), r"not a tenscontrol.controller/2 file \(no 'header' entry\)"),
    "header not JSON": (dict(header=np.array("{")), r"entry 'header': not valid JSON"),
    "header a number": (dict(header=np.array(1.0)), r"entry 'header' must hold text"),
    "header a list": (dict(header=np.array("[]")), r"entry 'header' must be a JSON object"),
    "unknown type": (dict(header=np.array('{"format": "tenscontrol.controller/2", "type": "PID"}')),
                     r"controller type 'PID'"),
    "K of strings": (dict(K=np.array(["a"])), r"entry 'K' must hold numbers"),
    "K of 1 dimension": (dict(K=np.zeros(3)), r"entry 'K' must have 2 dimension\(s\)"),
    "K of the wrong shape": (dict(K=np.zeros((2, 3))), r"StateFeedback: K must be"),
    "strings as floats": (dict(strings=np.array([0.5])), r"entry 'strings' must hold integers"),
    "missing q_ref": (dict(q_ref=None), r"entry 'q_ref' is missing"),
    "pickled gamma_ref": (dict(gamma_ref=np.array([None], dtype=object)),
                          r"entry 'gamma_ref' holds pickled objects"),
    "unknown kind": (dict(header=np.array('{"format": "tenscontrol.controller/2", "type": '
                                          '"StateFeedback", "kind": "hybrid"}')), r"kind"),
}


@pytest.mark.parametrize("change, match", BROKEN_CONTROLLERS.values(),
                         ids=BROKEN_CONTROLLERS.keys())
def test_a_broken_controller_entry_is_named(lqr_controller, tmp_path, change, match):
    entries = controller_entries(lqr_controller, tmp_path)
    for key, value in change.items():
        if value is None:
            del entries[key]
        else:
            entries[key] = value
    path = save_npz(tmp_path / "broken.npz", **entries)
    with pytest.raises(ValueError, match=r"broken.npz: .*" + match) as info:
        tc.load_controller(path)
    assert type(info.value) is ValueError and "\n" not in str(info.value)


# ---- writing -------------------------------------------------------------------------------

def test_write_file_replaces_whole_or_leaves_the_old_file(tmp_path):
    path = tmp_path / "out.bin"
    assert fileio.write_file(path, lambda f: f.write(b"old")) == path
    mode = path.stat().st_mode & 0o777
    assert mode == 0o666 & ~_umask()

    def fails(f):
        f.write(b"new but partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match=r"No space left on device \(the disk or the file size "
                                      r"limit is full; the file is unchanged\)") as info:
        fileio.write_file(path, fails)
    assert info.value.filename == str(path) and info.value.errno == errno.ENOSPC
    assert path.read_bytes() == b"old" and sorted(tmp_path.iterdir()) == [path]

    def interrupted(f):
        f.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fileio.write_file(path, interrupted)
    assert path.read_bytes() == b"old" and sorted(tmp_path.iterdir()) == [path]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_part_names_are_unique(tmp_path):
    path = tmp_path / "a.gif"
    with fileio.part_file(path, keep_suffix=True) as one, fileio.part_file(path) as two:
        assert one != two and one.suffix == ".gif" and one.name.endswith(".part.gif")
        assert two.name.startswith("a.gif.") and two.name.endswith(".part")
        one.write_bytes(b"1")
        two.write_bytes(b"2")
    assert path.read_bytes() == b"1" and sorted(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("writer", ["save_mat", "save_controller", "to_mjcf", "save_structure",
                                    "save"])
def test_writers_name_the_target(writer, tmp_path, traj, lqr_controller):
    write = {"save_mat": lambda p: tc.save_mat(lqr_controller, p),
             "save_controller": lambda p: tc.save_controller(lqr_controller, p),
             "to_mjcf": lambda p: tc.to_mjcf(catalog.ball(), p),
             "save_structure": lambda p: tc.save_structure(catalog.tbar(), p),
             "save": traj.save}[writer]
    missing = tmp_path / "no" / "such" / "file.out"
    with pytest.raises(FileNotFoundError, match=rf"the folder {missing.parent} does not "
                                                "exist; create it first") as info:
        write(missing)
    assert info.value.filename == str(missing)
    with pytest.raises(IsADirectoryError, match="is a directory") as info:
        write(tmp_path)
    assert info.value.filename == str(tmp_path)
    assert list(tmp_path.iterdir()) == []
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(PermissionError, match="no file can be created"):
            write(locked / "file.out")


def test_an_interrupted_animation_leaves_no_movie(tmp_path, traj):
    from matplotlib import animation
    import matplotlib.pyplot as plt

    from tenscontrol import plotting

    fig = plt.figure()
    calls = []

    def update(frame):
        calls.append(frame)
        if frame == 3:
            raise KeyboardInterrupt  # Ctrl-C during the save
        return []

    anim = animation.FuncAnimation(fig, update, frames=10, interval=50)
    out = tmp_path / "ball.gif"
    with pytest.raises(KeyboardInterrupt):
        plotting.save_animation(anim, out)
    plt.close(fig)
    assert 3 in calls and list(tmp_path.iterdir()) == []
    anim = plotting.animate(traj, max_frames=3)
    assert plotting.save_animation(anim, out) == out
    assert out.read_bytes()[:6] in (b"GIF89a", b"GIF87a") and list(tmp_path.iterdir()) == [out]
    plt.close("all")


def test_a_link_is_kept_and_a_device_written_in_place(tmp_path):
    import stat
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    tc.save_structure(catalog.tbar(), link)
    assert link.is_symlink() and tc.load_structure(real).n_nodes == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]
    if os.path.exists("/dev/null"):
        tc.save_structure(catalog.tbar(), "/dev/null")  # as root, never replaced by a file
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
