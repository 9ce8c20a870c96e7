"""The kernels compiled ahead of time at install (tenscontrol.precompile, loaded by
tenscontrol.mechanics.kernels.aot): what is loaded and when nothing is, the capture of the
kernels a run calls from Python, and that a run with them is the run numba's JIT makes, bit
for bit (the oracle: the same run in a process with TENSCONTROL_AOT=0)."""

import base64
import json
import os
import pickle
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

import tenscontrol
from tenscontrol.mechanics.kernels import aot
from tenscontrol.simulation import cache_guard

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stamp():
    return aot.source_stamp(cache_guard.kernel_sources())


def _manifest(tmp_path, **fields):
    manifest = {"module": "tenscontrol._aot_missing", "numba": numba.__version__,
                "machine": aot.machine(),
                "stamp": _stamp(), "exports": []}
    manifest.update(fields)
    path = tmp_path / aot.MANIFEST
    path.write_text(json.dumps(manifest))
    return str(path)


@pytest.fixture
def status():
    """Put aot.STATUS back as the import left it."""
    before = aot.STATUS
    yield
    aot.STATUS = before


def test_nothing_is_loaded_without_a_manifest(tmp_path, status):
    assert aot.install(_stamp(), str(tmp_path / "none.json")) == 0
    assert aot.STATUS.startswith("not built at install")


def test_nothing_is_loaded_when_the_environment_says_so(tmp_path, monkeypatch, status):
    monkeypatch.setenv("TENSCONTROL_AOT", "0")
    assert aot.install(_stamp(), _manifest(tmp_path)) == 0
    assert aot.STATUS.startswith("off (TENSCONTROL_AOT=0)")


def test_nothing_is_loaded_from_another_numba(tmp_path, status):
    assert aot.install(_stamp(), _manifest(tmp_path, numba="0.1.0")) == 0
    assert "built with numba 0.1.0" in aot.STATUS and "tenscontrol.precompile" in aot.STATUS


def test_nothing_is_loaded_on_another_cpu(tmp_path, status):
    # an install shared by machines of several kinds: the code would use instructions the
    # other CPU may not have
    other = ["x86_64-unknown-linux-gnu", "pentium4", "+sse2"]
    assert aot.install(_stamp(), _manifest(tmp_path, machine=other)) == 0
    assert "built for another CPU (pentium4" in aot.STATUS


def test_nothing_is_loaded_once_a_kernel_source_changed(tmp_path, status):
    # an editable install whose kernels were edited after the build: the old machine code
    # would run the old kernels
    assert aot.install(_stamp(), _manifest(tmp_path, stamp="0" * 64)) == 0
    assert "sources changed since the build" in aot.STATUS


def test_a_broken_build_loads_nothing_and_says_why(tmp_path, status):
    with pytest.warns(RuntimeWarning, match="rebuild them"):
        assert aot.install(_stamp(), _manifest(tmp_path)) == 0  # its module does not exist
    assert aot.STATUS.startswith("not loaded (ModuleNotFoundError")


def test_the_stamp_covers_every_kernel_source_and_only_their_contents(tmp_path):
    files = cache_guard.kernel_sources()
    package = os.path.dirname(os.path.abspath(tenscontrol.__file__))  # checkout or installed
    assert os.path.join(package, "mechanics", "rigid", "kernels.py") in files
    assert os.path.join(package, "simulation", "rigid_loop.py") in files
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    first = aot.source_stamp([str(a), str(b)])
    assert aot.source_stamp([str(b), str(a)]) == first  # order does not matter
    a.write_text("x = 2\n")
    assert aot.source_stamp([str(a), str(b)]) != first


def _run(code: str, *, installed: bool = False, **env) -> str:
    """Run `code` in a fresh process: with this checkout's tenscontrol, or (`installed`) with
    the one installed in this interpreter (outside the checkout, with no PYTHONPATH): the one
    `pip install` built the kernels for when the tests run from a checkout, as in CI."""
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1", TENSCONTROL_COMPILE_NOTICE="0",
                       **env)
    environment.pop("PYTHONPATH", None)
    if not installed:
        environment["PYTHONPATH"] = ROOT
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environment,
                          capture_output=True, text=True, timeout=600,
                          cwd=os.path.dirname(ROOT) if installed else ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _installed_status() -> str:
    """aot.STATUS of the installed tenscontrol ("" if none is installed)."""
    try:
        return _run("""
            from tenscontrol.mechanics.kernels import aot
            print(aot.STATUS)
        """, installed=True).strip()
    except AssertionError:
        return ""


