"""Linear analysis: linearize (the one bridge from the mechanics), minimal realizations and
elastic models, H2 and H-infinity norms, the marginal/stable split, the integrals of
sampled-data design (exact hold, Van Loan), MATLAB export and the BLAS thread policy. Imports
python-control."""
