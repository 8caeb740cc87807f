//! The files a range of snapshots added and removed, for changelog scans
//! ([`crate::changelog`]): each snapshot's own manifests, their entries of that snapshot,
//! pruned by the scan's filters like any planned file. A snapshot that adds or removes
//! delete files (merge-on-read), or removes a data file delete files had applied to, is a
//! `NotImplemented` error naming it: those changes are not rows of whole files.

use std::collections::HashSet;

use datafusion::common::{Result, exec_datafusion_err, not_impl_err};
use iceberg::spec::{DataContentType, ManifestContentType, ManifestStatus, SnapshotRef};

use super::{PlanCounts, PlannedFile, Planner};

/// What a snapshot did to a data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// It added the file: its rows are inserted.
    Insert,
    /// It removed the file: its rows are deleted.
    Delete,
}

impl ChangeKind {
    /// The `_change_type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Insert => "insert",
            ChangeKind::Delete => "delete",
        }
    }
}

/// A data file one snapshot of the range added or removed.
#[derive(Debug)]
pub struct ChangedFile {
    /// What the snapshot did.
    pub kind: ChangeKind,
    /// The snapshot's position in the range given to [`Planner::changed_files`].
    pub change: usize,
    /// The file.
    pub file: PlannedFile,
}

impl Planner<'_> {
    /// The data files each of `snapshots` added and removed, with the planning counts.
    pub async fn changed_files(
        &self,
        snapshots: &[SnapshotRef],
    ) -> Result<(Vec<ChangedFile>, PlanCounts)> {
        let mut counts = PlanCounts::default();
        let mut changed = vec![];
        for (change, snapshot) in snapshots.iter().enumerate() {
            // The parent's files that deletes apply to, read the first time the snapshot
            // removes a file.
            let mut parent_deletes: Option<HashSet<String>> = None;
            for manifest in self.manifests(snapshot).await? {
                counts.manifests_total += 1;
                if manifest.added_snapshot_id != snapshot.snapshot_id() {
                    counts.manifests_pruned += 1;
                    continue;
                }
                let (entries, spec) = self.entries(&manifest).await?;
                for (entry, first_row_id) in entries {
                    if entry.snapshot_id != Some(snapshot.snapshot_id()) {
                        continue;
                    }
                    let kind = match (entry.status, entry.data_file.content_type()) {
                        (ManifestStatus::Added, DataContentType::Data) => ChangeKind::Insert,
                        (ManifestStatus::Deleted, DataContentType::Data) => ChangeKind::Delete,
                        (ManifestStatus::Existing, _) => continue,
                        (_, _) if manifest.content == ManifestContentType::Deletes => {
                            return not_impl_err!(
                                "table_changes: snapshot {} ({}) {} delete file '{}'; changelog \
                                 scans of merge-on-read deletes are not implemented",
                                snapshot.snapshot_id(),
                                snapshot.summary().operation.as_str(),
                                match entry.status {
                                    ManifestStatus::Added => "adds",
                                    _ => "removes",
                                },
                                entry.data_file.file_path()
                            );
                        }
                        _ => continue,
                    };
                    if kind == ChangeKind::Delete {
                        let deletes = match &mut parent_deletes {
                            Some(d) => d,
                            None => parent_deletes.insert(self.deletes_before(snapshot).await?),
                        };
                        if deletes.contains(entry.data_file.file_path()) {
                            return not_impl_err!(
                                "table_changes: snapshot {} removes data file '{}', which \
                                 delete files had applied to; changelog scans of \
                                 merge-on-read deletes are not implemented",
                                snapshot.snapshot_id(),
                                entry.data_file.file_path()
                            );
                        }
                    }
                    counts.data_files_total += 1;
                    let Some(file) = self.planned_file(&entry, &spec)? else {
                        counts.data_files_pruned += 1;
                        continue;
                    };
                    let file = PlannedFile {
                        first_row_id,
                        ..file
                    };
                    changed.push(ChangedFile { kind, change, file });
                }
            }
        }
        Ok((changed, counts))
    }

    /// The data files of `snapshot`'s parent that delete files apply to, by path.
    async fn deletes_before(&self, snapshot: &SnapshotRef) -> Result<HashSet<String>> {
        // Unfiltered: the scan's filters must not hide a removed file's deletes.
        let unfiltered = Planner {
            runtime: self.runtime,
            paths: self.paths,
            loaded: self.loaded,
            schema: self.schema,
            filters: Default::default(),
            residual_pruning: None,
        };
        let metadata = &self.loaded.metadata;
        let Some(parent) = snapshot
            .parent_snapshot_id()
            .and_then(|p| metadata.snapshot_by_id(p).cloned())
        else {
            return Ok(HashSet::new());
        };
        // Without delete manifests no delete applies: no need to plan the parent's files.
        let manifests = unfiltered.manifests(&parent).await?;
        if manifests
            .iter()
            .all(|m| m.content != ManifestContentType::Deletes)
        {
            return Ok(HashSet::new());
        }
        let plan = unfiltered.plan(Some(&parent)).await.map_err(|e| {
            exec_datafusion_err!(
                "table_changes: planning the parent of snapshot {}: {e}",
                snapshot.snapshot_id()
            )
        })?;
        Ok(plan
            .files
            .into_iter()
            .filter(|f| !f.deletes.is_empty())
            .map(|f| f.written_path)
            .collect())
    }
}
