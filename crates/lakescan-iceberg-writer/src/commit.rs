//! Committing snapshots: [`TableWriter::commit`] (appends and deletes), `overwrite` and
//! `replace` (files removed), each a snapshot with its manifests, manifest list and
//! metadata file.

use super::*;

impl TableWriter {
    /// Commits a snapshot adding `data` and `deletes` at the next sequence number; writes
    /// its metadata file and returns its path. Files are grouped into one manifest per
    /// partition spec and content.
    pub async fn commit(&mut self, data: Vec<DataFile>, deletes: Vec<DataFile>) -> Result<String> {
        if self.version == FormatVersion::V1 && !deletes.is_empty() {
            return internal_err!("a format-v1 table has no delete files");
        }
        self.commit_snapshot(data, deletes, "append").await
    }

    /// Commits a copy-on-write snapshot of a format-v2 table: the data files at the paths
    /// `removed` leave the table (DELETED entries in rewritten manifests, the other files
    /// of those manifests EXISTING), `data` joins it. The operation is `overwrite`, or
    /// `delete` when nothing is added. Returns the new metadata file's path.
    pub async fn overwrite(&mut self, data: Vec<DataFile>, removed: &[&str]) -> Result<String> {
        let operation = match data.is_empty() {
            true => "delete",
            false => "overwrite",
        };
        self.rewrite(data, removed, operation).await
    }

    /// Like [`Self::overwrite`], as a `replace` snapshot (a compaction: the same rows in
    /// other files).
    pub async fn replace(&mut self, data: Vec<DataFile>, removed: &[&str]) -> Result<String> {
        self.rewrite(data, removed, "replace").await
    }

    async fn rewrite(
        &mut self,
        data: Vec<DataFile>,
        removed: &[&str],
        operation: &'static str,
    ) -> Result<String> {
        if self.version == FormatVersion::V1 {
            return internal_err!("overwrite writes format-v2 and v3 tables only");
        }
        let seq = self.snapshots.len() as i64 + 1;
        let snapshot_id = 1000 + seq;
        let mut rewritten = vec![];
        let mut found = 0;
        for manifest in self.manifests.clone() {
            if manifest.content != ManifestContentType::Data {
                rewritten.push(manifest);
                continue;
            }
            let bytes = std::fs::read(self.local_of(&manifest.manifest_path)).map_err(err)?;
            let (entries, _) = Manifest::parse_avro(&bytes).map_err(err)?.into_parts();
            let live: Vec<_> = entries
                .iter()
                .filter(|e| e.status != ManifestStatus::Deleted)
                .collect();
            if !live.iter().any(|e| removed.contains(&e.file_path())) {
                rewritten.push(manifest);
                continue;
            }
            let Some(spec) = self
                .specs
                .iter()
                .find(|s| s.spec_id() == manifest.partition_spec_id)
            else {
                return internal_err!("a manifest names a partition spec the table lacks");
            };
            let path = self
                .path()
                .join("metadata")
                .join(format!("m-{seq}-rewritten-{}.avro", rewritten.len()));
            let output = self.io.new_output(path.to_string_lossy()).map_err(err)?;
            let builder = ManifestWriterBuilder::new(
                output,
                Some(snapshot_id),
                Arc::clone(self.schema()),
                spec.clone(),
            );
            // v3: the rewritten files keep no first row id of their own (a pre-v3 writer's
            // files, or ids left to inheritance); the new manifest takes new ones.
            let mut writer = match self.version {
                FormatVersion::V3 => builder.build_v3_data(),
                _ => builder.build_v2_data(),
            };
            for e in live {
                let data_seq = e.sequence_number.unwrap_or(manifest.sequence_number);
                let file_seq = e.file_sequence_number.or(Some(data_seq));
                let file = e.data_file.clone();
                if removed.contains(&e.file_path()) {
                    found += 1;
                    writer
                        .add_delete_file(file, data_seq, file_seq)
                        .map_err(err)?;
                } else {
                    let added_by = e.snapshot_id.unwrap_or(manifest.added_snapshot_id);
                    writer
                        .add_existing_file(file, added_by, data_seq, file_seq)
                        .map_err(err)?;
                }
            }
            let mut new = writer.write_manifest_file().await.map_err(err)?;
            new.manifest_path = self.recorded(&path);
            new.sequence_number = seq;
            new.min_sequence_number = manifest.min_sequence_number;
            rewritten.push(new);
        }
        if found != removed.len() {
            return internal_err!(
                "overwrite: {} of the removed paths are not live files",
                removed.len() - found
            );
        }
        self.manifests = rewritten;
        self.commit_snapshot(data, vec![], operation).await
    }

