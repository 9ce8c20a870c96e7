"""What a structure does physically: geometry, rigid bars (``rigid/``) and compressible bars
(``compressible/``) with their compiled kernels, and the kernels' infrastructure (``kernels/``).
Imports only tenscontrol.model; never python-control."""
