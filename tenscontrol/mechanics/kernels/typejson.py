"""numba argument types as JSON, for the kernels compiled ahead of time (no pickle).

The committed signatures file (``signatures.json`` in this folder) and the manifest of a build
(``_aot.json``) name the argument types of every exported kernel. They are written with
:func:`to_json` and read back with :func:`from_json`, which rebuilds each type from its parts;
numba interns its types by key, so a rebuilt type is the very object numba's dispatch knows.
Only the kinds of type the kernels take are supported, each written explicitly:

- a scalar: its name, ``"float64"``, ``"int64"``, ``"boolean"``, ``"none"``;
- an array: ``{"array": dtype, "ndim": 2, "layout": "C", "readonly": false}``;
- a tuple: ``{"tuple": [types]}`` or ``{"unituple": type, "count": n}``;
- a named tuple: ``{"namedtuple": "module:QualName", "types": [types]}`` (or ``"namedunituple"``
  with ``"type"`` and ``"count"``), whose class is imported from its module;
- an argument left to its default: ``{"omitted": value}`` (a bool, number, string or None);
- a structref (the models' records): ``{"structref": "module:TypeClass", "fields": [[name,
  type], ...]}``, its type class imported from its module.

Any other type raises a TypeError that names it, so that a kernel with such an argument is
left to the JIT rather than written down wrongly.
"""

from __future__ import annotations

import importlib

from numba.core import types

__all__ = ["from_json", "to_json"]

# the scalar types by name: numba's own names, which str() of the type gives back
_SCALARS = {str(t): t for t in (types.boolean, types.none, types.int8, types.int16, types.int32,
                                types.int64, types.uint8, types.uint16, types.uint32,
                                types.uint64, types.float32, types.float64, types.complex64,
                                types.complex128)}


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _import_class(name: str) -> type:
    module, _, qualname = name.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise TypeError(f"{name} is not a class")
    return obj


def to_json(t: types.Type):
    """The JSON value (str, dict) that :func:`from_json` rebuilds `t` from.

    Raises
    ------
    TypeError
        For a kind of type that is not supported (it names the type).
    """
    if type(t) in (types.Boolean, types.Integer, types.Float, types.Complex, types.NoneType) \
            and _SCALARS.get(str(t)) == t:
        return str(t)
    if type(t) is types.Array:
        if not t.aligned:
            raise TypeError(f"unaligned array type {t} is not supported")
        return {"array": to_json(t.dtype), "ndim": t.ndim, "layout": t.layout,
                "readonly": not t.mutable}
    if type(t) is types.UniTuple:
        return {"unituple": to_json(t.dtype), "count": t.count}
    if type(t) is types.Tuple:
        return {"tuple": [to_json(e) for e in t.types]}
    if type(t) is types.NamedUniTuple:
        return {"namedunituple": _class_name(t.instance_class), "type": to_json(t.dtype),
                "count": t.count}
    if type(t) is types.NamedTuple:
        return {"namedtuple": _class_name(t.instance_class),
                "types": [to_json(e) for e in t.types]}
    if type(t) is types.Omitted and (t.value is None
                                     or type(t.value) in (bool, int, float, str)):
        return {"omitted": t.value}
    if isinstance(t, types.StructRef) and type(t).__module__ != types.StructRef.__module__:
        return {"structref": _class_name(type(t)),
                "fields": [[name, to_json(f)] for name, f in t.field_dict.items()]}
    raise TypeError(f"numba type {t!r} ({type(t).__name__}) cannot be written as JSON: "
                    "only scalars, arrays, tuples, named tuples and structrefs are supported")


def from_json(value) -> types.Type:
    """The numba type that :func:`to_json` wrote as `value`.

    Raises
    ------
    TypeError
        For a value that no supported type writes (or a named tuple class that is not one).
    """
    if isinstance(value, str):
        if value not in _SCALARS:
            raise TypeError(f"unknown scalar type {value!r}")
        return _SCALARS[value]
    if isinstance(value, dict):
        if "array" in value:
            return types.Array(from_json(value["array"]), int(value["ndim"]),
                               str(value["layout"]), readonly=bool(value["readonly"]))
        if "unituple" in value:
            return types.UniTuple(from_json(value["unituple"]), int(value["count"]))
        if "tuple" in value:
            return types.Tuple([from_json(e) for e in value["tuple"]])
        if "namedunituple" in value:
            return types.NamedUniTuple(from_json(value["type"]), int(value["count"]),
                                       _import_class(value["namedunituple"]))
        if "namedtuple" in value:
            return types.NamedTuple([from_json(e) for e in value["types"]],
                                    _import_class(value["namedtuple"]))
        if "omitted" in value:
            return types.Omitted(value["omitted"])
        if "structref" in value:
            cls = _import_class(value["structref"])
            if not issubclass(cls, types.StructRef):
                raise TypeError(f"{value['structref']} is not a numba StructRef type")
            return cls([(str(name), from_json(f)) for name, f in value["fields"]])
    raise TypeError(f"not a numba type written by to_json: {value!r}")
