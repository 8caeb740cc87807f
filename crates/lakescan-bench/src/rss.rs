//! Peak resident set size of this process during one measured run.
//!
//! On Linux the kernel's high-water mark `VmHWM` is reset before the run (writing `5` to
//! `/proc/self/clear_refs`) and read after it, which catches short peaks exactly. Where the
//! reset is not allowed, a background thread samples `VmRSS` every 2 ms instead. Either way
//! the figure is process-wide: it includes the harness, the other engines' retained
//! allocations and the page tables, not only the engine being measured.

use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Measures the peak RSS of one run; see the module docs.
pub struct PeakRss {
    sampler: Option<(Arc<AtomicBool>, Arc<AtomicU64>, JoinHandle<()>)>,
}

impl PeakRss {
    /// Starts measuring.
    pub fn start() -> Self {
        if fs::write("/proc/self/clear_refs", "5").is_ok() && status_kib("VmHWM:").is_some() {
            return Self { sampler: None };
        }
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(current_rss_bytes()));
        let handle = {
            let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(current_rss_bytes(), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        Self {
            sampler: Some((stop, peak, handle)),
        }
    }

    /// The peak in bytes since [`PeakRss::start`] (0 if it cannot be read).
    pub fn finish(self) -> u64 {
        match self.sampler {
            None => status_kib("VmHWM:").unwrap_or(0) * 1024,
            Some((stop, peak, handle)) => {
                stop.store(true, Ordering::Relaxed);
                let _ = handle.join();
                peak.load(Ordering::Relaxed).max(current_rss_bytes())
            }
        }
    }
}

/// The process's peak RSS since it started (or since the last reset), in bytes: `VmHWM`,
/// else the current RSS.
pub fn lifetime_peak_rss_bytes() -> u64 {
    status_kib("VmHWM:").map_or_else(current_rss_bytes, |kib| kib * 1024)
}

/// The current RSS in bytes (0 if it cannot be read).
pub fn current_rss_bytes() -> u64 {
    status_kib("VmRSS:").unwrap_or(0) * 1024
}

fn status_kib(key: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_an_allocation() {
        if current_rss_bytes() == 0 {
            return; // not Linux
        }
        let m = PeakRss::start();
        let v = vec![1u8; 64 << 20];
        let sum: u64 = v.iter().step_by(4096).map(|&b| b as u64).sum();
        drop(v);
        assert!(sum > 0);
        std::thread::sleep(Duration::from_millis(5));
        assert!(m.finish() >= 64 << 20);
    }
}
