"""Botanical Lab (2-4 players): a deck-builder of seeds, fertilizers and flowering plants. See game.py."""
