"""Progressive-disclosure context: L0 identity, L1 summary, L2 communities, L3 search."""
