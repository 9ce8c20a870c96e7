"""Independent reference models for the tests and benchmarks/accuracy.py."""

import numpy as np
from scipy.integrate import solve_ivp

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
