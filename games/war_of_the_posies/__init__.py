"""Botany: War of the Posies (2-4 players): a deck-builder with data-driven cards."""
