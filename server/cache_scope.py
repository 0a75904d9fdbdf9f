"""Who may share an answer of the answer cache: the *scope* that goes into its key.

A hit answers in about a millisecond and a miss searches for tens of milliseconds or more, so
a cache shared by everyone tells a client whether somebody asked the very same request before.
For a position that hides something that is an oracle: a seat rebuilds the position once per
completion of its own view (three or four in Botanical Lab late in a game, dozens in
Botanists), replays another seat's request (same limits, same seed) for each, and the
completion that answers fast is the real one: the hidden cards, the deck's order.

So an answer about a position of a game that can hide something is shared only with the same
client identity (``client_identity``): the completions another client replays all miss and
are searched like any new request, so their timing is the search's and says nothing of what
was asked before. A client still gets its own repeated requests from the cache (a hint asked
again, a retried call, an undo), which is where the hits come from. Only positions of a game
that hides nothing (``Game.hides_information`` False: every seat's view is the whole position)
are shared by all clients: there is nothing to learn about them.

Why not decide per position (share a position that happens to hide nothing at the moment)?
Game-agnostic code can only test that by re-dealing each seat's view and comparing, which is
unsound (a re-deal of a position with two completions matches the real one half the time) and
costs 1-5 ms, as much as the hit it would enable; it would apply to about 3% of the positions
of the games that hide something (``docs/security.md``).

The identity: the client certificate's digest on a mutual-TLS port, else the peer's IP address
(without its port, so a client's new connections keep their scope; on the web port the address
``--trusted-proxy`` rules give). Clients behind one address (a NAT, a proxy that is not
configured as trusted) share a scope.
"""

from __future__ import annotations

import hashlib
import urllib.parse
from typing import Any

from hortus.games import State
from hortus.server.routing import forwarded_identity

__all__ = ["SHARED", "cache_scope", "client_identity"]

SHARED = "shared"
"""The scope of answers every client may share (positions that hide nothing)."""


def _address(peer: str) -> str:
    """The address of a peer string (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678`` or URL-encoded
    ``ipv6:%5B::1%5D:5678``, ``web:1.2.3.4:5678``, ``web:::1:5678``, ``unix:/path``) without
    its port, as ``ip:<address>``; other peers as they are."""
    kind, sep, rest = peer.partition(":")
    if not sep or kind not in ("ipv4", "ipv6", "web"):
        return peer
    rest = urllib.parse.unquote(rest)
    host, colon, port = rest.rpartition(":")
    if not colon or not port.isdigit():
        host = rest  # no port
    host = host.strip("[]")
    return f"ip:[{host}]" if ":" in host else f"ip:{host}"


def client_identity(context: Any) -> str:
    """Who is calling, as far as the port can tell: ``cert:<sha256>`` of a verified client
    certificate, else ``ip:<address>`` (the same for the gRPC and the web port); for a call
    another worker of the group forwarded (``hortus.server.routing``), the identity it passed."""
    forwarded = forwarded_identity(context)
    if forwarded is not None:
        return forwarded
    auth = getattr(context, "auth_context", None)
    if callable(auth):
        try:
            properties = auth() or {}
        except Exception:  # noqa: BLE001 - a context without an auth context
            properties = {}
        certificate = properties.get("x509_pem_cert") or ()
        if certificate:
            return "cert:" + hashlib.sha256(certificate[0]).hexdigest()
    peer = getattr(context, "peer", None)
    return _address(str(peer())) if callable(peer) else "?"


def cache_scope(state: State, context: Any) -> str:
    """The scope of the answer about `state` asked through `context` (see the module)."""
    if not state.game.hides_information:
        return SHARED
    return client_identity(context)
