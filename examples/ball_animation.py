"""An animation of the ball under its load, saved as a GIF.

The ball of the catalog (6 rigid bars, 32 strings, dampers of 1 N s/m), prestressed with at
least 40 N/m in every string, is driven by ``catalog.ball_load()`` for 1.5 s. The animation
colours each string by its force density [N/m], dashes slack ones and draws the bars thick;
it is saved at 20 frames per second in real time. Prints the run and the GIF's size and
frame count.

In a notebook, show the animation instead with
``from IPython.display import HTML; HTML(anim.to_jshtml())``.

Usage: python examples/ball_animation.py [OUTPUT_DIR]   (default: a new temporary directory)
"""

import pathlib
import sys
import tempfile

import numpy as np
from PIL import Image

import tenscontrol as tc
from tenscontrol import plotting

T_FINAL = 1.5  # [s]


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="ball-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    ball = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    traj = tc.simulate(ball, T_FINAL, loads=tc.catalog.ball_load(),
                       t_eval=np.linspace(0.0, T_FINAL, 301))
    print(traj)
    anim = plotting.animate(traj, fps=20)
    path = plotting.save_animation(anim, out / "ball.gif")
    with Image.open(path) as gif:
        frames, (width, height) = gif.n_frames, gif.size
    print(f"{path.name}: {path.stat().st_size} bytes, {frames} frames, {width} x {height} px")


if __name__ == "__main__":
    main()
