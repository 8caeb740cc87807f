//! Scheduling: which partition reads which split. [`assign_splits`] cuts the scan's splits
//! into one static list per output partition (even by bytes, largest first: what a plan
//! serialized to several executors carries); within one process the [`SplitQueue`] lets a
//! partition that finished its list steal from the end of the fullest one, and holds the
//! scan's global `LIMIT` (rows left for all partitions together).

use std::sync::{Arc, Mutex};

use datafusion::common::{Result, internal_err};

use crate::split::FileSplit;

/// Each partition's splits, shared by every execution of the plan.
/// How the partitions of one execution take their splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitScheduling {
    /// Each partition reads its own list only (partitions spread over processes).
    StaticLists,
    /// A partition that finished its list takes splits from the end of the fullest other
    /// list (all partitions in one process).
    WorkStealing,
}

pub(super) type SplitLists = Arc<[Arc<[Arc<FileSplit>]>]>;

pub(super) fn lists_of(lists: Vec<Vec<Arc<FileSplit>>>) -> SplitLists {
    lists.into_iter().map(Arc::from).collect()
}

/// Assigns `splits` to `partitions` lists: each split to the list with the fewest bytes so
/// far, largest splits first (so the lists end up even), each list in the splits' order.
pub fn assign_splits(splits: Vec<Arc<FileSplit>>, partitions: usize) -> Vec<Vec<Arc<FileSplit>>> {
    let partitions = partitions.max(1);
    let mut order: Vec<usize> = (0..splits.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(splits[i].length()));
    let mut bytes = vec![0u64; partitions];
    let mut owner = vec![0usize; splits.len()];
    let mut counts = vec![0usize; partitions];
    for i in order {
        // The least loaded list (fewest bytes, then fewest splits, then the first).
        let mut p = 0;
        for q in 1..partitions {
            if (bytes[q], counts[q]) < (bytes[p], counts[p]) {
                p = q;
            }
        }
        bytes[p] += splits[i].length();
        counts[p] += 1;
        owner[i] = p;
    }
    // In split order.
    let mut lists: Vec<Vec<Arc<FileSplit>>> =
        counts.iter().map(|&n| Vec::with_capacity(n)).collect();
    for (split, p) in splits.into_iter().zip(owner) {
        lists[p].push(split);
    }
    lists
}

/// The splits of one execution: each partition's static list (what a plan sent to several
/// executors carries), and, within one process, stealing from the other lists once a
/// partition's own is done.
#[derive(Debug)]
pub(super) struct SplitQueue {
    lists: SplitLists,
    scheduling: SplitScheduling,
    limit: Option<usize>,
    state: Mutex<QueueState>,
}

#[derive(Debug)]
struct QueueState {
    /// Per list: the next split and the end of what is left (stolen splits come off the end).
    cursors: Vec<(usize, usize)>,
    started: usize,
    remaining: Option<usize>,
}

impl SplitQueue {
    pub(super) fn new(
        lists: SplitLists,
        scheduling: SplitScheduling,
        limit: Option<usize>,
    ) -> Self {
        let state = Mutex::new(Self::fresh(&lists, limit));
        Self {
            lists,
            scheduling,
            limit,
            state,
        }
    }

    fn fresh(lists: &[Arc<[Arc<FileSplit>]>], limit: Option<usize>) -> QueueState {
        QueueState {
            cursors: lists.iter().map(|l| (0, l.len())).collect(),
            started: 0,
            remaining: limit,
        }
    }

    /// The queue state; a poisoned lock means a partition panicked while holding it.
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, QueueState>> {
        match self.state.lock() {
            Ok(state) => Ok(state),
            Err(_) => internal_err!("split queue lock poisoned by a panicked partition"),
        }
    }

    /// Called once per partition and execution; a new round starts after all partitions
    /// of the previous one started.
    pub(super) fn start_partition(self: &Arc<Self>) -> Result<Arc<Self>> {
        let mut s = self.lock()?;
        if s.started == self.lists.len() {
            *s = Self::fresh(&self.lists, self.limit);
        }
        s.started += 1;
        drop(s);
        Ok(Arc::clone(self))
    }

    /// The next split of `partition`: from its own list, then (stealing) from the end of
    /// the list with the most splits left. Splits are shared, not copied.
    pub(super) fn pop(&self, partition: usize) -> Result<Option<Arc<FileSplit>>> {
        self.next_of(partition, true)
    }

    /// The next split of `partition`'s own list, never another's: what a partition preloads
    /// while it still reads. (Preloading a stolen split would take it from a partition that
    /// has not started yet, and one partition would read both in turn: on an object store
    /// that doubles the query's time.)
    pub(super) fn pop_own(&self, partition: usize) -> Result<Option<Arc<FileSplit>>> {
        self.next_of(partition, false)
    }

