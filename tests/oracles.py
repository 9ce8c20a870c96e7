"""Independent reference models for the tests and benchmarks/accuracy.py."""

import numpy as np
import scipy.linalg
from scipy.integrate import solve_ivp
from scipy.optimize import minimize_scalar

L = 5.0
C = 5 * np.cos(np.pi / 4)


def tbar_minimal(variant, damping, t_eval, include_radius=False):
    """Independent two-angle model of the T-bar (the benchmark of Hsu et al. (2021), Fig. 2).

    theta0: angle of bar 0 at node 0 from +x; theta1: angle of bar 1 at node 1 from -x.
    I theta'' = -sum_active [k (l - l0) + c l'] (dl/dtheta)^T with I = m L^2 / 3.
    Returns node 2 and node 3 (x, z) at `t_eval`, each of shape (len(t_eval), 2).
    """
    m = 500 * np.pi * 0.05**2 * L
    inertia = m * L**2 / 3 + (m * 0.05**2 / 4 if include_radius else 0.0)
    if variant == "stedy":
        EA = 7e7 * np.pi * 1e-3**2
        l0 = np.array([1, 0.7, 1, 0.7]) * C
        k = EA / l0
        two_sided = False
    else:
        l0 = np.array([1, 0.9, 1, 0.9]) * C
        k = np.full(4, 100.0)
        two_sided = True
    n0, n1 = np.array([0.0, 0.0]), np.array([C, 0.0])

    def rhs(t, x):
        th, thd = x[:2], x[2:]
        n2 = L * np.array([np.cos(th[0]), np.sin(th[0])])
        n3 = np.array([C - L * np.cos(th[1]), L * np.sin(th[1])])
        d2 = L * np.array([-np.sin(th[0]), np.cos(th[0])])
        d3 = L * np.array([np.sin(th[1]), np.cos(th[1])])
        z = np.zeros(2)
        members = [  # (vector, d vector / d theta as 2x2 with columns theta0, theta1)
            (n2 - n1, np.column_stack([d2, z])),
            (n3 - n2, np.column_stack([-d2, d3])),
            (n0 - n3, np.column_stack([z, -d3])),
        ]
        gen = np.zeros(2)
        for idx, (s, ds) in zip((1, 2, 3), members):
            l = np.linalg.norm(s)
            dl = s @ ds / l
            if two_sided or l > l0[idx]:
                gen -= (k[idx] * (l - l0[idx]) + damping * (dl @ thd)) * dl
        return np.concatenate([thd, gen / inertia])

    sol = solve_ivp(rhs, (0, t_eval[-1]), [np.pi / 4, np.pi / 4, 0, 0], method="DOP853",
                    rtol=1e-13, atol=1e-13, t_eval=t_eval)
    th0, th1 = sol.y[0], sol.y[1]
    n2 = np.column_stack([L * np.cos(th0), L * np.sin(th0)])
    n3 = np.column_stack([C - L * np.cos(th1), L * np.sin(th1)])
    return n2, n3


def peak_gain(A, B, C, D):
    """sup_w sigma_max(C (jw I - A)^-1 B + D) of a stable system by a frequency sweep, not by
    slycot's ab13dd (which tenscontrol.linear.norms.hinf_norm calls): the gain (in modal form)
    on a log grid and at every pole's frequency |Im p|, the ten highest local maxima refined
    (bounded Brent search between grid neighbours), then evaluated with a dense solve. A lower
    bound of the H-inf norm, equal to it once the sweep has found the highest peak."""
    poles, V = np.linalg.eig(A)
    CV, VB = C @ V, np.linalg.solve(V, B)

    def modal(w):
        return scipy.linalg.svdvals((CV / (1j * w - poles)) @ VB + D)[0]

    def exact(w):
        G = C @ np.linalg.solve(1j * w * np.eye(A.shape[0]) - A, B) + D
        return scipy.linalg.svdvals(G)[0]

    grid = np.unique(np.concatenate([
        [0.0], np.geomspace(np.abs(poles).min() / 100, np.abs(poles).max() * 100, 400),
        np.abs(poles.imag)]))
    gains = np.array([modal(w) for w in grid])
    peaks = np.flatnonzero((gains[1:-1] >= gains[:-2]) & (gains[1:-1] >= gains[2:])) + 1
    found = [grid[np.argmax(gains)]]
    for i in peaks[np.argsort(gains[peaks])[::-1][:10]]:
        found.append(minimize_scalar(lambda w: -modal(w), bounds=(grid[i - 1], grid[i + 1]),
                                     method="bounded", options={"xatol": 1e-12 * grid[i + 1]}).x)
    return float(max(exact(w) for w in found))
