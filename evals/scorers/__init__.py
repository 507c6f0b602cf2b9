"""Per-benchmark scoring: each module reproduces its references' rules, one profile each."""
