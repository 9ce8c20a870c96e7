"""Bad inputs on the control surfaces, tried as a new user would (issue 30, item 6): each case
runs in a forked child with a time limit and is classified by what it gives.

- ``clear``: a ValueError, TypeError or one of tenscontrol's errors whose message names the
  thing (the case's pattern), or a warning that does;
- ``unclear``: another exception (a numpy traceback, KeyError, ZeroDivisionError, ...) or one
  whose message does not name the thing;
- ``silent``: it ran and returned (NaN, nonsense or a design with no warning);
- ``hang``: it did not answer within the time limit;
- ``answered``: for the one valid input among them (LQG on an undamped structure, which
  failed in Slycot), a design with a finite gain.

    PYTHONPATH=/work/main python benchmarks/fuzz_control_inputs.py      # the code before
    PYTHONPATH=. python benchmarks/fuzz_control_inputs.py --timeout 20  # this checkout
    PYTHONPATH=. python benchmarks/fuzz_control_inputs.py -k storage    # cases named *storage*

The fixtures (the T-bar at 10 N/m, its linearization, sensors and one saved file of each
controller type) are built once in the parent; every case gets its own temporary folder. The
script works with designs that return a controller or a design object with ``.controller``.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import re
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

import tenscontrol as tc
from tenscontrol.mechanics.sensors import sensors

T = 0.005


def _law(x):
    """The controller of a design (the `design` branch) or the controller itself."""
    return getattr(x, "controller", x)


def fixtures() -> dict:
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s)
    ss = (sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
          + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
    prism = tc.equilibrium(tc.catalog.prism(3), gamma_min=10.0).structure
    lqr = tc.lqr(model)
    dlqg = _law(tc.discrete_lqg(model, ss, T, process_noise=4.0))
    lqg = tc.lqg(model, ss, process_noise=4.0)
    return {"s": s, "model": model, "ss": ss, "prism": prism, "lqr": lqr,
            "sf": _law(lqr), "df": _law(tc.dlqr(model, T)), "dlqg": dlqg,
            "lqg": _law(lqg)}


def _edited(F, tmp, which: str, edit) -> Path:
    """Save F[which], change its entries with edit(dict of arrays, header dict), save again."""
    path = Path(tmp) / f"{which}.npz"
    tc.save_controller(F[which], path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["header"]))
    edit(arrays, header)
    arrays["header"] = np.array(json.dumps(header))
    np.savez(path, **arrays)
    return path


def _set(key, value):
    def edit(a, h):
        if key.startswith("header."):
            h[key[len("header."):]] = value
        else:
            x = np.array(a[key], dtype=float if np.asarray(a[key]).dtype.kind == "f" else None)
            if callable(value):
                x = value(x)
            else:
                x.flat[0] = value
            a[key] = x
    return edit


def storage_case(which, key, value):
    def case(F, tmp):
        path = _edited(F, tmp, which, _set(key, value))
        c = tc.load_controller(path)
        # a controller that loads must also run: a short closed loop
        return tc.simulate(F["s"], 0.02, controller=c)
    return case


def _neg_diag(x):
    x = x.copy()
    x[0, 0] = -abs(x[0, 0]) - 1.0
    return x


def _asym(x):
    x = x.copy()
    x[0, 1] += 1.0
    return x


def _drop_row(x):
    return x[:-1]


STORAGE = [
    ("storage dlqg K NaN", "dlqg", "K", np.nan, r"\bK\b"),
    ("storage dlqg K inf", "dlqg", "K", np.inf, r"\bK\b"),
    ("storage dlqg kalman_period 0", "dlqg", "header.kalman_period", 0.0, "kalman_period"),
    ("storage dlqg kalman_period -1", "dlqg", "header.kalman_period", -1.0, "kalman_period"),
    ("storage dlqg kalman_period edited", "dlqg", "header.kalman_period", 0.01, "kalman_period"),
    ("storage dlqg period edited", "dlqg", "header.period", 0.01, "period"),
    ("storage dlqg period NaN", "dlqg", "header.period", float("nan"), "period"),
    ("storage dlqg period inf", "dlqg", "header.period", float("inf"), "period"),
    ("storage dlqg delay > period", "dlqg", "header.delay", 0.05, "delay"),
    ("storage dlqg delay -1", "dlqg", "header.delay", -1.0, "delay"),
    ("storage dlqg kalman_delay edited", "dlqg", "header.kalman_delay", 0.001, "kalman_delay"),
    ("storage dlqg sensors_std -1", "dlqg", "sensors_std", -1.0, "sensors_std"),
    ("storage dlqg sensors_std NaN", "dlqg", "sensors_std", np.nan, "sensors_std"),
    ("storage dlqg sensors_rate 0", "dlqg", "sensors_rate", 0.0, "sensors_rate"),
    ("storage dlqg sensors_rate -5", "dlqg", "sensors_rate", -5.0, "sensors_rate"),
    ("storage dlqg sensors_rate 10 Hz", "dlqg", "sensors_rate", 10.0, "sensors_rate"),
    ("storage dlqg sensors_quantization -1", "dlqg", "sensors_quantization", -1.0,
     "sensors_quantization"),
    ("storage dlqg sensors_bias inf", "dlqg", "sensors_bias", np.inf, "sensors_bias"),
    ("storage dlqg kalman_P NaN", "dlqg", "kalman_P", np.nan, "kalman_P"),
    ("storage dlqg kalman_P negative", "dlqg", "kalman_P", _neg_diag, "kalman_P"),
    ("storage dlqg kalman_P asymmetric", "dlqg", "kalman_P", _asym, "kalman_P"),
    ("storage dlqg kalman_M NaN", "dlqg", "kalman_M", np.nan, "kalman_M"),
    ("storage dlqg kalman_Phi inf", "dlqg", "kalman_Phi", np.inf, "kalman_Phi"),
    ("storage dlqg kalman_basis NaN", "dlqg", "kalman_basis", np.nan, "kalman_basis"),
    ("storage dlqg kalman_Gamma0 NaN", "dlqg", "kalman_Gamma0", np.nan, "kalman_Gamma0"),
    ("storage dlqg gamma_ref NaN", "dlqg", "gamma_ref", np.nan, "gamma_ref"),
    ("storage dlqg measurement_C NaN", "dlqg", "measurement_C", np.nan, "measurement_C"),
    ("storage dlqg measurement_y_ref NaN", "dlqg", "measurement_y_ref", np.nan,
     "measurement_y_ref"),
    ("storage dlqg measurement_q_ref NaN", "dlqg", "measurement_q_ref", np.nan,
     "measurement_q_ref"),
    ("storage dlqg seed 1.5", "dlqg", "header.seed", 1.5, "seed"),
    ("storage df period 0", "df", "header.period", 0.0, "period"),
    ("storage df period NaN", "df", "header.period", float("nan"), "period"),
    ("storage df period 1e-9", "df", "header.period", 1e-9, "period"),
    ("storage df DK NaN", "df", "DK", np.nan, r"\bDK\b"),
    ("storage df q_ref NaN", "df", "q_ref", np.nan, "q_ref"),
    ("storage df DK short", "df", "DK", _drop_row, "DK"),
    ("storage sf K NaN", "sf", "K", np.nan, r"\bK\b"),
    ("storage sf gamma_ref inf", "sf", "gamma_ref", np.inf, "gamma_ref"),
    ("storage sf strings 99", "sf", "strings", 99, "string"),
    ("storage lqg AK NaN", "lqg", "AK", np.nan, r"\bAK\b"),
    ("storage lqg CK inf", "lqg", "CK", np.inf, r"\bCK\b"),
    ("storage lqg sensors_std -1", "lqg", "sensors_std", -1.0, "sensors_std"),
]


def _mpc(**kw):
    def case(F, tmp):
        return tc.mpc(F["model"], kw.pop("period", T), **kw)
    return case


def _timing(fun, *args, **kw):
    def case(F, tmp):
        return fun(F)(*[F[a] if isinstance(a, str) and a in F else a for a in args], **kw)
    return case


def _other_structure(key, sim=True):
    def case(F, tmp):
        c = _law(F[key])
        if sim:
            return tc.simulate(F["prism"], 0.02, controller=c)
        return tc.verify(F["prism"], _law(F["lqr"]), None, 0.02)
    return case


def _prism_run(make):
    def case(F, tmp):
        return tc.simulate(F["prism"], 0.02, controller=_law(make(F)))
    return case


def _undamped_lqg(F, tmp):
    """A valid input: every string's length on the undamped prism (observability rank 12 of
    12); the right outcome is a design with a finite, stabilizing filter gain."""
    design = tc.lqg(tc.linearize(F["prism"]), sensors(F["prism"], string_lengths=range(9),
                                                      std=1e-3), process_noise=4.0)
    L = design.L
    Acl = design.design.minimal.sys.A if hasattr(design, "design") else None
    if not np.all(np.isfinite(L)):
        return "non-finite gain"
    return "answered" if Acl is None or np.isfinite(np.asarray(Acl)).all() else "nonsense"


def _dlqr(period, **kw):
    return lambda F, tmp: tc.dlqr(F["model"], period, **kw)


def _dlqg(period, **kw):
    def case(F, tmp):
        kw.setdefault("process_noise", 4.0)
        return tc.discrete_lqg(F["model"], F["ss"], period, **kw)
    return case


def _lqg(**kw):
    def case(F, tmp):
        kw.setdefault("process_noise", 4.0)
        return tc.lqg(F["model"], kw.pop("sensors", None) or F["ss"], **kw)
    return case


def _unobservable(design):
    def case(F, tmp):
        s = F["s"]
        # one string length: 1 signal for 4 reduced coordinates
        one = sensors(s, string_lengths=[0], std=1e-3, rate=1000.0)
        if design == "lqg":
            return tc.lqg(F["model"], one, process_noise=4.0)
        return getattr(tc, design)(F["model"], one, T, process_noise=4.0)
    return case


def _sim_fast(period):
    def case(F, tmp):
        c = tc.discretize(F["sf"], period)
        return tc.simulate(F["s"], 1.0, controller=c)
    return case


def _sensors(**kw):
    return lambda F, tmp: sensors(F["s"], string_lengths=[0, 1], **kw)


def _scales_1e308(F, tmp):
    s = F["s"]
    loads = np.zeros(3 * s.n_nodes)
    loads[s.free_coordinates[0]] = 1e308
    return tc.simulate(s, 0.01, loads=loads.reshape(-1, 3))


def _statics_1e300(F, tmp):
    s = F["s"]
    loads = np.zeros(3 * s.n_nodes)
    loads[s.free_coordinates[0]] = 1e300
    return tc.static_equilibrium(s, loads=loads.reshape(-1, 3))


def _stale_part(F, tmp):
    from tenscontrol.studies.cases import grid
    out = Path(tmp) / "study"
    cases = grid({"a": [1.0, 2.0]})
    tc.run_study(_pipeline, cases, out=out, progress=False)
    # what a run killed an hour ago leaves: a part file of a process that is gone, and the
    # case file it never wrote
    (out / "cases" / "case-000001.json").unlink()
    stale = out / "cases" / "case-000001.json.4194303.0a1b2c3d.part"
    stale.write_text('{"trunc')
    os.utime(stale, (time.time() - 3600, time.time() - 3600))    # left an hour ago
    tc.run_study(_pipeline, cases, out=out, progress=False)
    left = sorted(p.name for p in (out / "cases").iterdir() if p.name.endswith(".part"))
    if left:
        return f"stale files left: {left}"
    # the outcome we want: the stale file cleaned; reported as a clear error for the count
    raise ValueError("resumed study: no stale case-*.json.part left (cleaned)")


def _pipeline(p):
    return {"b": 2 * p["a"]}


def _run_cli(args, tmp, tail):
    """Run ``python -m tenscontrol ARGS`` in `tmp`: exit 2 without a traceback is a clear error
    (ValueError with its last line), exit 0 returns ``tail(stdout)``, anything else is raised."""
    import subprocess
    run = subprocess.run([sys.executable, "-m", "tenscontrol", *args], capture_output=True,
                         text=True, timeout=100, cwd=tmp, env=dict(os.environ, PYTHONPATH=str(
                             Path(tc.__file__).resolve().parent.parent)))
    if run.returncode == 2 and "Traceback" not in run.stderr:
        raise ValueError(f"exit 2: {run.stderr.strip().splitlines()[-1]}")
    if run.returncode == 0:
        return f"exit 0: {tail(run.stdout.strip())}"
    raise RuntimeError(f"exit {run.returncode}: {(run.stderr or run.stdout)[-300:]}")


def _cli(which, key, value, structure="s", t_final="0.02"):
    """`tenscontrol simulate` of F[structure] with F[which] saved and edited (key, value)."""
    def case(F, tmp):
        path = _edited(F, tmp, which, _set(key, value) if key else lambda a, h: None)
        model = Path(tmp) / "s.json"
        tc.save_structure(F[structure], model)
        return _run_cli(["simulate", str(model), "--t-final", t_final, "--controller", str(path),
                         "--out", str(Path(tmp) / "traj.npz")], tmp, lambda out: out[-200:])
    return case


def _cli_design(period):
    """`tenscontrol design --period` of the T-bar: exit 2 with the message, or the file."""
    def case(F, tmp):
        model = Path(tmp) / "s.json"
        tc.save_structure(F["s"], model)
        return _run_cli(["design", str(model), "--period", period, "--out",
                         str(Path(tmp) / "K.npz")], tmp,
                        lambda out: out.splitlines()[-2][:150])
    return case


OTHER = [
    ("mpc horizon 2.5", _mpc(horizon=2.5), "horizon"),
    ("mpc horizon 1e9", _mpc(horizon=10**9), "horizon"),
    ("mpc horizon 0", _mpc(horizon=0), "horizon"),
    ("mpc horizon -3", _mpc(horizon=-3), "horizon"),
    ("mpc horizon True", _mpc(horizon=True), "horizon"),
    ("mpc horizon '10'", _mpc(horizon="10"), "horizon"),
    ("mpc horizon NaN", _mpc(horizon=float("nan")), "horizon"),
    ("mpc period 0", _mpc(period=0.0), "period"),
    ("mpc period NaN", _mpc(period=float("nan")), "period"),
    ("mpc gamma_min NaN", _mpc(gamma_min=float("nan")), "gamma_min"),
    ("mpc rate_limit -1", _mpc(rate_limit=-1.0), "rate_limit"),
    ("dlqr period 0", _dlqr(0.0), "period"),
    ("dlqr period -1", _dlqr(-1.0), "period"),
    ("dlqr period inf", _dlqr(float("inf")), "period"),
    ("dlqr delay = period", _dlqr(T, delay=T), "delay"),
    ("dlqr period '5ms'", _dlqr("5ms"), "period"),
    ("dlqr period 1e-11", _dlqr(1e-11), "period"),
    ("dlqr period 1e-300", _dlqr(1e-300), "period"),
    ("discrete_lqg period 1e-12, continuous sensors",
     lambda F, tmp: tc.discrete_lqg(F["model"], sensors(F["s"], string_lengths=range(4),
                                                        std=1e-3), 1e-12, process_noise=4.0),
     "period"),
    ("mpc period 1e-11", _mpc(period=1e-11), "period"),
    ("discretize period 0", lambda F, tmp: tc.discretize(F["sf"], 0.0), "period"),
    ("discretize not a controller", lambda F, tmp: tc.discretize(np.eye(2), T), "controller"),
    ("discretize 1e-7 then simulate 1 s", _sim_fast(1e-7), "period|samples"),
    ("discretize 1e-9 then simulate 1 s", _sim_fast(1e-9), "period|samples"),
    ("discrete_lqg period 0", _dlqg(0.0), "period"),
    ("discrete_lqg process_noise -1", _dlqg(T, process_noise=-1.0), "process_noise"),
    ("discrete_lqg process_noise NaN", _dlqg(T, process_noise=float("nan")), "process_noise"),
    ("discrete_lqg delay -1", _dlqg(T, delay=-1.0), "delay"),
    ("lqg process_noise 0", _lqg(process_noise=0.0), "process_noise"),
    ("lqg unobservable", _unobservable("lqg"), "observ|rank"),
    ("discrete_lqg unobservable", _unobservable("discrete_lqg"), "observ|rank"),
    ("extended_lqg unobservable", _unobservable("extended_lqg"), "observ|rank"),
    ("sensors std -1", _sensors(std=-1.0), "std"),
    ("sensors rate 0", _sensors(rate=0.0), "rate"),
    ("sensors rate NaN", _sensors(rate=float("nan")), "rate"),
    ("simulate prism, tbar StateFeedback", _other_structure("sf"), "node|coordinate|size"),
    ("simulate prism, tbar DiscreteFeedback", _other_structure("df"), "node|coordinate|size"),
    ("simulate prism, tbar DiscreteLQG", _other_structure("dlqg"), "node|coordinate|size"),
    ("simulate prism, tbar lqg OutputFeedback", _other_structure("lqg"),
     "node|coordinate|size"),
    ("verify prism with tbar design", _other_structure("lqr", sim=False),
     "node|coordinate|size|structure"),
    ("simulate prism, tbar mpc", _prism_run(lambda F: tc.mpc(F["model"], T, horizon=5)),
     "node|coordinate|size"),
    ("simulate prism, tbar extended_lqg",
     _prism_run(lambda F: tc.extended_lqg(F["model"], F["ss"], T, process_noise=4.0)),
     "node|coordinate|size"),
    ("simulate, controller a string", lambda F, tmp: tc.simulate(F["s"], 0.01, controller="lqr"),
     "controller"),
    ("simulate, controller a matrix",
     lambda F, tmp: tc.simulate(F["s"], 0.01, controller=np.eye(3)), "controller"),
    ("lqg with the prism's sensors", lambda F, tmp: tc.lqg(F["model"], sensors(
        F["prism"], string_lengths=[0, 1], std=1e-3), process_noise=4.0), "sensor|structure"),
    ("lqg on the undamped prism (valid)", _undamped_lqg, None),
    ("sensors string 99", lambda F, tmp: sensors(F["s"], string_lengths=[99], std=1e-3),
     "string"),
    ("save_controller(mpc)", lambda F, tmp: tc.save_controller(
        tc.mpc(F["model"], T, horizon=5), Path(tmp) / "m.npz"), "PredictiveController"),
    ("save_controller(extended_lqg)", lambda F, tmp: tc.save_controller(
        tc.extended_lqg(F["model"], F["ss"], T, process_noise=4.0), Path(tmp) / "e.npz"),
     "ExtendedLQG"),
    ("discretize delay = period", lambda F, tmp: tc.discretize(F["sf"], T, delay=T), "delay"),
    ("mpc gamma_min above gamma_ref", _mpc(gamma_min=1e3), "gamma_min"),
    ("loads 1e308 in simulate", _scales_1e308, "load"),
    ("static_equilibrium loads 1e300", _statics_1e300, "load"),
    ("study resumed with stale .part", _stale_part, "stale"),
    ("cli simulate, DiscreteFeedback period 0", _cli("df", "header.period", 0.0), "period"),
    ("cli simulate, DiscreteLQG K NaN", _cli("dlqg", "K", np.nan), r"\bK\b"),
    ("cli simulate, DiscreteLQG kalman_period edited",
     _cli("dlqg", "header.kalman_period", 0.01), "kalman_period"),
    ("cli simulate, DiscreteLQG sensors_std -1", _cli("dlqg", "sensors_std", -1.0),
     "sensors_std"),
    ("cli simulate, period 1e-8 for 10 s", _cli("df", "header.period", 1e-8, t_final="10"),
     "period|samples"),
    ("cli design --period 1e-300", _cli_design("1e-300"), "period"),
    ("cli design --period 1e-12", _cli_design("1e-12"), "period"),
    ("cli simulate prism, tbar controller", _cli("df", None, None, structure="prism"),
     "node"),
]


def all_cases():
    out = [(name, storage_case(w, k, v), pat) for name, w, k, v, pat in STORAGE]
    return out + OTHER


def _run(case, F, tmp, queue):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = case(F, tmp)
        except BaseException as exc:   # noqa: BLE001 - every outcome is what we classify
            tb = traceback.extract_tb(exc.__traceback__)
            queue.put(("raised", type(exc).__name__, str(exc)[:400],
                       f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""))
            return
    text = " | ".join(str(w.message) for w in caught
                      if not issubclass(w.category, DeprecationWarning))
    queue.put(("returned", type(result).__name__, text[:400], ""))


_CLEAR = {"ValueError", "TypeError", "StaticsError", "SimulationError", "StudyFolderError",
          "PrestressError", "MechanismError", "StudyFileError", "ImportError"}
# numpy's or scipy's own words: an error in those is not ours, whatever its type
_FOREIGN = re.compile(r"broadcast|could not be|operands|matmul|must be 2-dimensional|"
                      r"array must not contain infs or NaNs|Dimension mismatch|"
                      r"invalid value encountered|shapes .* not aligned|index \d+ is out of")


def classify(outcome, pattern) -> str:
    what, name, text, _ = outcome
    if what == "hang":
        return "hang"
    if pattern is None:      # a valid input: the right outcome is an answer
        return "answered" if what == "returned" and name == "str" else "unclear"
    if what == "returned":
        return "clear" if text and re.search(pattern, text, re.I) else "silent"
    if name in _CLEAR and re.search(pattern, text, re.I) and not _FOREIGN.search(text):
        return "clear"
    return "unclear"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    ap.add_argument("-k", default="", help="run only cases whose name contains this")
    args = ap.parse_args(argv)
    F = fixtures()
    tc.simulate(F["s"], 0.01, controller=F["df"])    # compile the kernels before forking
    ctx = mp.get_context("fork")
    counts = collections.Counter()
    cases = [c for c in all_cases() if args.k in c[0]]
    width = max(len(c[0]) for c in cases)
    print(f"{'case':<{width}}  {'outcome':<8} {'s':>5}  what it gives")
    for name, case, pattern in cases:
        with tempfile.TemporaryDirectory() as tmp:
            queue = ctx.Queue()
            proc = ctx.Process(target=_run, args=(case, F, tmp, queue))
            start = time.perf_counter()
            proc.start()
            proc.join(args.timeout)
            if proc.is_alive():
                proc.kill()
                proc.join()
                outcome = ("hang", "", f"no answer within {args.timeout:g} s", "")
            else:
                outcome = (queue.get(timeout=5) if not queue.empty() else
                           ("raised", "died", f"exit code {proc.exitcode}", ""))
            wall = time.perf_counter() - start
        kind = classify(outcome, pattern)
        counts[kind] += 1
        what = f"{outcome[1]}: {outcome[2]}" + (f" [{outcome[3]}]" if outcome[3] else "")
        print(f"{name:<{width}}  {kind:<8} {wall:5.1f}  {what[:220]}", flush=True)
    print(f"\n{len(cases)} cases: " + ", ".join(f"{counts[k]} {k}" for k in
                                               ("clear", "unclear", "silent", "hang")) +
          (f" ({counts['answered']} valid input answered)" if counts["answered"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
