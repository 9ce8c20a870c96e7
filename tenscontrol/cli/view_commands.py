"""The subcommands that draw a saved trajectory: plot and animate."""

from __future__ import annotations

from pathlib import Path

from tenscontrol.cli.common import Failed, check_target, positive_float, whole_number
from tenscontrol.simulation.trajectory_io import load_trajectory

__all__ = ["add_parsers", "violations_path"]

_IMAGES = (".png", ".pdf", ".svg")
_MOVIES = (".gif", ".mp4")


def add_parsers(commands) -> None:
    """Register plot and animate."""
    plot = commands.add_parser(
        "plot", help="plot a saved trajectory's node paths and constraint/energy violations",
        description="Plot the node paths of a trajectory file (tenscontrol simulate --out) to "
                    "--out, and its bar and energy violations beside it as "
                    "<name>-violations<suffix>.")
    plot.add_argument("file", metavar="TRAJ.npz", help="a trajectory file")
    plot.add_argument("--out", required=True, metavar="PATHS.png",
                      help=f"the node-path plot ({', '.join(_IMAGES)})")
    plot.set_defaults(run=_cmd_plot)

    anim = commands.add_parser(
        "animate", help="animate a saved trajectory as a GIF or MP4",
        description="Animate a trajectory file: members coloured by force density, slack "
                    "strings dashed (tenscontrol.plotting.animate), saved as GIF (Pillow) or "
                    "MP4 (needs ffmpeg).")
    anim.add_argument("file", metavar="TRAJ.npz", help="a trajectory file")
    anim.add_argument("--out", required=True, metavar="MOVIE.gif",
                      help=f"the animation ({', '.join(_MOVIES)})")
    anim.add_argument("--fps", type=positive_float, default=20.0,
                      help="frames per second of the movie (default: %(default)g)")
    anim.add_argument("--speed", type=positive_float, default=1.0,
                      help="simulated seconds per second of movie (default: %(default)g)")
    anim.add_argument("--max-frames", type=whole_number(2), default=300, metavar="N",
                      help="at most this many frames (default: %(default)s)")
    anim.set_defaults(run=_cmd_animate)


def violations_path(out: Path) -> Path:
    """Where ``plot`` writes the violations: ``paths.png`` -> ``paths-violations.png``."""
    return out.with_name(f"{out.stem}-violations{out.suffix}")


def _cmd_plot(args) -> int:
    from tenscontrol import plotting

    source, out = Path(args.file), Path(args.out)
    check_target(out, "--out", source, suffixes=_IMAGES)
    check_target(violations_path(out), "--out", source, suffixes=_IMAGES)
    traj = load_trajectory(source)
    for path, fig in ((out, plotting.plot_node_paths(traj)),
                      (violations_path(out), plotting.plot_violations(traj))):
        plotting.save_figure(fig, path)
        print(f"wrote {path}")
    return 0


def _cmd_animate(args) -> int:
    from tenscontrol import plotting

    source, out = Path(args.file), Path(args.out)
    check_target(out, "--out", source, suffixes=_MOVIES)
    if not hasattr(plotting, "animate"):
        raise Failed(1, "error: this tenscontrol has no plotting.animate yet; update it")
    traj = load_trajectory(source)
    anim = plotting.animate(traj, fps=args.fps, speed=args.speed, max_frames=args.max_frames)
    path = plotting.save_animation(anim, out)
    print(f"wrote {path}")
    return 0
