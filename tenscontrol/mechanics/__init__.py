"""What a structure does physically: geometry, rigid and compressible bars (with their compiled
kernels), statics and stiffness. Imports only tenscontrol.model; never python-control."""
