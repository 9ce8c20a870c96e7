"""Reliability cases of studies and study files (issue 21, "Studies" and the semantic part of
"Study files"): concurrent writers on one folder, damaged and foreign case files, hung cases,
huge case lists, NaN parameters, unknown keys and non-finite numbers in study files. See
benchmarks/reliability.py for the format.
"""

# A module of pipelines in TMP (worker processes import the pipeline by name) and a study file.
_SETUP = '''
import json, subprocess
(TMP / "pipes.py").write_text("""
import threading, time
def square(p):
    time.sleep(0.05)
    return {"x2": p["x"] ** 2}
def hangs(p):
    if p["x"] == 2:
        lock = threading.Lock(); lock.acquire(); lock.acquire()   # never returns
    return {"x2": p["x"] ** 2}
""")
sys.path.insert(0, str(TMP))
import pipes
STUDY = {"pipeline": "norms", "structure": {"catalog": "tbar"}, "settings": {"t_final": 0.2},
         "parameters": {"grid": {"prestress": [5.0, 10.0]}}, "executor": {"kind": "serial"}}

def study_file(**tables):
    path = TMP / "study.json"
    data = json.loads(json.dumps(STUDY))
    for dotted, value in tables.items():
        *parents, last = dotted.split("__")
        table = data
        for p in parents:
            table = table[p]
        table[last] = value
    path.write_text(json.dumps(data))
    return path

def said(call):
    try:
        return f"accepted: {call()!r}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
'''

_CONCURRENT = _SETUP + '''
runner = f"""
import sys; sys.path.insert(0, {str(TMP)!r})
import tenscontrol as tc, pipes
r = tc.run_study(pipes.square, tc.grid({{"x": list(range(20))}}), out=sys.argv[1], progress=False)
print(len(r.records))
"""
good = 0
for trial in range(3):
    out = TMP / f"out{trial}"
    procs = [subprocess.Popen([sys.executable, "-c", runner, str(out)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    res = [p.communicate(timeout=300) for p in procs]
    files = sorted((out / "cases").iterdir())
    whole = sum(1 for f in files if f.suffix == ".json"
                and json.loads(f.read_text())["figures"]["x2"] == int(f.stem[-6:]) ** 2)
    good += (whole == 20 and len(files) == 20 and [p.returncode for p in procs] == [0, 0])
print(f"{good} of 3 tries: 20 whole case files, no part file left, both processes exit 0")
'''

_UNKNOWN_STATUS = _SETUP + '''
cases = tc.grid({"x": [1, 2, 3]})
tc.run_study(pipes.square, cases, out=TMP / "o", progress=False)
f = TMP / "o" / "cases" / "case-000001.json"
f.write_text(json.dumps({**json.loads(f.read_text()), "status": "paused"}))
r = tc.run_study(pipes.square, cases, out=TMP / "o", progress=False)
print(f"case with status 'paused' run again: resumed {r.n_resumed} of 3, complete {r.complete}, "
      f"now {json.loads(f.read_text())['status']!r}")
'''

_NAN = _SETUP + '''
cases = tc.grid({"x": [float("nan"), 1.0]})
tc.run_study(pipes.square, cases, out=TMP / "o", progress=False)
r = tc.run_study(pipes.square, cases, out=TMP / "o", progress=False)
print(f"NaN parameter on the resume: {r.n_resumed} of 2 read back, none rerun")
'''


def _hung(executor: str) -> str:
    engine = {"serial": "None", "processes": "tc.process_pool(2)"}[executor]
    return _SETUP + f'''
import time
start = time.perf_counter()
r = tc.run_study(pipes.hangs, tc.grid({{"x": list(range(5))}}), out=TMP / "o",
                 executor={engine}, case_timeout=3, progress=False)
f = r.failures[0]
print(f"{{len(r.records)}} finished, case {{f.index}} {{f.error_type}}: {{f.message}} "
      f"({{time.perf_counter() - start:.0f}} s)")
'''


CASES = [
    ("two processes, one folder, 3 tries", _CONCURRENT),
    ("a case file with an unknown status", _UNKNOWN_STATUS),
    ("a NaN parameter on the resume", _NAN),
    ("a hung case, serial, case_timeout=3", _hung("serial")),
    ("a hung case, process pool, case_timeout=3", _hung("processes")),
    ("a grid of 1e12 cases", "tc.grid({f'p{k}': list(range(10)) for k in range(12)})"),
    ("samples(..., 10**9)", "tc.samples({'e': tc.Uniform(0, 1)}, 10**9, seed=1)"),
    ("a grid parameter from an endless generator",
     "import itertools\ntc.grid({'x': itertools.count()})"),
    ("study file: executor.wrokers", _SETUP + "print(said(lambda: tc.run_study_file(study_file("
     "executor={'kind': 'processes', 'wrokers': 2}), progress=False)))"),
    ("study file: settings.prestress = 'ten'", _SETUP + "print(said(lambda: tc.run_study_file("
     "study_file(settings__prestress='ten'), progress=False)))"),
    ("study file: settings.prestress = NaN", _SETUP + "print(said(lambda: tc.run_study_file("
     "study_file(settings__prestress=float('nan')), progress=False)))"),
    ("study file: grid prestress = ['ten']", _SETUP + "print(said(lambda: tc.run_study_file("
     "study_file(parameters={'grid': {'prestress': ['ten']}}), progress=False)))"),
    ("study file: a misspelt parameter", _SETUP + "print(said(lambda: tc.run_study_file("
     "study_file(parameters={'grid': {'prestres': [5.0]}}), progress=False)))"),
    ("study file: settings.t_finall", _SETUP + "print(said(lambda: tc.run_study_file("
     "study_file(settings__t_finall=1.0), progress=False)))"),
    ("study file: a grid of 2e6 cases", _SETUP + "print(said(lambda: tc.run_study_file(study_file("
     "parameters={'grid': {'prestress': list(range(1, 2001)), 'amplitude': list(range(1, "
     "1001))}}), progress=False)))"),
    ("study file: executor.case_timeout = -1", _SETUP + "print(said(lambda: tc.run_study_file("
     "study_file(executor={'case_timeout': -1}), progress=False)))"),
    ("study file: executor.case_timeout = 60", _SETUP + "print(said(lambda: tc.run_study_file("
     "study_file(executor={'case_timeout': 60}), progress=False).summary().splitlines()[0]))"),
]
