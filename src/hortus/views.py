"""Structured positions: a game's view dictionary (``State.view(seat)``) and its protobuf
message (``hortus.v1.StructuredPosition``), converted both ways by the conventions of
``proto/hortus/v1/positions.proto`` (no game-specific code: a new game only adds its message).

Pure protobuf: the server uses it too, and importing it loads no engine.

```python
view = {"seat": 0, "stage": "registry", "top": [43, 33, 5, 4, 0], ...}
message = view_to_structured("botanik", view, seed=7)   # hortus.v1.StructuredPosition
game, again = structured_to_view(message)              # ("botanik", {...}), seed in message.seed
```
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from hortus.v1 import positions_pb2

__all__ = ["ViewError", "canonical_view", "structured_games", "structured_to_view", "view_digest", "view_to_structured"]

_Field = Any  # a protobuf FieldDescriptor (the stubs' upb/python split defeats precise types)
_LIST = positions_pb2.VIEW_SHAPE_LIST
_TUPLE = positions_pb2.VIEW_SHAPE_TUPLE


class ViewError(ValueError):
    """A view does not fit its message (``field`` is the path, e.g. ``"machines[0][2]"``)."""

    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.description = description


def _shape(descriptor: Any) -> int:
    extension: Any = positions_pb2.view_shape
    shape: int = descriptor.GetOptions().Extensions[extension]
    return shape


def structured_games() -> list[str]:
    """The games that have a structured view message (the fields of the ``view`` oneof)."""
    oneof = positions_pb2.StructuredPosition.DESCRIPTOR.oneofs_by_name["view"]
    return [f.name for f in oneof.fields]


# --- message -> view ---------------------------------------------------------------------------
def _value(field: _Field, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _message(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return bytes(value)
    return value


def _message(message: Message) -> Any:
    descriptor: Any = message.DESCRIPTOR
    shape = _shape(descriptor)
    if shape == _LIST:
        field = descriptor.fields_by_name["values"]
        return [_value(field, v) for v in getattr(message, "values")]
    if shape == _TUPLE:
        return [_value(f, getattr(message, f.name)) for f in sorted(descriptor.fields, key=lambda f: f.number)]
    out: dict[str, Any] = {}
    for field in descriptor.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            out[field.name] = {k: (_message(v) if isinstance(v, Message) else v) for k, v in value.items()}
        elif field.is_repeated:
            if field.type == FieldDescriptor.TYPE_STRING:  # "" = a null entry
                out[field.name] = [None if v == "" else v for v in value]
            else:
                out[field.name] = [_value(field, v) for v in value]
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            out[field.name] = _message(value) if message.HasField(field.name) else {}
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None  # an unset `optional` field: null
        elif field.type == FieldDescriptor.TYPE_STRING and value == "":
            continue  # absent: the game's default applies
        else:
            out[field.name] = _value(field, value)
    return out


def structured_to_view(structured: positions_pb2.StructuredPosition) -> tuple[str, dict[str, Any]]:
    """The game name and its view dictionary (ready for ``Game.from_view``)."""
    name = structured.WhichOneof("view")
    if name is None:
        raise ViewError("structured", "no game view is set")
    view = _message(getattr(structured, name))
    assert isinstance(view, dict)
    return name, view


# --- view -> message ---------------------------------------------------------------------------
def _fill_value(field: _Field, value: Any, path: str, target: Message | None) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        assert target is not None
        _fill(target, value, path)
        return None
    if field.type == FieldDescriptor.TYPE_STRING:
        if value is None:
            return ""  # null: absent
        if not isinstance(value, str):
            raise ViewError(path, "expected a string")
        return value
    if field.type == FieldDescriptor.TYPE_BOOL:
        if not isinstance(value, bool):
            raise ViewError(path, "expected true or false")
        return value
    if field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ViewError(path, "expected a number")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ViewError(path, "expected an integer")
    return value


def _fill(message: Message, value: Any, path: str) -> None:
    descriptor: Any = message.DESCRIPTOR
    shape = _shape(descriptor)
    try:
        if shape in (_LIST, _TUPLE):
            if not isinstance(value, (list, tuple)):
                raise ViewError(path, "expected a list")
            if shape == _LIST:
                field = descriptor.fields_by_name["values"]
                _fill_repeated(message, field, value, path)
                return
            fields = sorted(descriptor.fields, key=lambda f: f.number)
            if len(value) != len(fields):
                raise ViewError(path, f"expected {len(fields)} values ({', '.join(f.name for f in fields)})")
            for i, (field, item) in enumerate(zip(fields, value)):
                _set(message, field, item, f"{path}[{i}]")
            return
        if not isinstance(value, Mapping):
            raise ViewError(path, "expected an object")
        for key, item in value.items():
            field = descriptor.fields_by_name.get(key)
            if field is None:
                continue  # derived or informative keys (e.g. "game", "tile_names")
            sub = f"{path}.{key}" if path else key
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                if not isinstance(item, Mapping):
                    raise ViewError(sub, "expected an object")
                _fill_map(message, field, item, sub)
            elif item is None and field.has_presence and field.type != FieldDescriptor.TYPE_MESSAGE:
                message.ClearField(key)  # null: an unset `optional` field
            elif field.is_repeated:
                if not isinstance(item, (list, tuple)):
                    raise ViewError(sub, "expected a list")
                _fill_repeated(message, field, item, sub)
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                _fill(getattr(message, key), item, sub)
            else:
                _set(message, field, item, sub)
    except (ValueError, TypeError) as exc:  # protobuf range checks (e.g. int32 overflow)
        if isinstance(exc, ViewError):
            raise
        raise ViewError(path or "view", str(exc)) from exc


def _set(message: Message, field: _Field, item: Any, path: str) -> None:
    try:
        setattr(message, field.name, _fill_value(field, item, path, None))
    except (ValueError, TypeError) as exc:  # protobuf range checks (e.g. int32 overflow)
        if isinstance(exc, ViewError):
            raise
        raise ViewError(path, str(exc)) from exc


def _fill_map(message: Message, field: _Field, items: Mapping[Any, Any], path: str) -> None:
    container: Any = getattr(message, field.name)
    key_field = field.message_type.fields_by_name["key"]
    value_field = field.message_type.fields_by_name["value"]
    for k, item in items.items():
        sub = f"{path}[{k!r}]"
        key = _fill_value(key_field, k, sub, None)
        if value_field.type == FieldDescriptor.TYPE_MESSAGE:
            _fill(container[key], item, sub)
            continue
        try:
            container[key] = _fill_value(value_field, item, sub, None)
        except (ValueError, TypeError) as exc:  # protobuf range checks (e.g. int32 overflow)
            if isinstance(exc, ViewError):
                raise
            raise ViewError(sub, str(exc)) from exc


def _fill_repeated(message: Message, field: _Field, items: Any, path: str) -> None:
    container = getattr(message, field.name)
    for i, item in enumerate(items):
        sub = f"{path}[{i}]"
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            _fill(container.add(), item, sub)
        else:
            try:
                container.append(_fill_value(field, item, sub, None))
            except (ValueError, TypeError) as exc:
                if isinstance(exc, ViewError):
                    raise
                raise ViewError(sub, str(exc)) from exc


def view_to_structured(game: str, view: Mapping[str, Any], seed: int = 0) -> positions_pb2.StructuredPosition:
    """The structured position of `game` for a view dictionary (unknown keys are ignored)."""
    if game not in structured_games():
        raise ViewError("game", f"{game!r} has no structured view message (known: {structured_games()})")
    structured = positions_pb2.StructuredPosition(seed=seed)
    target = getattr(structured, game)
    target.SetInParent()
    _fill(target, view, "")
    return structured


# --- the canonical view and its digest ---------------------------------------------------------
def canonical_view(view: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a view dictionary (``State.view(seat)``): UTF-8 JSON with sorted
    keys and no spaces, so that equal views give equal bytes in any language."""
    return json.dumps(view, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def view_digest(view: Mapping[str, Any]) -> str:
    """SHA-256 of ``canonical_view(view)``, 64 hex digits: ``Analysis.view_digest``. An
    answer carrying it depends on that view alone (the search uses only what the seat to move
    sees), so whoever holds the view can recompute the digest and ask the same question with
    the view as its position to check the answer."""
    return hashlib.sha256(canonical_view(view)).hexdigest()
