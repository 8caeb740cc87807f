//! Finding and reading a table's metadata file, and choosing the snapshot a scan reads.
//!
//! **Where the metadata is** ([`locate`]): `LOCATION` names a `*.metadata.json` file, or a
//! table directory whose `metadata/` folder holds them:
//!
//! ```text
//!  metadata/version-hint.text = "7"          → v7.metadata.json (or v7.gz.metadata.json),
//!                                              or v8, v9… when they exist (a stale hint)
//!  metadata/version-hint.text = "00001-4f…"  → 00001-4f….metadata.json
//!  no hint, or an empty / unreadable one     → the highest vN.metadata.json, else the highest
//!                                              NNNNN-<uuid>.metadata.json
//! ```
//!
//! **Reading it** ([`read_metadata`]): gzip-compressed files (`1f 8b`) are inflated; the
//! `format-version` must be 1, 2 or 3; the JSON is parsed by the `iceberg` crate's
//! `TableMetadata` (which validates snapshots, refs and logs), after types it cannot parse
//! are replaced ([`crate::placeholder_types`]); where the crate says only that the JSON has
//! no shape it knows, `diagnose` (`metadata/diagnose.rs`) names the field at fault. Refs are
//! read from the same JSON: the crate has no public accessor for them.
//!
//! **Which snapshot** ([`select_snapshot`]): the current one, or by id, by time (the last
//! snapshot-log entry at or before it) or by ref (branch or tag).

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use datafusion::common::{Result, plan_datafusion_err, plan_err};
use iceberg::spec::{SchemaRef, SnapshotRef, SnapshotReference, TableMetadata};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::options::SnapshotSelector;
use crate::placeholder_types::SchemaPlaceholders;

/// A table's parsed metadata file.
#[derive(Debug, Clone)]
pub struct LoadedMetadata {
    /// The metadata file, as the user or the hint named it (for messages).
    pub file: String,
    /// The parsed metadata.
    pub metadata: Arc<TableMetadata>,
    /// Branches and tags by name (`main` included when the table has a current snapshot).
    pub refs: HashMap<String, SnapshotReference>,
    /// Manifests of v1 snapshots that list them inline (`manifests`) instead of in a
    /// manifest list, by snapshot id.
    pub inline_manifests: HashMap<i64, Vec<String>>,
    /// Fields of a type the `iceberg` crate cannot parse (v3 `variant`, …), by schema.
    pub placeholders: SchemaPlaceholders,
    /// The file's bytes as read (a plan sent to another process carries them: it parses
    /// them there, without reading the file again).
    pub raw: bytes::Bytes,
}

/// The `manifest-list` given to v1 snapshots that list their manifests inline (the
/// `iceberg` crate requires a manifest list; planning reads [`LoadedMetadata::inline_manifests`]).
pub const INLINE_MANIFESTS: &str = "lakescan:inline-manifests";

/// The metadata file of a table at `location` (a metadata file or a table directory) in
/// `store`. `display` is the location as the user wrote it.
pub async fn locate(store: &Arc<dyn ObjectStore>, location: &Path, display: &str) -> Result<Path> {
    let name = location.filename().unwrap_or_default();
    if name.ends_with(".json") || name.ends_with(".json.gz") {
        return Ok(location.clone());
    }
    let folder = location.clone().join("metadata");
    if let Some(found) = from_hint(store, &folder).await? {
        return Ok(found);
    }
    let mut listed = list_metadata_files(store, &folder).await?;
    if listed.is_empty() {
        // LOCATION may name the metadata folder itself.
        listed = list_metadata_files(store, location).await?;
    }
    match newest(&listed) {
        Some(path) => Ok(path.clone()),
        None => plan_err!(
            "no Iceberg metadata at '{display}': expected a *.metadata.json file, or a table \
             directory with metadata/version-hint.text or metadata/*.metadata.json"
        ),
    }
}

