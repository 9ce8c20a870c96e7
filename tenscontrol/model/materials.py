"""Named material presets for bars and strings.

Each preset gives a density [kg/m^3], a Young's modulus [Pa] and a Poisson's ratio [-].
The values are round handbook figures for the common grade of each material; HDPE and
aluminium carry the values of the paper's soft-versus-metallic study (Hsu et al. 2021,
Table 2). The paper's recovered Table 2 shows no Poisson row: 0.46 for HDPE is the value of
the authors' reference MATLAB code STEDY, 0.33 for aluminium the standard value for the alloy.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from tenscontrol.model.checks import show

__all__ = ["Material", "MATERIALS", "material"]


@dataclass(frozen=True)
class Material:
    """An isotropic linear-elastic material.

    Attributes
    ----------
    name : str
        Preset name.
    density : float
        Mass density [kg/m^3].
    youngs_modulus : float
        Young's modulus [Pa].
    poisson : float
        Poisson's ratio [-].
    """

    name: str
    density: float
    youngs_modulus: float
    poisson: float


MATERIALS: dict[str, Material] = {
    m.name: m
    for m in (
        Material("steel", 7850.0, 200e9, 0.30),
        Material("aluminium", 2700.0, 68e9, 0.33),
        Material("titanium", 4430.0, 114e9, 0.34),
        Material("hdpe", 960.0, 1e9, 0.46),
        Material("nylon", 1150.0, 2e9, 0.39),
        Material("pla", 1240.0, 3.5e9, 0.36),
    )
}


def material(name: str) -> Material:
    """Return the preset called `name`.

    Raises
    ------
    ValueError
        If there is no such preset; the message lists the presets and the closest name.
    """
    if not isinstance(name, str):
        raise ValueError(f"a material is named by a string, got {show(name)}; presets: "
                         f"{', '.join(sorted(MATERIALS))}")
    try:
        return MATERIALS[name]
    except KeyError:
        close = difflib.get_close_matches(name, MATERIALS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"unknown material {show(name)}{hint}; presets: {', '.join(sorted(MATERIALS))}"
        ) from None
