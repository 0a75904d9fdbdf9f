"""Training of the games' value models: search-labelled positions from seeded
self-play (``hortus.training.data``), a tiny numpy model (``hortus.training.fit``), and the
checksummed file the search loads (``hortus.search.evaluation``). One command per game:
``hortus train --game NAME`` (``hortus.training.cli``).

The service never imports this package; it needs numpy only (torch is not used).
"""