/// The file `metadata/version-hint.text` points at; `None` without a usable hint. As Java's
/// `HadoopTableOperations`, a hint that is missing, unreadable, empty or not a version is no
/// hint (the folder is listed instead), and a numeric hint is a lower bound: newer
/// `vN.metadata.json` files after it are followed.
async fn from_hint(store: &Arc<dyn ObjectStore>, folder: &Path) -> Result<Option<Path>> {
    let hint_path = folder.clone().join("version-hint.text");
    let read = match store.get(&hint_path).await {
        Ok(r) => r.bytes().await,
        Err(e) => Err(e),
    };
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => {
            log::warn!("cannot read '{hint_path}' ({e}); listing the metadata folder instead");
            return Ok(None);
        }
    };
    let hint = String::from_utf8_lossy(&bytes).trim().to_string();
    if hint.is_empty() || hint.contains('/') {
        log::warn!("'{hint_path}' names no version ('{hint}'); listing the metadata folder");
        return Ok(None);
    }
    let Ok(version) = hint.parse::<u64>() else {
        // A file-name stem (`00001-4f…`), as some writers put there.
        return existing(store, folder, &hint).await;
    };
    let Some(mut found) = existing(store, folder, &format!("v{version}")).await? else {
        return match existing(store, folder, &hint).await? {
            Some(stem) => Ok(Some(stem)),
            None => plan_err!(
                "'{hint_path}' names version {version}, but no v{version}.metadata.json or \
                 v{version}.gz.metadata.json exists next to it"
            ),
        };
    };
    let mut next = version.saturating_add(1);
    while let Some(newer) = existing(store, folder, &format!("v{next}")).await? {
        found = newer;
        next = next.saturating_add(1);
    }
    Ok(Some(found))
}

