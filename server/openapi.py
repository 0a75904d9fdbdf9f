"""An OpenAPI 3.1 description of the web port's HTTP surface, made from the protobuf
descriptors of ``advisor.proto`` (so it cannot drift from the proto): every unary RPC as a
Connect JSON ``POST`` (and ``GET`` for the ``NO_SIDE_EFFECTS`` ones), every server stream as
NDJSON, the Connect error JSON, and the probes. Served at ``/openapi.json``.

The document is made at build time (``setup.py`` runs this module over the descriptor set
``protoc`` writes for ``advisor.proto``) and shipped in the package as ``hortus/v1/openapi.json``;
the web port serves that file (``openapi_json``).

Schemas follow the protobuf JSON mapping as ``json_format`` writes and reads it: lowerCamelCase
names, 64-bit integers as strings (a number is accepted on input), enums by name, bytes as
base64, ``additionalProperties: false`` (an unknown field is INVALID_ARGUMENT).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, ServiceDescriptor

__all__ = ["SHIPPED", "document_json", "openapi_document", "openapi_json"]

# where the build puts the document, inside the package hortus.v1 (generated from proto/)
SHIPPED = "openapi.json"

_F = FieldDescriptor
_INT32 = {_F.TYPE_INT32, _F.TYPE_SINT32, _F.TYPE_SFIXED32, _F.TYPE_UINT32, _F.TYPE_FIXED32}
_INT64 = {_F.TYPE_INT64, _F.TYPE_SINT64, _F.TYPE_SFIXED64, _F.TYPE_UINT64, _F.TYPE_FIXED64}
_UNSIGNED = {_F.TYPE_UINT32, _F.TYPE_FIXED32, _F.TYPE_UINT64, _F.TYPE_FIXED64}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _scalar(field: FieldDescriptor) -> dict[str, Any]:
    kind = field.type
    if kind in _INT32:
        schema: dict[str, Any] = {"type": "integer", "format": "int32" if kind not in _UNSIGNED else "uint32"}
        if kind in _UNSIGNED:
            schema["minimum"] = 0
        return schema
    if kind in _INT64:
        # the JSON mapping writes 64-bit integers as decimal strings and reads either form
        return {"oneOf": [{"type": "string", "pattern": "^-?[0-9]+$"}, {"type": "integer"}]}
    if kind in (_F.TYPE_DOUBLE, _F.TYPE_FLOAT):
        return {"oneOf": [{"type": "number"}, {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]}]}
    if kind == _F.TYPE_BOOL:
        return {"type": "boolean"}
    if kind == _F.TYPE_STRING:
        return {"type": "string"}
    if kind == _F.TYPE_BYTES:
        return {"type": "string", "contentEncoding": "base64"}
    raise ValueError(f"no JSON schema for field type {kind} of {field.full_name}")


def _repeated(field: FieldDescriptor) -> bool:
    # protobuf 6 has is_repeated (and drops label); older ones only label
    flag = getattr(field, "is_repeated", None)
    return bool(flag) if flag is not None else bool(getattr(field, "label") == _F.LABEL_REPEATED)


def _field(field: FieldDescriptor, todo: list[Descriptor | EnumDescriptor]) -> dict[str, Any]:
    if field.type == _F.TYPE_MESSAGE:
        message = field.message_type
        assert message is not None  # a message-typed field always names its message
        if message.GetOptions().map_entry:
            value = _field(message.fields_by_name["value"], todo)
            return {"type": "object", "additionalProperties": value}
        todo.append(message)
        schema = _ref(message.full_name)
    elif field.type == _F.TYPE_ENUM:
        enum = field.enum_type
        assert enum is not None  # likewise for an enum-typed field
        todo.append(enum)
        schema = _ref(enum.full_name)
    else:
        schema = _scalar(field)
    if _repeated(field):
        return {"type": "array", "items": schema}
    return schema


def _message(message: Descriptor, todo: list[Descriptor | EnumDescriptor]) -> dict[str, Any]:
    props = {field.json_name: _field(field, todo) for field in message.fields}
    return {"type": "object", "properties": props, "additionalProperties": False}


def _enum(enum: EnumDescriptor) -> dict[str, Any]:
    names = [value.name for value in enum.values]
    return {"oneOf": [{"type": "string", "enum": names}, {"type": "integer"}]}


_ERROR = {
    "type": "object",
    "description": "Connect's error JSON; each detail carries its message decoded as `debug`.",
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "details": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"type": {"type": "string"}, "value": {"type": "string"}, "debug": {"type": "object"}},
                "required": ["type", "value"],
            },
        },
    },
    "required": ["code"],
}


def openapi_document(service: ServiceDescriptor | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the web port, made from `service` (by default the
    ``Advisor`` service of the installed ``hortus.v1``; the build gives the descriptor of a
    pool it loaded from ``protoc``'s descriptor set, as ``hortus.v1`` is not importable yet)."""
    if service is None:
        from hortus.v1 import advisor_pb2 as pb

        service = pb.DESCRIPTOR.services_by_name["Advisor"]
    todo: list[Descriptor | EnumDescriptor] = []
    paths: dict[str, Any] = {}
    error_response = {"description": "the call failed", "content": {"application/json": {"schema": _ref("ConnectError")}}}
    for method in service.methods:
        if method.client_streaming:
            continue  # HTTP/1.1 carries no client stream: the gRPC port only
        todo += [method.input_type, method.output_type]
        body = {"required": True, "content": {"application/json": {"schema": _ref(method.input_type.full_name)}}}
        operations: dict[str, Any] = {}
        if method.server_streaming:
            line = {
                "type": "object",
                "description": "one line: a result, or (always last) how the stream ended",
                "properties": {"result": _ref(method.output_type.full_name), "end": _ref("ConnectError")},
            }
            # the body is one JSON message either way; application/json is what any HTTP client
            # or generator sends, application/x-ndjson says the same
            request = {"schema": _ref(method.input_type.full_name)}
            operations["post"] = {
                "operationId": method.name,
                "summary": f'{method.name} as NDJSON: one JSON object a line, the last one {{"end": ...}}',
                "requestBody": {"required": True, "content": {"application/json": request, "application/x-ndjson": request}},
                "responses": {"200": {"description": "the stream", "content": {"application/x-ndjson": {"schema": line}}}},
            }
        else:
            operations["post"] = {
                "operationId": method.name,
                "requestBody": body,
                "parameters": [
                    {
                        "name": "Connect-Protocol-Version",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string", "enum": ["1"]},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "the answer",
                        "content": {"application/json": {"schema": _ref(method.output_type.full_name)}},
                    },
                    "default": error_response,
                },
            }
            idempotency = method.GetOptions().idempotency_level
            if idempotency == descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS:
                operations["get"] = {
                    "operationId": f"{method.name}Get",
                    "parameters": [
                        {"name": "connect", "in": "query", "required": True, "schema": {"type": "string", "enum": ["v1"]}},
                        {"name": "encoding", "in": "query", "required": True, "schema": {"type": "string", "enum": ["json"]}},
                        {
                            "name": "message",
                            "in": "query",
                            "required": True,
                            "content": {"application/json": {"schema": _ref(method.input_type.full_name)}},
                        },
                    ],
                    "responses": operations["post"]["responses"],
                }
        paths[f"/{service.full_name}/{method.name}"] = operations
    probe = {
        "200": {"description": "yes", "content": {"text/plain": {"schema": {"type": "string"}}}},
        "503": {"description": "no (draining)", "content": {"text/plain": {"schema": {"type": "string"}}}},
    }
    paths["/healthz"] = {"get": {"operationId": "Healthz", "responses": {"200": probe["200"]}}}
    paths["/readyz"] = {"get": {"operationId": "Readyz", "responses": probe}}
    schemas: dict[str, Any] = {"ConnectError": _ERROR}
    while todo:
        item = todo.pop()
        if item.full_name in schemas:
            continue
        schemas[item.full_name] = _enum(item) if isinstance(item, EnumDescriptor) else _message(item, todo)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "hortus Advisor over HTTP",
            "version": "1",
            "description": "Connect JSON for unary calls, NDJSON for streams; generated from advisor.proto.",
        },
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


def document_json(document: dict[str, Any]) -> bytes:
    """The bytes of `document` as the build ships them (and the web port serves them)."""
    return json.dumps(document, indent=1, sort_keys=False).encode() + b"\n"


@lru_cache(maxsize=1)
def openapi_json() -> bytes:
    """The document the build shipped in the package (``hortus/v1/openapi.json``), read once."""
    try:
        return (resources.files("hortus.v1") / SHIPPED).read_bytes()
    except FileNotFoundError:
        raise RuntimeError(
            f"hortus/v1/{SHIPPED} is missing: the build makes it from proto/ (pip install . or pip install -e . again)"
        ) from None


if __name__ == "__main__":  # python -m hortus.server.openapi > openapi.json: made from the descriptors
    print(document_json(openapi_document()).decode(), end="")
