"""The subcommand that runs a study file: sweep."""

from __future__ import annotations

import sys

from tenscontrol.cli.common import Failed, positive_float, whole_number

__all__ = ["add_parsers"]

_EXECUTORS = ("serial", "processes", "dask")


def add_parsers(commands) -> None:
    """Register sweep."""
    sweep = commands.add_parser(
        "sweep", help="run a study file (a parameter grid or Monte Carlo samples) on an executor",
        description="Run the study a TOML (Python >= 3.11) or JSON file describes: a ready-made "
                    "pipeline (norms or lqr), a structure, the parameters (grid or seeded "
                    "samples) and an executor. Every finished case is written to the output "
                    "folder as it arrives; rerunning the same command runs only the missing "
                    "cases. Exit status: 0 all cases finished, 1 some failed (they are listed), "
                    "2 a bad file or folder, 130 interrupted (rerun to resume).")
    sweep.add_argument("file", metavar="STUDY.toml", help="the study file (.toml or .json)")
    sweep.add_argument("--out", metavar="FOLDER",
                       help="the output folder (default: the file's 'out', relative to it)")
    sweep.add_argument("--executor", choices=_EXECUTORS,
                       help="replaces the file's [executor] table: serial, processes (a process "
                            "pool) or dask (a LocalCluster, or --address)")
    sweep.add_argument("--workers", type=whole_number(1), metavar="N",
                       help="worker processes for processes or a local dask cluster")
    sweep.add_argument("--address", metavar="URL",
                       help="a dask scheduler, e.g. tcp://scheduler:8786 (with --executor dask)")
    sweep.add_argument("--case-timeout", type=positive_float, metavar="SECONDS",
                       help="the most seconds a case may run (replaces the file's "
                            "executor.case_timeout): one that runs longer is recorded as failed "
                            "(CaseTimeout) and the others go on; serial and processes kill its "
                            "worker process and start another")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep.set_defaults(run=_cmd_sweep)


def _executor(args):
    """The executor override from the options, or None to use the file's."""
    if args.executor is None:
        if args.workers is not None or args.address is not None:
            raise Failed(2, "error: --workers and --address need --executor")
        return None
    if args.address is not None and args.executor != "dask":
        raise Failed(2, "error: --address needs --executor dask")
    spec = {"kind": args.executor}
    if args.workers is not None:
        spec["workers"] = args.workers
    if args.address is not None:
        spec["address"] = args.address
    return spec


def _cmd_sweep(args) -> int:
    from tenscontrol.studies.files import run_study_file
    from tenscontrol.studies.results import StudyInterrupted

    try:
        result = run_study_file(args.file, out=args.out, executor=_executor(args),
                                progress=not args.quiet, case_timeout=args.case_timeout)
    except StudyInterrupted as exc:
        print(exc.result.summary())
        raise Failed(130, "interrupted; the finished cases are kept: rerun the same command "
                          "to run the missing ones") from None
    except ImportError as exc:  # an optional extra (dask, pandas) is missing
        raise Failed(2, f"error: {exc}") from None
    print(result.summary())
    if result.failures:
        print(f"tenscontrol: {len(result.failures)} of {len(result.failures) + len(result.records)}"
              " cases failed (listed above)", file=sys.stderr)
        return 1
    return 0
