"""A pyarrow schema as the SQL column list ``CREATE EXTERNAL TABLE`` takes, for
``HiveTable(schema=pyarrow_schema)``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.types as pat

_PLAIN = [
    (pat.is_boolean, "BOOLEAN"),
    (pat.is_int8, "TINYINT"),
    (pat.is_int16, "SMALLINT"),
    (pat.is_int32, "INT"),
    (pat.is_int64, "BIGINT"),
    (pat.is_uint8, "TINYINT UNSIGNED"),
    (pat.is_uint16, "SMALLINT UNSIGNED"),
    (pat.is_uint32, "INT UNSIGNED"),
    (pat.is_uint64, "BIGINT UNSIGNED"),
    (pat.is_float32, "REAL"),
    (pat.is_float64, "DOUBLE"),
    (pat.is_string, "VARCHAR"),
    (pat.is_large_string, "VARCHAR"),
    (pat.is_string_view, "VARCHAR"),
    (pat.is_binary, "BYTEA"),
    (pat.is_large_binary, "BYTEA"),
    (pat.is_binary_view, "BYTEA"),
    (pat.is_date32, "DATE"),
]

#: SQL's TIMESTAMP(p) by the unit of an Arrow timestamp.
_PRECISION = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_type(data_type: pa.DataType) -> str:
    """The SQL type DataFusion reads as ``data_type``; a ``ValueError`` naming the type when
    there is none."""
    for test, name in _PLAIN:
        if test(data_type):
            return name
    if pat.is_decimal128(data_type):
        return f"DECIMAL({data_type.precision}, {data_type.scale})"
    if pat.is_timestamp(data_type):
        with_zone = " WITH TIME ZONE" if data_type.tz is not None else ""
        return f"TIMESTAMP({_PRECISION[data_type.unit]}){with_zone}"
    if pat.is_list(data_type) or pat.is_large_list(data_type):
        return f"{sql_type(data_type.value_type)}[]"
    if pat.is_struct(data_type):
        fields = ", ".join(
            f"{_identifier(data_type.field(i).name)} {sql_type(data_type.field(i).type)}"
            for i in range(data_type.num_fields)
        )
        return f"STRUCT<{fields}>"
    raise ValueError(
        f"HiveTable: the Arrow type {data_type} has no SQL type lakescan's CREATE EXTERNAL TABLE "
        f"takes; give the schema as SQL text (\"id BIGINT, name VARCHAR\")"
    )


def sql_columns(schema: object) -> str:
    """``schema`` (a ``pyarrow.Schema`` or any object with ``__arrow_c_schema__``) as a SQL
    column list: ``"id" BIGINT, "name" VARCHAR``."""
    if not isinstance(schema, pa.Schema):
        schema = pa.schema(schema)
    return ", ".join(f"{_identifier(field.name)} {sql_type(field.type)}" for field in schema)
