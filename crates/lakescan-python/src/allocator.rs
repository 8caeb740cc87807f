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
//! Nothing here is written by hand: the `mimalloc` crate is the allocator and the
//! `#[global_allocator]` attribute installs it.

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// The allocator and its version, as Python sees it (`lakescan.ALLOCATOR`): `"mimalloc 2.3.2"`.
pub fn describe() -> String {
    // mimalloc numbers version 2.3.2 as 20302.
    let version = GLOBAL.version();
    format!(
        "mimalloc {}.{}.{}",
        version / 10000,
        version / 100 % 100,
        version % 100
    )
}
