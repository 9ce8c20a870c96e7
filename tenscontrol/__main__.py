"""``python -m tenscontrol``: the ``tenscontrol`` command."""

import sys

from tenscontrol.cli import main

if __name__ == "__main__":
    sys.exit(main())
