"""ODE integrators (Dormand-Prince 5(4), Radau IIA): knows nothing of tensegrity.

:data:`INTEGRATORS` maps the public method names to their classes; all of them take the
arguments and give the results of :class:`tenscontrol.integrate.base.Integrator`.
"""

from tenscontrol.integrate.base import (DEFAULT_MAX_STEPS, Integrator, IntegratorStats, Step,
                                        StepLimitError, StepSizeError)
from tenscontrol.integrate.dopri import Dopri54, DopriStep
from tenscontrol.integrate.radau import Radau5, RadauStep

__all__ = ["DEFAULT_MAX_STEPS", "INTEGRATORS", "Dopri54", "DopriStep", "Integrator",
           "IntegratorStats", "Radau5", "RadauStep", "Step", "StepLimitError", "StepSizeError"]

INTEGRATORS: dict[str, type[Integrator]] = {cls.name: cls for cls in (Dopri54, Radau5)}