    fn next_of(&self, partition: usize, steal: bool) -> Result<Option<Arc<FileSplit>>> {
        let mut s = self.lock()?;
        if s.remaining == Some(0) {
            return Ok(None);
        }
        let Some(&(next, end)) = s.cursors.get(partition) else {
            return internal_err!(
                "partition {partition} of a scan with {} partitions",
                self.lists.len()
            );
        };
        if next < end {
            s.cursors[partition].0 += 1;
            return Ok(Some(Arc::clone(&self.lists[partition][next])));
        }
        if !steal || self.scheduling == SplitScheduling::StaticLists {
            return Ok(None);
        }
        let victim = (0..s.cursors.len())
            .filter(|&p| s.cursors[p].0 < s.cursors[p].1)
            .max_by_key(|&p| s.cursors[p].1 - s.cursors[p].0);
        Ok(victim.map(|p| {
            s.cursors[p].1 -= 1;
            Arc::clone(&self.lists[p][s.cursors[p].1])
        }))
    }

    /// Takes up to `rows` from the remaining limit; returns how many may be emitted.
    pub(super) fn take(&self, rows: usize) -> Result<usize> {
        let mut s = self.lock()?;
        Ok(match &mut s.remaining {
            None => rows,
            Some(left) => {
                let n = rows.min(*left);
                *left -= n;
                n
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::path::Path;

    fn splits(lengths: &[u64]) -> Vec<Arc<FileSplit>> {
        lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| Arc::new(FileSplit::whole_file(Path::from(format!("f{i}")), n)))
            .collect()
    }

    fn names(list: &[Arc<FileSplit>]) -> Vec<&str> {
        list.iter().map(|s| s.file_name()).collect()
    }

    #[test]
    fn lists_are_even_by_bytes_and_keep_split_order() {
        let lists = assign_splits(splits(&[10, 70, 20, 30, 40]), 2);
        let bytes: Vec<u64> = lists
            .iter()
            .map(|l| l.iter().map(|s| s.length()).sum())
            .collect();
        // 70, 40, 30 (70 ≥ 40 + 30), 20 (a tie: the list with fewer splits), 10.
        assert_eq!(bytes, [90, 80]);
        assert_eq!(names(&lists[0]), ["f1", "f2"]);
        assert_eq!(names(&lists[1]), ["f0", "f3", "f4"]);
        // More partitions than splits: empty lists, never a lost split.
        let lists = assign_splits(splits(&[5]), 3);
        assert_eq!(lists.iter().map(Vec::len).sum::<usize>(), 1);
        assert_eq!(assign_splits(vec![], 0).len(), 1);
    }

    #[test]
    fn a_partition_steals_from_the_fullest_list_only_when_stealing() {
        let lists = lists_of(vec![splits(&[1, 1, 1]), vec![]]);
        let popped =
            |queue: &SplitQueue, p| queue.pop(p).unwrap().map(|s| s.file_name().to_string());
        let queue = SplitQueue::new(Arc::clone(&lists), SplitScheduling::StaticLists, None);
        assert_eq!(popped(&queue, 1), None);
        assert_eq!(popped(&queue, 0).as_deref(), Some("f0"));
        let queue = SplitQueue::new(lists, SplitScheduling::WorkStealing, None);
        // Partition 1 steals from the end, partition 0 keeps its order.
        assert_eq!(popped(&queue, 1).as_deref(), Some("f2"));
        assert_eq!(popped(&queue, 0).as_deref(), Some("f0"));
        assert_eq!(popped(&queue, 0).as_deref(), Some("f1"));
        assert_eq!(popped(&queue, 1), None);
        assert!(queue.pop(2).is_err(), "no partition 2");
    }

    #[test]
    fn preloading_takes_only_the_partitions_own_splits() {
        let lists = lists_of(vec![splits(&[1]), splits(&[1])]);
        let queue = SplitQueue::new(lists, SplitScheduling::WorkStealing, None);
        let name = |s: Option<Arc<FileSplit>>| s.map(|s| s.file_name().to_string());
        assert_eq!(name(queue.pop(0).unwrap()).as_deref(), Some("f0"));
        // Partition 0 preloads while reading f0: partition 1's split stays its own.
        assert_eq!(name(queue.pop_own(0).unwrap()), None);
        assert_eq!(name(queue.pop(1).unwrap()).as_deref(), Some("f0"));
    }

    #[test]
    fn the_limit_is_shared_and_a_new_round_starts_it_again() {
        let lists = lists_of(vec![splits(&[1, 1]), splits(&[1])]);
        let queue = Arc::new(SplitQueue::new(
            lists,
            SplitScheduling::WorkStealing,
            Some(5),
        ));
        let (a, b) = (
            queue.start_partition().unwrap(),
            queue.start_partition().unwrap(),
        );
        assert_eq!(a.take(3).unwrap(), 3);
        assert_eq!(b.take(3).unwrap(), 2);
        assert_eq!(a.take(1).unwrap(), 0);
        assert!(
            a.pop(0).unwrap().is_none(),
            "the limit is reached: no split left"
        );
        // Both partitions of the round started: the next execution starts afresh.
        let again = queue.start_partition().unwrap();
        assert_eq!(again.take(4).unwrap(), 4);
        assert!(again.pop(0).unwrap().is_some());
    }
}
