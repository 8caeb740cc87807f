"""lakescan in a datafusion-python 54.1 ``SessionContext``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lakescan import TableFactory

if TYPE_CHECKING:
    from datafusion import SessionContext

__all__ = ["register"]


def register(ctx: SessionContext) -> SessionContext:
    """Adds lakescan's ``HIVE`` and ``ICEBERG`` table factories to ``ctx``.

    ``CREATE EXTERNAL TABLE … STORED AS HIVE|ICEBERG LOCATION … OPTIONS (…)`` then makes
    lakescan tables there, with the options of lakescan's SQL. Returns ``ctx``.
    """
    for kind in ("HIVE", "ICEBERG"):
        ctx.register_table_factory(kind, TableFactory(kind))
    return ctx
