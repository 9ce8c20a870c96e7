"""Where the tension-bounded MPC's floor fails between samples (issue 30, item 3): a diagnosis.

The 3-prism of ``bench_mpc.py floor`` (``kind="passive"``, gamma_min 5 N/m, period 5 ms,
horizon 10, the doublet of twice the amplitude at which the continuous LQR first goes slack,
2.5 s, 20 output points per period), with or without a computation delay of half a period.
For every hold in which a commanded string's applied force density (the simulator's, from the
simulated string lengths) falls below gamma_min, one row per string: the sample time, the
string, whether the QP bounds it inside the hold (``held_over_period``) and its authority, the
first move's state (``held_last``; ``at floor``: the command sits on its bound at the sample),
the least applied density in the hold (simulated) and the QP's prediction at the hold's
points (:meth:`PredictiveController.hold_prediction`), both at the worst point, and the split of
the prediction error: ``load`` is the unknown doublet's share, the law's change over the hold
from the nodal force held at its sampled value on the full linear model (``E d``, exact hold);
``rest`` is the remainder (the nonlinearity, the reduction and the first-order rate term).

Run: ``python benchmarks/bench_mpc_floor_gap.py [--tbar] [--delay] [--amplitude A]`` (the
T-bar's case in place of the 3-prism's; A in N skips the bisection for a*: 18.75 for the
3-prism's 2 a*, 78.125 for the T-bar's).
"""

import sys

import numpy as np

import tenscontrol as tc
from tenscontrol.linear.sampling import exact_hold

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_mpc import DENSE, FLOOR, PERIOD, T_FINAL, critical, floor_cases  # noqa: E402

# a point counts as below the floor under this (the floor's rounding: bench_mpc's threshold)
_BELOW = 1e-9


def recorded(controller):
    """`controller` whose update keeps (t, q, qd, u_prev, u, info) of every sample (from the
    last initial_state on: that one's own update at the operating point is not a sample)."""
    samples, update, initial = [], controller.update, controller.initial_state

    def start():
        x = initial()
        samples.clear()
        return x
    controller.initial_state = start

    def keep(k, t, q, qd, xk):
        u, x = update(k, t, q, qd, xk)
        samples.append((t, q.copy(), qd.copy(), xk.copy(), u.copy(), controller.sample_info()))
        return u, x
    controller.update = keep
    return samples


def load_share(model, strings, taus, d):
    """The law's change at the points taus (M,) [s] from the nodal forces d (nq,) [N] held
    from zero state on the full linear model, (M, nu) [N/m]."""
    nq = model.q.size
    grad = model.force_density_gradient[strings]
    out = []
    for tau in taus:
        _, Gamma = exact_hold(model.A, model.E @ d[:, None], tau)
        out.append(grad @ Gamma[:nq, 0])
    return np.array(out)


def main(argv):
    delay = 0.5 * PERIOD if "--delay" in argv else 0.0
    name, s, outputs, where = floor_cases()[0 if "--tbar" in argv else 1]
    model = tc.linearize(s, kind="passive", outputs=outputs)
    amplitude = (float(argv[argv.index("--amplitude") + 1]) if "--amplitude" in argv
                 else 2 * critical(s, model, where))
    m = tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2, delay=delay).controller
    samples = recorded(m)
    loads = tc.doublet(s, where, amplitude)
    t = np.linspace(0.0, T_FINAL, int(round(T_FINAL / PERIOD)) * DENSE + 1)
    run = tc.simulate(s, T_FINAL, loads=loads, controller=m, t_eval=t, max_step=5e-3)
    applied = run.control.applied
    full = tc.linearize(s, kind="passive")
    strings = np.asarray(m.strings)        # the full model's inputs: strings first
    print(f"{name} passive, doublet {amplitude:.2f} N, delay {1e3 * delay:g} ms: least applied "
          f"{applied.min():.4f} N/m (at samples {applied[::DENSE].min():.4f}); authority "
          f"{np.array2string(m.authority, precision=3)}; bounded in the hold "
          f"{np.flatnonzero(m.held_over_period).tolist()}")
    print(f"{'t_k [s]':>8} {'string':>6} {'rows':>5} {'auth':>5} {'held':>4} {'at floor':>8} "
          f"{'least sim':>9} {'point':>5} {'sim':>8} {'QP pred':>8} {'error':>8} {'load':>8} "
          f"{'rest':>8}")
    rows = 0
    for k, (tk, q, qd, u_prev, u, info) in enumerate(samples):
        inside = (t > tk + delay + 1e-12) & (t < tk + delay + PERIOD + 1e-12)
        low = applied[inside].min(axis=0)
        bad = np.flatnonzero(low < FLOOR - _BELOW)
        if not bad.size:
            continue
        taus, pred = m.hold_prediction(q, qd, u_prev, u)
        # the oracle: the applied density from the simulated string lengths with this
        # sample's command (at the hold's end too, where the record has the next command's)
        idx = [int(np.argmin(np.abs(t - (tk + tau)))) for tau in taus]
        sim = np.array([np.clip(m.elastic_law(run.nodes[i].reshape(-1)) + u, 0.0, None)
                        for i in idx])
        base = m.elastic_law(q)
        share = load_share(full, strings, taus, loads(tk).reshape(-1))
        for c in bad:
            j = int(np.argmin(sim[:, c]))
            err = sim[j, c] - pred[j, c]
            print(f"{tk:>8.3f} {int(m.strings[c]):>6} {'yes' if m.held_over_period[c] else 'no':>5}"
                  f" {m.authority[c]:>5.2f} {info['held_last']:>4} "
                  f"{'yes' if np.isclose(u[c] + base[c], FLOOR) else 'no':>8} {low[c]:>9.4f} "
                  f"{j + 1:>5} {sim[j, c]:>8.4f} {pred[j, c]:>8.4f} {err:>8.4f} "
                  f"{share[j, c]:>8.4f} {err - share[j, c]:>8.4f}")
            rows += 1
    print(f"{rows} string-holds below the floor")


if __name__ == "__main__":
    main(sys.argv[1:])
