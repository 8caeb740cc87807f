//! The module's memory allocator: mimalloc, for every allocation lakescan's code makes.
//!
//! A scan allocates and frees buffers of the same sizes over and over: each Parquet page is
//! decompressed into a fresh buffer (up to about 1 MiB), each column chunk's dictionary is
//! decoded into another, and every batch is new arrays. With the C library's `malloc` (glibc),
//! the freed top of a heap goes back to the kernel as soon as it passes the trim threshold, so
//! the next page's buffer is new memory that the kernel maps and zeroes page by page: on TPC-H
//! `lineitem` at scale 1 the `selective` scan (4 columns, 1 % of rows) took about 30 000 page
//! faults per query that way, a fifth of its CPU time, and a scan into a kept table faulted in
//! each of its pages again on every query.
//!
//! So the module brings its own allocator, as the packages it sits beside do: datafusion-python
//! and DataFusion's CLI build with mimalloc, polars with jemalloc, pyarrow with jemalloc or
//! mimalloc. The choice is datafusion-python's own, with its settings: mimalloc 2 (its authors
//! keep datafusion-python on version 2), with the local-dynamic TLS model that a library
//! loaded by `dlopen` needs. Only this module's allocations are served by it — Python, pyarrow
//! and every other library keep theirs — and memory crosses to them only as Arrow arrays, which
//! are released through the callback of the library that made them (the Arrow C data
//! interface), so each block is freed by the allocator that gave it.
//!
//! One setting differs from mimalloc's defaults: freed memory is kept for reuse for
//! [`PURGE_DELAY_MS`] before it goes back to the kernel (mimalloc's `purge_delay`, 10 ms by
//! default). A query that builds a table of a gigabyte frees it when the caller drops the
//! table; with 10 ms, the next query's batches were fresh memory again, mapped and zeroed page
//! by page (about 25 000 page faults and a quarter of the CPU time of reading TPC-H
//! `lineitem` at scale 1 into a pyarrow table; with a second, about 300). jemalloc, which
//! polars links, keeps freed pages for ten seconds by default. The environment's choice
//! (`MIMALLOC_PURGE_DELAY`) stands.
//!
//! Nothing here is written by hand: the `mimalloc` crate is the allocator, the
//! `#[global_allocator]` attribute installs it, and mimalloc's own option API sets the delay.

use std::ffi::c_long;

use libmimalloc_sys::{mi_option_get, mi_option_set, mi_option_t};
use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// How long freed memory stays with the allocator for reuse, in milliseconds.
pub const PURGE_DELAY_MS: c_long = 1000;

/// mimalloc's `mi_option_purge_delay`: its position in `mi_option_e` of the bundled mimalloc 2
/// header. The numbering is part of mimalloc's ABI (retired options keep their numbers as
/// `mi_option_deprecated_*`); `libmimalloc-sys` names only some of the options.
const MI_OPTION_PURGE_DELAY: mi_option_t = 15;

/// Sets the purge delay of this module's doc, unless the environment chose one.
pub fn keep_freed_memory() {
    let chosen = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some());
    if !chosen {
        // SAFETY: `mi_option_set` takes an option number and a value and may be called at any
        // time from any thread; the number is the purge delay's (see the constant).
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

/// The allocator, its version and its purge delay, as Python sees it (`lakescan.ALLOCATOR`):
/// `"mimalloc 2.3.2, purge delay 1000 ms"`.
pub fn describe() -> String {
    // mimalloc numbers version 2.3.2 as 20302.
    let version = GLOBAL.version();
    // SAFETY: `mi_option_get` takes an option number and reads the option's value.
    let delay = unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
    format!(
        "mimalloc {}.{}.{}, purge delay {delay} ms",
        version / 10000,
        version / 100 % 100,
        version % 100
    )
}
