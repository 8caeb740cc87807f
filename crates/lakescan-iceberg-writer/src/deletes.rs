//! Delete files: equality deletes and position deletes (Parquet, or the writer's delete
//! format) with Iceberg's field ids, and deletion vectors in Puffin files.

use super::*;

impl TableWriter {
    /// An equality-delete file over `ids` holding the deleted keys `columns` (unpartitioned:
    /// it applies to every partition of the table).
    pub fn equality_delete_file(
        &mut self,
        ids: Vec<i32>,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<DataFile> {
        self.equality_delete_file_in(Struct::empty(), ids, columns)
    }

    /// An equality-delete file of `partition` (under the default spec) over `ids` holding
    /// the deleted keys `columns`.
    pub fn equality_delete_file_in(
        &mut self,
        partition: Struct,
        ids: Vec<i32>,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<DataFile> {
        let (path, size, rows, format) = self.write_as(self.delete_format, columns)?;
        self.described(DataContentType::EqualityDeletes, path, format, rows, size)
            .partition(partition)
            .equality_ids(Some(ids))
            .build()
            .map_err(err)
    }

    /// A position-delete file deleting `(data file path, position)` rows; when every row
    /// names one data file, its manifest entry references that file (as Java writers do).
    pub fn position_delete_file(&mut self, rows: Vec<(&str, i64)>) -> Result<DataFile> {
        let referenced = match rows.first() {
            Some((first, _)) if rows.iter().all(|r| r.0 == *first) => Some(first.to_string()),
            _ => None,
        };
        let paths: ArrayRef = Arc::new(arrow::array::StringArray::from(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ));
        let positions: ArrayRef = Arc::new(arrow::array::Int64Array::from(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        ));
        let (path, size, count, format) = self.write_as(
            self.delete_format,
            vec![
                ("file_path", 2147483546, paths),
                ("pos", 2147483545, positions),
            ],
        )?;
        self.described(DataContentType::PositionDeletes, path, format, count, size)
            .referenced_data_file(referenced)
            .build()
            .map_err(err)
    }

    /// A position-delete file of `partition` (under the default spec) deleting `(data file
    /// path, position)` rows, without a `referenced_data_file`: it applies to the data files
    /// of its partition, as partition-scoped delete files of Spark's writers do.
    pub fn position_delete_file_in(
        &mut self,
        partition: Struct,
        rows: Vec<(&str, i64)>,
    ) -> Result<DataFile> {
        let mut file = self.position_delete_file(rows)?;
        let mut builder = DataFileBuilder::default();
        builder
            .content(file.content_type())
            .file_path(file.file_path().to_string())
            .file_format(file.file_format())
            .record_count(file.record_count())
            .file_size_in_bytes(file.file_size_in_bytes())
            .partition(partition)
            .partition_spec_id(self.spec().spec_id());
        file = builder.build().map_err(err)?;
        Ok(file)
    }

    /// A Puffin file with one deletion vector of `data_file` deleting `positions`;
    /// `footer_file` is the data file its footer names (normally `data_file`).
    pub fn deletion_vector(
        &mut self,
        data_file: &str,
        footer_file: &str,
        positions: &[u64],
    ) -> Result<DataFile> {
        let mut files = self.puffin_file(&[(data_file, footer_file, positions)])?;
        files
            .pop()
            .ok_or_else(|| err("a Puffin file without its vector"))
    }

    /// One Puffin file holding a deletion vector for each `(data file, positions)`: the
    /// delete entries of its vectors, one per data file (as Java writes several vectors into
    /// one file).
    pub fn deletion_vectors(&mut self, vectors: &[(&str, &[u64])]) -> Result<Vec<DataFile>> {
        let named: Vec<_> = vectors.iter().map(|(f, p)| (*f, *f, *p)).collect();
        self.puffin_file(&named)
    }

    /// A Puffin file of the vectors `(data file, file its footer names, positions)`.
    fn puffin_file(&mut self, vectors: &[(&str, &str, &[u64])]) -> Result<Vec<DataFile>> {
        let mut puffin = b"PFA1".to_vec();
        let mut blobs = vec![];
        let mut entries = vec![];
        for (data_file, footer_file, positions) in vectors {
            let bitmap: roaring::RoaringTreemap = positions.iter().copied().collect();
            let mut body = vec![0xD1, 0xD3, 0x39, 0x64];
            bitmap.serialize_into(&mut body).map_err(err)?;
            let mut blob = (body.len() as u32).to_be_bytes().to_vec();
            blob.extend(&body);
            blob.extend(crc32fast::hash(&body).to_be_bytes());
            let offset = puffin.len();
            blobs.push(serde_json::json!({
                "type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1,
                "sequence-number": -1, "offset": offset, "length": blob.len(),
                "properties": {"referenced-data-file": footer_file,
                               "cardinality": bitmap.len().to_string()}
            }));
            entries.push((data_file.to_string(), bitmap.len(), offset, blob.len()));
            puffin.extend(&blob);
        }
        let footer = serde_json::json!({ "blobs": blobs });
        let payload = serde_json::to_vec(&footer).map_err(err)?;
        puffin.extend(b"PFA1");
        puffin.extend(&payload);
        puffin.extend((payload.len() as u32).to_le_bytes());
        puffin.extend([0, 0, 0, 0]);
        puffin.extend(b"PFA1");
        self.files_written += 1;
        let path = self
            .path()
            .join("data")
            .join(format!("dv{:03}.puffin", self.files_written));
        std::fs::write(&path, &puffin).map_err(err)?;
        let recorded = self.recorded(&path);
        entries
            .into_iter()
            .map(|(data_file, cardinality, offset, length)| {
                self.described(
                    DataContentType::PositionDeletes,
                    recorded.clone(),
                    DataFileFormat::Puffin,
                    cardinality,
                    puffin.len() as u64,
                )
                .referenced_data_file(Some(data_file))
                .content_offset(Some(offset as i64))
                .content_size_in_bytes(Some(length as i64))
                .build()
                .map_err(err)
            })
            .collect()
    }
}