@pytest.fixture(scope="module")
def installed_with_aot():
    status = _installed_status()
    if not status.endswith("loaded"):
        pytest.skip(f"the installed tenscontrol loads no kernels compiled ahead of time "
                    f"({status or 'none installed'})")
    return status


@pytest.mark.slow
def test_capture_finds_the_kernels_a_run_calls_from_python():
    # the build's own capture, in a process with nothing loaded ahead of time
    out = _run("""
        from tenscontrol import precompile
        for module, name, kernel, args in precompile.capture({"rigid": precompile._rigid}):
            print(module, name, len(args))
    """, TENSCONTROL_AOT="0")
    found = {tuple(line.split()[:2]) for line in out.splitlines()}
    assert ("tenscontrol.simulation.rigid_loop", "advance") in found
    assert ("tenscontrol.mechanics.rigid.kernels", "rhs") in found
    assert ("tenscontrol.mechanics.rigid.forces", "total_energy") in found
    # a kernel only compiled code calls is not exported on its own
    assert ("tenscontrol.mechanics.rigid.correction", "correct") not in found
    # the structure records' constructors stay with numba's JIT (they return numba objects)
    assert not any(module.endswith("records") for module, _ in found)


_RUNS = """
    import numpy as np, tenscontrol as tc
    from tenscontrol.mechanics.kernels import aot
    s = tc.catalog.tbar("stedy", damping=1.0)
    rigid = tc.simulate(s, 2.0, bars="rigid")
    compressible = tc.simulate(s, 0.5, bars="compressible")
    p = tc.equilibrium(s, gamma_min=10.0).structure
    design = tc.lqr(tc.linearize(p, kind="passive", outputs=tc.Selection(nodes=[2, 3],
                                                                         axes="xz")), effort=1e-2)
    loads = np.zeros((p.n_nodes, 3))
    loads[2, 2] = 10.0
    closed = tc.simulate(p, 2.0, controller=design.controller, loads=loads)
    np.savez({path!r}, rigid=rigid.nodes, compressible=compressible.nodes, closed=closed.nodes,
             rigid_steps=rigid.stats.accepted_steps,
             compressible_steps=compressible.stats.accepted_steps)
    # the step loops' JIT-compiled signatures: none where the loaded ones ran
    from tenscontrol.simulation import compressible_loop, rigid_loop
    print(len(rigid_loop.advance.overloads) + len(compressible_loop.advance.overloads))
    print(aot.STATUS)
"""


@pytest.mark.slow
def test_runs_with_the_kernels_compiled_at_install_are_numbas_jit_runs_bit_for_bit(
        tmp_path, installed_with_aot):
    with_aot, jit = tmp_path / "aot.npz", tmp_path / "jit.npz"
    compiled, status = _run(_RUNS.format(path=str(with_aot)), installed=True).splitlines()[-2:]
    assert status.endswith("loaded") and compiled == "0"  # the loaded code ran, not numba's JIT
    compiled, status = _run(_RUNS.format(path=str(jit)), installed=True,
                            TENSCONTROL_AOT="0").splitlines()[-2:]
    assert "TENSCONTROL_AOT=0" in status and int(compiled) >= 2
    a, b = np.load(with_aot), np.load(jit)
    for key in a.files:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_every_exported_kernel_was_loaded_into_its_dispatcher(installed_with_aot):
    out = _run("""
        import base64, json, pickle
        from tenscontrol.mechanics.kernels import aot
        with open(aot.manifest_path()) as f:
            manifest = json.load(f)
        print(len(manifest["exports"]), aot.STATUS)
        for entry in manifest["exports"]:
            dispatcher = aot._dispatcher(entry["module"], entry["qualname"])
            args = pickle.loads(base64.b64decode(entry["args"]))
            print(entry["qualname"], dispatcher is not None
                  and len(args) == dispatcher.py_func.__code__.co_argcount)
    """, installed=True).splitlines()
    n, status = out[0].split(" ", 1)
    assert status.startswith(f"{n} kernel signatures") and int(n) >= 10
    assert all(line.endswith("True") for line in out[1:]), out