/// `<stem>.metadata.json` or `<stem>.gz.metadata.json` in `folder`, if one exists.
async fn existing(store: &Arc<dyn ObjectStore>, folder: &Path, stem: &str) -> Result<Option<Path>> {
    for suffix in [".metadata.json", ".gz.metadata.json"] {
        let candidate = folder.clone().join(format!("{stem}{suffix}"));
        match store.head(&candidate).await {
            Ok(_) => return Ok(Some(candidate)),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

async fn list_metadata_files(store: &Arc<dyn ObjectStore>, folder: &Path) -> Result<Vec<Path>> {
    let listed = store.list_with_delimiter(Some(folder)).await;
    let listed = match listed {
        Ok(l) => l,
        Err(object_store::Error::NotFound { .. }) => return Ok(vec![]),
        Err(e) => return Err(e.into()),
    };
    Ok(listed
        .objects
        .into_iter()
        .map(|m| m.location)
        .filter(|p| {
            p.filename()
                .is_some_and(|n| n.ends_with(".metadata.json") && !n.starts_with('.'))
        })
        .collect())
}

/// The version a metadata file name carries: `vN…` or `NNNNN-uuid…`.
fn version_of(path: &Path) -> Option<(u8, u64)> {
    let name = path.filename()?;
    if let Some(rest) = name.strip_prefix('v') {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        return Some((1, digits.parse().ok()?));
    }
    let (digits, _) = name.split_once('-')?;
    Some((0, digits.parse().ok()?))
}

fn newest(paths: &[Path]) -> Option<&Path> {
    paths
        .iter()
        .filter_map(|p| version_of(p).map(|v| (v, p)))
        .max_by(|(a, pa), (b, pb)| a.cmp(b).then_with(|| pa.cmp(pb)))
        .map(|(_, p)| p)
}

/// Reads and parses the metadata file at `path`; `display` names it in errors.
pub async fn read_metadata(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    display: &str,
) -> Result<LoadedMetadata> {
    let bytes = match store.get(path).await {
        Ok(r) => r.bytes().await?,
        Err(object_store::Error::NotFound { .. }) => {
            return plan_err!("Iceberg metadata file '{display}' does not exist");
        }
        Err(e) => return Err(e.into()),
    };
    parse_metadata(&bytes, display)
}

/// Parses the bytes of a metadata file (plain or gzip JSON).
pub fn parse_metadata(bytes: &[u8], display: &str) -> Result<LoadedMetadata> {
    let bad = |what: String| plan_datafusion_err!("Iceberg metadata file '{display}': {what}");
    let json: Vec<u8> = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = vec![];
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .map_err(|e| bad(format!("cannot inflate the gzip-compressed file: {e}")))?;
        out
    } else {
        bytes.to_vec()
    };
    let value: serde_json::Value =
        serde_json::from_slice(&json).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(bad(format!(
            "not Iceberg table metadata: its JSON is {}, not an object",
            json_kind(&value)
        )));
    }
    let version = value
        .get("format-version")
        .and_then(serde_json::Value::as_u64);
    match version {
        Some(1..=3) => {}
        Some(v) => {
            return Err(bad(format!(
                "format-version {v} is not supported (lakescan reads versions 1, 2 and 3)"
            )));
        }
        None => return Err(bad("it has no numeric format-version".into())),
    }
    let mut value = value;
    let inline_manifests = normalize(&mut value);
    unknown_transforms_in_metadata(&mut value);
    let placeholders = SchemaPlaceholders::replace_in_metadata(&mut value);
    let refs = match value.get("refs") {
        Some(r) => serde_json::from_value::<HashMap<String, SnapshotReference>>(r.clone())
            .map_err(|e| bad(format!("its refs do not parse: {e}")))?,
        None => HashMap::new(),
    };
    let metadata: TableMetadata = serde_json::from_value(value).map_err(|e| {
        let why = explained(e, &json, version.unwrap_or(2));
        bad(format!("not valid Iceberg table metadata: {why}"))
    })?;
    let mut refs = refs;
    if let (false, Some(id)) = (refs.contains_key("main"), metadata.current_snapshot_id()) {
        let main = SnapshotReference::new(
            id,
            iceberg::spec::SnapshotRetention::branch(None, None, None),
        );
        refs.insert("main".to_string(), main);
    }
    Ok(LoadedMetadata {
        file: display.to_string(),
        metadata: Arc::new(metadata),
        refs,
        inline_manifests,
        placeholders,
        raw: bytes::Bytes::copy_from_slice(bytes),
    })
}

/// The crate's error `e` for the metadata `json`, or, where it names no field (a shape it
/// does not know), what `diagnose::diagnose` finds in the JSON as it was parsed.
fn explained(e: serde_json::Error, json: &[u8], version: u64) -> String {
    if !e.to_string().contains("did not match any variant") {
        return e.to_string();
    }
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(json) else {
        return e.to_string();
    };
    normalize(&mut value);
    unknown_transforms_in_metadata(&mut value);
    SchemaPlaceholders::replace_in_metadata(&mut value);
    diagnose::diagnose(&value, version).unwrap_or_else(|| e.to_string())
}

/// What a JSON value is, for messages.
fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Rewrites what other writers put in metadata that the `iceberg` crate rejects, without
/// changing its meaning:
/// * snapshot ids written as unsigned 64-bit numbers above `i64::MAX` become the signed
///   value the manifests store (two's complement);
/// * a v3 table without `next-row-id` (only writers use it) gets the end of its highest
///   snapshot row range, or 0;
/// * v1 snapshots that list their manifests inline get a placeholder manifest list; their
///   manifests are returned by snapshot id.
fn normalize(value: &mut serde_json::Value) -> HashMap<i64, Vec<String>> {
    wrap_unsigned_ids(value);
    let is_v3 = value
        .get("format-version")
        .and_then(serde_json::Value::as_u64)
        == Some(3);
    let mut inline = HashMap::new();
    let mut next_row_id = 0u64;
    if let Some(snapshots) = value.get_mut("snapshots").and_then(|s| s.as_array_mut()) {
        for snapshot in snapshots {
            let Some(object) = snapshot.as_object_mut() else {
                continue;
            };
            let first = object
                .get("first-row-id")
                .and_then(serde_json::Value::as_u64);
            let added = object.get("added-rows").and_then(serde_json::Value::as_u64);
            if let (Some(first), Some(added)) = (first, added) {
                next_row_id = next_row_id.max(first.saturating_add(added));
            }
            if object.contains_key("manifest-list") {
                continue;
            }
            let id = object
                .get("snapshot-id")
                .and_then(serde_json::Value::as_i64);
            let manifests = object.remove("manifests");
            if let (Some(id), Some(serde_json::Value::Array(list))) = (id, manifests) {
                let paths = list
                    .iter()
                    .filter_map(|m| m.as_str().map(str::to_string))
                    .collect();
                inline.insert(id, paths);
                object.insert(
                    "manifest-list".into(),
                    serde_json::Value::String(format!("{INLINE_MANIFESTS}:{id}")),
                );
            }
        }
    }
    if let (true, Some(object)) = (is_v3, value.as_object_mut())
        && !object.contains_key("next-row-id")
    {
        object.insert("next-row-id".into(), next_row_id.into());
    }
    inline
}

/// Transforms the `iceberg` crate does not know (a newer spec's, an engine's own) become its
/// `unknown` transform in every partition spec and sort order: such a field prunes nothing
/// (its projection is `true`, as Java's `UnknownTransform`) instead of failing the table.
fn unknown_transforms_in_metadata(value: &mut serde_json::Value) {
    let specs = value
        .get_mut("partition-specs")
        .and_then(|s| s.as_array_mut());
    for spec in specs.into_iter().flatten() {
        if let Some(fields) = spec.get_mut("fields") {
            unknown_transforms(fields);
        }
    }
    if let Some(fields) = value.get_mut("partition-spec") {
        unknown_transforms(fields);
    }
    let orders = value.get_mut("sort-orders").and_then(|s| s.as_array_mut());
    for order in orders.into_iter().flatten() {
        if let Some(fields) = order.get_mut("fields") {
            unknown_transforms(fields);
        }
    }
}

/// In a JSON array of partition or sort fields, replaces each `transform` the crate cannot
/// parse by `unknown`.
pub(crate) fn unknown_transforms(fields: &mut serde_json::Value) {
    let Some(fields) = fields.as_array_mut() else {
        return;
    };
    for field in fields {
        let Some(transform) = field.get_mut("transform") else {
            continue;
        };
        let known = transform
            .as_str()
            .is_some_and(|t| t.parse::<iceberg::spec::Transform>().is_ok());
        if !known {
            *transform = serde_json::Value::String("unknown".into());
        }
    }
}

/// Replaces unsigned values above `i64::MAX` of every `…snapshot-id` key by their signed
/// (two's complement) value.
fn wrap_unsigned_ids(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key.ends_with("snapshot-id")
                    && let Some(u) = v.as_u64()
                    && u > i64::MAX as u64
                {
                    *v = serde_json::Value::from(u as i64);
                } else {
                    wrap_unsigned_ids(v);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(wrap_unsigned_ids),
        _ => {}
    }
}

/// The snapshot a scan reads (`None`: the table has no snapshot, so no rows) and the schema
/// it reads with: the current schema for the current snapshot and branches, the snapshot's
/// own schema for a snapshot id, a timestamp or a tag (as Spark and Trino time travel).
pub fn select_snapshot(
    loaded: &LoadedMetadata,
    selector: &SnapshotSelector,
) -> Result<(Option<SnapshotRef>, SchemaRef)> {
    let md = &loaded.metadata;
    let current_schema = Arc::clone(md.current_schema());
    let own_schema = |s: &SnapshotRef| -> Result<SchemaRef> {
        s.schema(md).map_err(|e| {
            plan_datafusion_err!(
                "Iceberg table '{}': snapshot {} names a schema that does not exist: {e}",
                loaded.file,
                s.snapshot_id()
            )
        })
    };
    match selector {
        SnapshotSelector::Current => Ok((md.current_snapshot().cloned(), current_schema)),
        SnapshotSelector::Id(id) => match md.snapshot_by_id(*id) {
            Some(s) => Ok((Some(Arc::clone(s)), own_schema(s)?)),
            None => plan_err!(
                "Iceberg table '{}' has no snapshot {id}; its snapshots: {}",
                loaded.file,
                known_snapshots(md)
            ),
        },
        SnapshotSelector::AsOf(millis) => {
            let id = snapshot_as_of(loaded, *millis)?;
            match md.snapshot_by_id(id) {
                Some(s) => Ok((Some(Arc::clone(s)), own_schema(s)?)),
                None => plan_err!(
                    "Iceberg table '{}': its snapshot log names snapshot {id} at or before {}, \
                     which does not exist",
                    loaded.file,
                    instant(*millis)
                ),
            }
        }
        SnapshotSelector::Ref(name) => {
            let Some(reference) = loaded.refs.get(name) else {
                let mut names: Vec<&String> = loaded.refs.keys().collect();
                names.sort();
                return plan_err!(
                    "Iceberg table '{}' has no branch or tag '{name}'; its refs: {names:?}",
                    loaded.file
                );
            };
            let Some(s) = md.snapshot_by_id(reference.snapshot_id) else {
                return plan_err!(
                    "Iceberg table '{}': ref '{name}' points at snapshot {}, which does not exist",
                    loaded.file,
                    reference.snapshot_id
                );
            };
            let schema = match reference.is_branch() {
                true => current_schema,
                false => own_schema(s)?,
            };
            Ok((Some(Arc::clone(s)), schema))
        }
    }
}

/// The snapshot current at `millis`: the last snapshot-log entry at or before it (Java's
/// `SnapshotUtil.snapshotIdAsOfTime`). A time before the first entry is an error naming the
/// oldest one — never a snapshot the log does not list (staged, or rolled back). A table
/// without a snapshot log uses the ancestry of its current snapshot instead.
fn snapshot_as_of(loaded: &LoadedMetadata, millis: i64) -> Result<i64> {
    let md = &loaded.metadata;
    let mut logged: Vec<(i64, i64)> = md
        .history()
        .iter()
        .map(|l| (l.timestamp_ms, l.snapshot_id))
        .collect();
    let source = match logged.is_empty() {
        true => {
            logged = ancestry(md);
            "snapshot"
        }
        false => "snapshot-log entry",
    };
    if let Some((_, id)) = logged
        .iter()
        .filter(|(t, _)| *t <= millis)
        .max_by_key(|(t, _)| *t)
    {
        return Ok(*id);
    }
    match logged.iter().min_by_key(|(t, _)| *t) {
        Some((oldest, id)) => plan_err!(
            "Iceberg table '{}' has no snapshot at or before {}: its oldest {source} is \
             snapshot {id} at {}",
            loaded.file,
            instant(millis),
            instant(*oldest)
        ),
        None => plan_err!(
            "Iceberg table '{}' has no snapshot at or before {}: it has no snapshots",
            loaded.file,
            instant(millis)
        ),
    }
}

/// `(timestamp, id)` of the current snapshot and its ancestors.
fn ancestry(md: &TableMetadata) -> Vec<(i64, i64)> {
    let mut out = vec![];
    let mut next = md.current_snapshot();
    while let Some(s) = next {
        if out.iter().any(|(_, id)| *id == s.snapshot_id()) {
            break; // A parent cycle in bad metadata: stop, do not loop.
        }
        out.push((s.timestamp_ms(), s.snapshot_id()));
        next = s.parent_snapshot_id().and_then(|p| md.snapshot_by_id(p));
    }
    out
}

/// `millis` since the epoch as an RFC 3339 time in UTC.
fn instant(millis: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(millis) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        None => format!("{millis} ms since the epoch"),
    }
}

fn known_snapshots(md: &TableMetadata) -> String {
    let mut ids: Vec<i64> = md.snapshots().map(|s| s.snapshot_id()).collect();
    ids.sort();
    match ids.is_empty() {
        true => "none".to_string(),
        false => format!("{ids:?}"),
    }
}

mod diagnose;

#[cfg(test)]
mod tests;
