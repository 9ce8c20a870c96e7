"""Studies over runs: closed-loop verification and soft-against-metallic comparisons."""
