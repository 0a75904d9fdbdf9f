"""Helpers for tests that read the rich error details of a gRPC call."""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status


def error_info(error: grpc.RpcError) -> Any:
    """The google.rpc.ErrorInfo of a failed call (AssertionError when it has none)."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    raise AssertionError("no ErrorInfo")
