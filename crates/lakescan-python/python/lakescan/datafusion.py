"""lakescan in a datafusion-python 54.1 ``SessionContext``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lakescan import BATCH_SIZE, Settings, TableFactory

if TYPE_CHECKING:
    from datafusion import SessionConfig, SessionContext

__all__ = ["register", "session_context"]


def register(ctx: SessionContext) -> SessionContext:
    """Adds lakescan's ``HIVE`` and ``ICEBERG`` table factories to ``ctx``.

    ``CREATE EXTERNAL TABLE … STORED AS HIVE|ICEBERG LOCATION … OPTIONS (…)`` then makes
    lakescan tables there, with the options of lakescan's SQL. Returns ``ctx``.
    """
    for kind in ("HIVE", "ICEBERG"):
        ctx.register_table_factory(kind, TableFactory(kind))
    return ctx


def session_context(
    config: SessionConfig | None = None, settings: Settings | None = None
) -> SessionContext:
    """A datafusion-python ``SessionContext`` with lakescan registered (``register``) and
    its settings in the session: ``SET lakescan.preload_splits = 2`` works there.

    ``config`` is the session's ``SessionConfig`` (when None, a new one reading batches of
    ``lakescan.BATCH_SIZE`` rows rather than DataFusion's 8 192); ``settings`` the starting
    values of lakescan's settings (``lakescan.Settings(split_size=…)``, the defaults when
    None). Scans and ``CREATE EXTERNAL TABLE`` read the ``lakescan.*`` values the session
    holds when they run; an unknown setting or a bad value is an error then.
    """
    from datafusion import SessionConfig, SessionContext

    if config is None:
        config = SessionConfig().with_batch_size(BATCH_SIZE)
    config = config.with_extension(settings if settings is not None else Settings())
    return register(SessionContext(config))
