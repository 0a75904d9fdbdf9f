"""Botanik (2 players): the Registry, freed tiles and pipe machines. See game.py."""
