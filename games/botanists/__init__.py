"""Botanists (1-4 players; 1 = the solo Little Helper variant). See game.py."""
