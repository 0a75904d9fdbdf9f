"""The gRPC service ``hortus.v1.Advisor``: servicer, configuration, errors, health, reflection.

```python
from hortus.server import ServerConfig, create_server, serve
server, port = create_server("127.0.0.1:0", ServerConfig(default_iterations=500))  # started
...
server.stop(grace=1.0)
serve("127.0.0.1:50051")  # blocking; SIGTERM/SIGINT shut it down gracefully
```
"""

from __future__ import annotations

from hortus.server.app import DEFAULT_ADDRESS, RunningServer, ServerTls, build_server, create_server, serve
from hortus.server.config import ServerConfig
from hortus.server.errors import CapacityError, NoAnswerError, RequestError, error_answer, status_for
from hortus.server.service import AdvisorServicer

__all__ = [
    "DEFAULT_ADDRESS",
    "AdvisorServicer",
    "CapacityError",
    "NoAnswerError",
    "RequestError",
    "RunningServer",
    "ServerConfig",
    "ServerTls",
    "build_server",
    "error_answer",
    "create_server",
    "serve",
    "status_for",
]
