"""``SET lakescan.*`` in datafusion-python: ``lakescan.datafusion.session_context()`` and
``lakescan.Settings`` put lakescan's settings in the session, scans and ``CREATE EXTERNAL
TABLE`` read them, and a bad value or an unknown setting is an error naming it; the
caller's batch size and target partitions shape the scan; the sessions the package makes read
batches of ``lakescan.BATCH_SIZE`` rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pytest
from datafusion import SessionConfig, SessionContext

import lakescan
import lakescan.datafusion


@pytest.fixture(scope="module")
def orc_table(tmp_path_factory) -> Path:
    """A Hive table of ORC files written by pyarrow, partitioned by ``region``."""
    root = tmp_path_factory.mktemp("orc")
    for region, ids in (("eu", [1, 2]), ("us", [3])):
        directory = root / f"region={region}"
        directory.mkdir()
        orc.write_table(pa.table({"id": pa.array(ids, pa.int64())}), directory / "part-0.orc")
    return root


def create(ctx: SessionContext, root: Path) -> None:
    # Columns declared, no 'format' option: the format is lakescan.hive_default_format.
    ctx.sql(
        f"CREATE EXTERNAL TABLE t (id BIGINT, region VARCHAR) STORED AS HIVE "
        f"PARTITIONED BY (region) LOCATION '{root}'"
    )


def test_set_reaches_create_external_table(orc_table: Path) -> None:
    ctx = lakescan.datafusion.session_context()
    create(ctx, orc_table)
    # The default format is Parquet: the ORC files are refused by name.
    with pytest.raises(Exception, match="part-0.orc': it is an ORC file"):
        ctx.sql("SELECT * FROM t").collect()
    ctx.sql("SET lakescan.hive_default_format = 'orc'")
    ctx.deregister_table("t")
    create(ctx, orc_table)
    got = ctx.sql("SELECT id, region FROM t ORDER BY id").to_pydict()
    assert got == {"id": [1, 2, 3], "region": ["eu", "eu", "us"]}


def test_bad_values_and_unknown_settings_are_errors_naming_them(orc_table: Path) -> None:
    ctx = lakescan.datafusion.session_context(settings=lakescan.Settings(hive_default_format="orc"))
    create(ctx, orc_table)
    ctx.sql("SET lakescan.split_size = 'lots'")
    with pytest.raises(Exception, match="lakescan.split_size = 'lots'.*Error parsing 'lots'"):
        ctx.sql("SELECT count(*) FROM t").collect()
    ctx.sql("SET lakescan.split_size = '1000'")
    assert ctx.sql("SELECT count(*) AS n FROM t").to_pydict() == {"n": [3]}
    ctx.sql("SET lakescan.no_such_setting = 1")
    with pytest.raises(Exception, match="no_such_setting.*not found"):
        ctx.sql("SELECT count(*) FROM t").collect()


def test_settings_object(orc_table: Path) -> None:
    with pytest.raises(ValueError, match="split_size"):
        lakescan.Settings(split_size="lots")
    with pytest.raises(ValueError, match="no_such_setting"):
        lakescan.Settings(no_such_setting=1)
    settings = lakescan.Settings(preload_splits=2, hive_default_format="orc")
    assert "preload_splits=2" in repr(settings) and "hive_default_format=orc" in repr(settings)
    # Installed by hand in a datafusion-python SessionConfig.
    ctx = lakescan.datafusion.register(SessionContext(SessionConfig().with_extension(settings)))
    create(ctx, orc_table)
    assert ctx.sql("SELECT sum(id) AS s FROM t").to_pydict() == {"s": [6]}
    # Without them, datafusion-python itself refuses the namespace.
    with pytest.raises(Exception, match='namespace "lakescan"'):
        SessionContext().sql("SET lakescan.split_size = 5")


def test_the_callers_batch_size_and_partitions_shape_the_scan(tmp_path: Path) -> None:
    """The caller's ``datafusion.execution`` batch size and target partitions reach the scan,
    which runs in lakescan's own session."""
    import pyarrow.parquet as pq

    for number in range(4):
        ids = pa.array(range(number * 3000, (number + 1) * 3000), pa.int64())
        pq.write_table(pa.table({"id": ids}), tmp_path / f"part-{number}.parquet")

    def scanned(config: SessionConfig) -> tuple[list[int], int]:
        ctx = lakescan.datafusion.session_context(config)
        ctx.sql(f"CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{tmp_path}/'")
        sizes = [batch.to_pyarrow().num_rows for batch in ctx.sql("SELECT id FROM t").execute_stream()]
        return sizes, ctx.sql("SELECT id FROM t").execution_plan().partition_count

    sizes, partitions = scanned(SessionConfig().with_batch_size(1000).with_target_partitions(3))
    assert sum(sizes) == 12000 and max(sizes) == 1000 and len(sizes) == 12
    assert partitions == 3
    sizes, partitions = scanned(SessionConfig().with_batch_size(8192).with_target_partitions(1))
    assert sum(sizes) == 12000 and max(sizes) == 3000 and len(sizes) == 4
    assert partitions == 1


def test_the_packages_own_sessions_read_batches_of_batch_size_rows(tmp_path: Path) -> None:
    """A table's own scan and ``session_context()`` without a config read batches of
    ``lakescan.BATCH_SIZE`` rows (``pyarrow.dataset``'s), not DataFusion's 8 192."""
    import pyarrow.parquet as pq

    assert lakescan.BATCH_SIZE == 131_072
    rows = 300_000
    pq.write_table(
        pa.table({"id": pa.array(range(rows), pa.int64())}), tmp_path / "part-0.parquet", row_group_size=rows
    )
    expected = [131_072, 131_072, rows - 2 * 131_072]

    table = lakescan.HiveTable(f"{tmp_path}/")
    reader = pa.RecordBatchReader.from_stream(table.scan(columns=["id"]))
    assert [batch.num_rows for batch in reader] == expected

    ctx = lakescan.datafusion.session_context()
    ctx.sql(f"CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{tmp_path}/'")
    sizes = [batch.to_pyarrow().num_rows for batch in ctx.sql("SELECT id FROM t").execute_stream()]
    assert sizes == expected
    ctx.register_table("registered", table)
    sizes = [batch.to_pyarrow().num_rows for batch in ctx.sql("SELECT id FROM registered").execute_stream()]
    assert sizes == expected
