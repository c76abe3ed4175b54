"""Quarterdeck: hosting turn-based board games to tournament standard."""
