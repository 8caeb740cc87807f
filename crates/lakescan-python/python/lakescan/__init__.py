"""lakescan: Hive and Iceberg tables for datafusion-python, pyarrow, polars and DuckDB.

>>> import lakescan, pyarrow
>>> table = lakescan.HiveTable("/data/sales/", partitioned_by=["region"])
>>> pyarrow.table(table.scan(columns=["id"], filter="region = 'us'"))

Register a table in a datafusion-python 54.1 session with ``ctx.register_table("sales",
table)``, or add ``CREATE EXTERNAL TABLE … STORED AS HIVE|ICEBERG`` to one with
``lakescan.datafusion.register(ctx)``; ``lakescan.datafusion.session_context()`` makes a
context that has both and accepts ``SET lakescan.*``. An Iceberg catalog's tables:
``lakescan.IcebergCatalog(uri).table("ns.t")``, or ``ctx.register_catalog_provider("lake",
lakescan.IcebergCatalog(uri))``.

The sessions lakescan makes (a table's own, read by ``scan``, and ``session_context()``'s
when no config is given) read batches of ``BATCH_SIZE`` rows, ``pyarrow.dataset``'s batch
size: each batch reaching Python is imported on its own, at a cost per batch.

lakescan's native code allocates with its own allocator, mimalloc (``ALLOCATOR`` names it
and its version), as datafusion-python does; Python and other libraries keep theirs.
"""

from ._lakescan import (
    ALLOCATOR,
    BATCH_SIZE,
    DATAFUSION_REQUIREMENT,
    ArrowStream,
    HiveTable,
    IcebergCatalog,
    IcebergTable,
    Settings,
    Table,
    TableFactory,
    __version__,
)

__all__ = [
    "ALLOCATOR",
    "BATCH_SIZE",
    "DATAFUSION_REQUIREMENT",
    "ArrowStream",
    "HiveTable",
    "IcebergCatalog",
    "IcebergTable",
    "Settings",
    "Table",
    "TableFactory",
    "__version__",
]