    async fn commit_snapshot(
        &mut self,
        data: Vec<DataFile>,
        deletes: Vec<DataFile>,
        operation: &'static str,
    ) -> Result<String> {
        let seq = self.snapshots.len() as i64 + 1;
        let snapshot_id = 1000 + seq;
        let first_row_id = self.next_row_id;
        let mut new_manifests = vec![];
        for (files, content) in [
            (data, DataContentType::Data),
            (deletes, DataContentType::PositionDeletes),
        ] {
            let mut by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
            for f in files {
                // `DataFile` does not expose its spec id; the writer recorded it.
                let spec_id = self.file_specs.get(f.file_path()).copied().unwrap_or(0);
                by_spec.entry(spec_id).or_default().push(f);
            }
            for (spec_id, files) in by_spec {
                let manifest = self
                    .write_manifest(snapshot_id, seq, spec_id, content, files)
                    .await?;
                new_manifests.push(manifest);
            }
        }
        self.manifests.extend(new_manifests);
        if self.version == FormatVersion::V3 {
            // New and rewritten data manifests take the next row ids, as Java's manifest
            // list writer assigns them (existing rows included).
            for m in self
                .manifests
                .iter_mut()
                .filter(|m| m.content == ManifestContentType::Data && m.first_row_id.is_none())
            {
                m.first_row_id = Some(self.next_row_id);
                self.next_row_id +=
                    m.added_rows_count.unwrap_or(0) + m.existing_rows_count.unwrap_or(0);
            }
        }
        let list = self
            .path()
            .join("metadata")
            .join(format!("snap-{snapshot_id}.avro"));
        let out = self
            .io
            .new_output(list.to_string_lossy())
            .map_err(err)?
            .writer()
            .await
            .map_err(err)?;
        let parent = self.snapshots.last().map(|s| s.id);
        let mut list_writer = match self.version {
            FormatVersion::V1 => ManifestListWriter::v1(out, snapshot_id, parent),
            FormatVersion::V2 => ManifestListWriter::v2(out, snapshot_id, parent, seq),
            FormatVersion::V3 => {
                ManifestListWriter::v3(out, snapshot_id, parent, seq, Some(first_row_id))
            }
        };
        list_writer
            .add_manifests(self.manifests.clone().into_iter())
            .map_err(err)?;
        list_writer.close().await.map_err(err)?;
        self.snapshots.push(Committed {
            id: snapshot_id,
            sequence_number: seq,
            manifest_list: self.recorded(&list),
            timestamp_ms: 1_700_000_000_000 + seq * 1000,
            schema_id: self.schema().schema_id(),
            row_ids: (self.version == FormatVersion::V3)
                .then(|| (first_row_id, self.next_row_id - first_row_id)),
            operation,
        });
        self.write_metadata()
    }

    /// Writes one manifest of `files` (all of spec `spec_id` and of one content kind).
    async fn write_manifest(
        &self,
        snapshot_id: i64,
        seq: i64,
        spec_id: i32,
        content: DataContentType,
        files: Vec<DataFile>,
    ) -> Result<ManifestFile> {
        let Some(spec) = self.specs.iter().find(|s| s.spec_id() == spec_id) else {
            return internal_err!("a file names partition spec {spec_id}, which the table lacks");
        };
        // The crate's manifest writer panics on a partition of the wrong arity.
        let arity = spec.fields().len();
        if let Some(f) = files.iter().find(|f| f.partition().fields().len() != arity) {
            return internal_err!(
                "file '{}' has a partition of {} values; spec {spec_id} has {arity} fields \
                 (write it with the `_in` variant that takes its partition)",
                f.file_path(),
                f.partition().fields().len()
            );
        }
        let kind = match content {
            DataContentType::Data => "data",
            _ => "deletes",
        };
        let path = self
            .path()
            .join("metadata")
            .join(format!("m-{seq}-{kind}-{spec_id}.avro"));
        let output = self.io.new_output(path.to_string_lossy()).map_err(err)?;
        let builder = ManifestWriterBuilder::new(
            output,
            Some(snapshot_id),
            Arc::clone(self.schema()),
            spec.clone(),
        );
        let mut writer = match (self.version, content) {
            (FormatVersion::V1, _) => builder.build_v1(),
            (FormatVersion::V2, DataContentType::Data) => builder.build_v2_data(),
            (FormatVersion::V2, _) => builder.build_v2_deletes(),
            (FormatVersion::V3, DataContentType::Data) => builder.build_v3_data(),
            (FormatVersion::V3, _) => builder.build_v3_deletes(),
        };
        for f in files {
            writer.add_file(f, seq).map_err(err)?;
        }
        let mut manifest = writer.write_manifest_file().await.map_err(err)?;
        manifest.manifest_path = self.recorded(&path);
        if self.version != FormatVersion::V1 {
            manifest.sequence_number = seq;
            manifest.min_sequence_number = seq;
        }
        Ok(manifest)
    }

