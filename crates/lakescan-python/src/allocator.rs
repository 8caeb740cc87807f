//! What the C library's allocator does with freed memory, chosen once when the module loads.
//!
//! A scan allocates and frees buffers of the same sizes over and over: each Parquet page is
//! decompressed into a fresh buffer (up to about 1 MiB), each column chunk's dictionary is
//! decoded into another, and every batch is new arrays. Rust programs choose their allocator
//! (`#[global_allocator]`), and pyarrow and polars bring their own (mimalloc, jemalloc), which
//! keep freed pages for the next allocation. A Python extension built here can bring none, so
//! lakescan's buffers come from the C library's `malloc`; glibc's hands the free top of a heap
//! back to the kernel as soon as it exceeds its trim threshold (128 KiB to a few MiB), and the
//! next page's buffer is new memory again, which the kernel maps and zeroes page by page. On
//! TPC-H `lineitem` at scale 1, the `selective` scan (4 columns, 1 % of rows) took about
//! 30 000 page faults per query that way, a fifth of its CPU time; with the policy below, 30.
//!
//! On glibc the module therefore asks `malloc` (`mallopt`) to keep [`TOP_PAD`] free at the
//! top of each heap when it trims (`M_TOP_PAD`) and to serve requests below [`MMAP_THRESHOLD`]
//! from the heap (`M_MMAP_THRESHOLD`: glibc raises its threshold to that value on its own as
//! large blocks are freed, but setting either parameter stops that, so both are set). The cost
//! is bounded: at most [`TOP_PAD`] of freed memory stays mapped per heap (glibc keeps one heap
//! per thread that allocates, up to eight per core). The environment decides instead when it
//! already chose either parameter (`MALLOC_TOP_PAD_`, `MALLOC_MMAP_THRESHOLD_`, or
//! `glibc.malloc.top_pad` / `glibc.malloc.mmap_threshold` in `GLIBC_TUNABLES`); other C
//! libraries are left alone.
//!
//! Nothing here is written by hand that a library does: it sets two documented parameters of
//! the allocator the process already has.

/// Free memory `malloc` keeps at the top of each heap: a row group's pages and dictionaries
/// are reused instead of mapped again.
pub const TOP_PAD: i32 = 16 << 20;

/// Requests below this come from a heap (glibc's own upper bound for its dynamic threshold on
/// 64-bit systems), so freed batches and pages are reused, not unmapped.
pub const MMAP_THRESHOLD: i32 = 32 << 20;

/// What [`keep_freed_memory`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `mallopt` set `M_TOP_PAD` to [`TOP_PAD`] and `M_MMAP_THRESHOLD` to [`MMAP_THRESHOLD`].
    Set,
    /// The environment chose the allocator's parameters; they are left as it chose.
    Environment,
    /// Not glibc, or `mallopt` refused: the C library's own policy.
    Unsupported,
}

/// Whether the environment (the variables glibc reads at start) already chose one of the
/// parameters this module would set.
fn environment_chose(var: impl Fn(&str) -> Option<String>) -> bool {
    var("MALLOC_TOP_PAD_").is_some()
        || var("MALLOC_MMAP_THRESHOLD_").is_some()
        || var("GLIBC_TUNABLES").is_some_and(|tunables| {
            tunables
                .split(':')
                .filter_map(|tunable| tunable.split_once('=').map(|(name, _)| name))
                .any(|name| name == "glibc.malloc.top_pad" || name == "glibc.malloc.mmap_threshold")
        })
}

/// Sets the policy of this module's doc once, when the module loads.
pub fn keep_freed_memory() -> Policy {
    if environment_chose(|name| std::env::var(name).ok()) {
        return Policy::Environment;
    }
    set()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set() -> Policy {
    // SAFETY: `mallopt` takes two integers and changes two of glibc's allocator parameters;
    // it is safe to call from any thread at any time (glibc takes its own lock).
    let set = unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
            && libc::mallopt(libc::M_TOP_PAD, TOP_PAD) == 1
    };
    if set {
        Policy::Set
    } else {
        Policy::Unsupported
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set() -> Policy {
    Policy::Unsupported
}

impl Policy {
    /// The policy as Python sees it (`lakescan.MALLOC_POLICY`).
    pub fn describe(self) -> String {
        match self {
            Policy::Set => {
                format!("set by lakescan: M_TOP_PAD={TOP_PAD}, M_MMAP_THRESHOLD={MMAP_THRESHOLD}")
            }
            Policy::Environment => "chosen by the environment".to_string(),
            Policy::Unsupported => {
                "left to the C library (not glibc, or glibc refused)".to_string()
            }
        }
    }
}
