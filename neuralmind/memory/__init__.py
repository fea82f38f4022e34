"""Memory: atoms (decisions, lessons, preferences, facts, notes, open loops) with hubs and
typed edges in one SQLite store; recall, rank and forgetting, feedback, promotion, dreams."""