    fn write_metadata(&self) -> Result<String> {
        let Some(last) = self.snapshots.last() else {
            return internal_err!("no snapshot to write metadata for");
        };
        let v1 = self.version == FormatVersion::V1;
        let snapshots: Vec<serde_json::Value> = self
            .snapshots
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut s = serde_json::json!({
                    "snapshot-id": c.id, "timestamp-ms": c.timestamp_ms,
                    "manifest-list": c.manifest_list, "summary": {"operation": c.operation},
                    "schema-id": c.schema_id
                });
                if !v1 {
                    s["sequence-number"] = c.sequence_number.into();
                }
                if let Some((first, added)) = c.row_ids {
                    s["first-row-id"] = first.into();
                    s["added-rows"] = added.into();
                }
                if i > 0 {
                    s["parent-snapshot-id"] = self.snapshots[i - 1].id.into();
                }
                s
            })
            .collect();
        let log: Vec<serde_json::Value> = self
            .snapshots
            .iter()
            .map(|c| serde_json::json!({"snapshot-id": c.id, "timestamp-ms": c.timestamp_ms}))
            .collect();
        let schemas = self
            .schemas
            .iter()
            .map(|s| serde_json::to_value(s.as_ref()).map_err(err))
            .collect::<Result<Vec<_>>>()?;
        let specs = self
            .specs
            .iter()
            .map(|s| serde_json::to_value(s).map_err(err))
            .collect::<Result<Vec<_>>>()?;
        let last_partition_id = self
            .specs
            .iter()
            .filter_map(|s| s.highest_field_id())
            .max()
            .unwrap_or(999);
        let last_column_id = self.schemas.iter().map(|s| s.highest_field_id()).max();
        let version = match self.version {
            FormatVersion::V1 => 1,
            FormatVersion::V2 => 2,
            FormatVersion::V3 => 3,
        };
        let mut metadata = serde_json::json!({
            "format-version": version,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": self.recorded(self.path()),
            "last-updated-ms": last.timestamp_ms,
            "last-column-id": last_column_id,
            "current-schema-id": self.schema().schema_id(),
            "schemas": schemas,
            "default-spec-id": self.spec().spec_id(),
            "partition-specs": specs,
            "last-partition-id": last_partition_id,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": self.properties,
            "current-snapshot-id": last.id,
            "refs": {"main": {"snapshot-id": last.id, "type": "branch"}},
            "snapshots": snapshots,
            "snapshot-log": log,
            "metadata-log": []
        });
        if v1 {
            // v1 writers also write the current schema and spec in their old single fields.
            metadata["schema"] = serde_json::to_value(self.schema().as_ref()).map_err(err)?;
            metadata["partition-spec"] = serde_json::to_value(self.spec().fields()).map_err(err)?;
        } else {
            metadata["last-sequence-number"] = last.sequence_number.into();
        }
        if self.version == FormatVersion::V3 {
            metadata["next-row-id"] = self.next_row_id.into();
        }
        let path = self
            .path()
            .join("metadata")
            .join(format!("v{}.metadata.json", self.snapshots.len()));
        std::fs::write(&path, serde_json::to_vec_pretty(&metadata).map_err(err)?).map_err(err)?;
        Ok(self.recorded(&path))
    }
}
