"""hortus: an AI opponent and move advisor for botany board games.

Packages: ``hortus.games`` (rules), ``hortus.search`` (ISMCTS analyses and bots),
``hortus.server`` (the gRPC service), ``hortus.clients`` (thin clients and the command line),
``hortus.v1`` (generated protobuf/gRPC code), ``hortus._ext`` (the compiled core).
"""

__version__ = "0.1.0"
