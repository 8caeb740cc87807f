//! Plan data as bytes, for distributed execution (`docs/architecture.md`, "Distributed
//! execution").
//!
//! A lakescan plan node or table leaves its process as one *frame*:
//!
//! ```text
//!  b"LKSC" │ u16 LE wire version │ u8 node kind │ u8 n │ n bytes: lakescan version │ body
//! ```
//!
//! The body is the node's plan data, serde-derived on the plan types themselves (splits,
//! column handles, filters, field ids, delete files) and written with `postcard`; DataFusion
//! values inside it take datafusion-proto's encodings (scalars, Arrow types, physical
//! expressions), so they mean exactly what DataFusion means by them. The magic cannot begin a
//! Ballista or datafusion-proto message (`L` = 0x4C is field 9 with wire type 4, an
//! end-group no valid message starts with), so a codec tells its own frames from the ones it
//! delegates by the first four bytes. A frame of another wire version is refused with both
//! versions named: client, scheduler and executors must run one lakescan.
//!
//! Why by hand: datafusion-proto encodes DataFusion's own nodes and expressions, not a
//! table format's plan data; its extension codecs hand us a byte buffer to fill.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema};
use datafusion::common::{DataFusionError, Result, ScalarValue, plan_err};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::PhysicalExpr;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::physical_plan::from_proto::parse_physical_expr;
use datafusion_proto::physical_plan::to_proto::serialize_physical_expr;
use datafusion_proto::protobuf;
use prost::Message;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The first bytes of every lakescan frame.
pub const MAGIC: &[u8; 4] = b"LKSC";

/// Bumped on any change of a frame's body that an older reader would misread.
pub const WIRE_VERSION: u16 = 1;

/// This build's lakescan version, written into frames for messages.
pub const LAKESCAN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a frame holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NodeKind {
    /// A `LakeScanExec` (physical plan).
    Scan = 1,
    /// A Hive table provider (logical plan).
    HiveTable = 2,
    /// An Iceberg table provider (logical plan).
    IcebergTable = 3,
    /// An Iceberg changelog provider (`table_changes`, logical plan).
    IcebergChanges = 4,
}

impl NodeKind {
    fn of(byte: u8) -> Option<Self> {
        Some(match byte {
            1 => Self::Scan,
            2 => Self::HiveTable,
            3 => Self::IcebergTable,
            4 => Self::IcebergChanges,
            _ => return None,
        })
    }
}

/// Appends a frame of `kind` holding `body` to `buf`.
pub fn encode_frame(kind: NodeKind, body: &impl Serialize, buf: &mut Vec<u8>) -> Result<()> {
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&WIRE_VERSION.to_le_bytes());
    buf.push(kind as u8);
    // The version string is short (a crate version); a longer one is cut, never wrong.
    let version = &LAKESCAN_VERSION.as_bytes()[..LAKESCAN_VERSION.len().min(255)];
    buf.push(version.len() as u8);
    buf.extend_from_slice(version);
    buf.extend_from_slice(&encode_body(body)?);
    Ok(())
}

/// `body` as bytes, the way frames hold bodies (for state nested in a body, such as a reader
/// adapter's).
pub fn encode_body(body: &impl Serialize) -> Result<Vec<u8>> {
    postcard::to_stdvec(body)
        .map_err(|e| DataFusionError::Internal(format!("cannot encode a lakescan plan: {e}")))
}

/// Whether `buf` is a lakescan frame (else it is another codec's).
pub fn is_frame(buf: &[u8]) -> bool {
    buf.starts_with(MAGIC)
}

/// The kind and body of the frame `buf`; an error naming both versions when it was written
/// by another wire version, or when it is cut short.
pub fn open_frame(buf: &[u8]) -> Result<(NodeKind, &[u8])> {
    let Some(rest) = buf.strip_prefix(MAGIC) else {
        return plan_err!("not a lakescan plan frame (no LKSC magic)");
    };
    let truncated = || plan_err!("lakescan plan frame cut short ({} bytes)", buf.len());
    let [v0, v1, kind, len, rest @ ..] = rest else {
        return truncated();
    };
    let version = u16::from_le_bytes([*v0, *v1]);
    let Some(writer) = rest.get(..*len as usize) else {
        return truncated();
    };
    let writer = String::from_utf8_lossy(writer);
    if version != WIRE_VERSION {
        return plan_err!(
            "a lakescan plan of wire version {version} (lakescan {writer}) cannot be read by \
             lakescan {LAKESCAN_VERSION} (wire version {WIRE_VERSION}): run the same lakescan \
             version on the client, the scheduler and every executor"
        );
    }
    let Some(kind) = NodeKind::of(*kind) else {
        return plan_err!(
            "unknown lakescan plan node kind {kind} (written by lakescan {writer}; this is \
             lakescan {LAKESCAN_VERSION})"
        );
    };
    Ok((kind, &rest[*len as usize..]))
}

/// The body of a frame, read as `T`; `what` names it in errors.
pub fn decode_body<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T> {
    postcard::from_bytes(body)
        .map_err(|e| DataFusionError::Plan(format!("cannot decode the lakescan {what}: {e}")))
}

/// A physical expression in datafusion-proto's encoding (functions by name, resolved in the
/// decoding session: `hive_hash` must be registered there).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExprBytes(#[serde(with = "serde_bytes_vec")] Vec<u8>);

impl ExprBytes {
    /// Encodes `expr` with `codec` (for the expressions it does not know itself).
    pub fn encode(
        expr: &Arc<dyn PhysicalExpr>,
        codec: &dyn PhysicalExtensionCodec,
    ) -> Result<Self> {
        Ok(Self(serialize_physical_expr(expr, codec)?.encode_to_vec()))
    }

    /// The expression over `schema`.
    pub fn decode(
        &self,
        schema: &Schema,
        ctx: &TaskContext,
        codec: &dyn PhysicalExtensionCodec,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let node = protobuf::PhysicalExprNode::decode(self.0.as_slice()).map_err(|e| {
            DataFusionError::Plan(format!("corrupt expression in a lakescan plan: {e}"))
        })?;
        parse_physical_expr(&node, ctx, schema, codec)
    }
}

/// A table format's adapter as it crosses the wire: its kind (which decoder reads it)
/// and its state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EncodedAdapter {
    /// Names the decoder ([`crate::exec::AdapterDecoders`]).
    pub kind: String,
    /// What the adapter needs to read its splits (per-split data), as its crate encodes it.
    #[serde(with = "serde_bytes_vec")]
    pub state: Vec<u8>,
}

/// Bytes as one length-prefixed run (not a sequence of numbers).
pub mod serde_bytes_vec {
    use super::*;

    /// See the module.
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<u8>, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> std::result::Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: serde::de::Error>(
                self,
                v: Vec<u8>,
            ) -> std::result::Result<Vec<u8>, E> {
                Ok(v)
            }
        }
        d.deserialize_byte_buf(Visit)
    }
}

fn encode_message<M: Message, S: Serializer>(m: &M, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_bytes(&m.encode_to_vec())
}

fn decode_message<'de, M: Message + Default, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<M, D::Error> {
    let bytes = serde_bytes_vec::deserialize(d)?;
    M::decode(bytes.as_slice()).map_err(serde::de::Error::custom)
}

/// A [`ScalarValue`] in datafusion-proto's encoding.
pub mod scalar {
    use super::*;

    /// See the module.
    pub fn serialize<S: Serializer>(v: &ScalarValue, s: S) -> std::result::Result<S::Ok, S::Error> {
        let proto = protobuf::ScalarValue::try_from(v).map_err(serde::ser::Error::custom)?;
        encode_message(&proto, s)
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<ScalarValue, D::Error> {
        let proto: protobuf::ScalarValue = decode_message(d)?;
        ScalarValue::try_from(&proto).map_err(serde::de::Error::custom)
    }
}

/// An optional [`ScalarValue`] in datafusion-proto's encoding.
pub mod opt_scalar {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Wrap(#[serde(with = "scalar")] ScalarValue);

    /// See the module.
    pub fn serialize<S: Serializer>(
        v: &Option<ScalarValue>,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        v.clone().map(Wrap).serialize(s)
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<ScalarValue>, D::Error> {
        Ok(Option::<Wrap>::deserialize(d)?.map(|w| w.0))
    }
}

/// An Arrow [`DataType`] in datafusion-proto's encoding.
pub mod data_type {
    use super::*;

    /// See the module.
    pub fn serialize<S: Serializer>(v: &DataType, s: S) -> std::result::Result<S::Ok, S::Error> {
        let proto = protobuf::ArrowType::try_from(v).map_err(serde::ser::Error::custom)?;
        encode_message(&proto, s)
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<DataType, D::Error> {
        let proto: protobuf::ArrowType = decode_message(d)?;
        DataType::try_from(&proto).map_err(serde::de::Error::custom)
    }
}

/// `(name, type)` pairs (partition columns, bucketing columns), types in datafusion-proto's
/// encoding.
pub mod named_types {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Named(String, #[serde(with = "data_type")] DataType);

    /// See the module.
    pub fn serialize<S: Serializer>(
        v: &[(String, DataType)],
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|(n, t)| Named(n.clone(), t.clone())))
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Vec<(String, DataType)>, D::Error> {
        Ok(Vec::<Named>::deserialize(d)?
            .into_iter()
            .map(|Named(n, t)| (n, t))
            .collect())
    }
}

/// An Arrow [`Schema`] in datafusion-proto's encoding (field metadata included).
pub mod schema {
    use super::*;

    /// See the module.
    pub fn serialize<S: Serializer>(v: &Schema, s: S) -> std::result::Result<S::Ok, S::Error> {
        let proto = protobuf::Schema::try_from(v).map_err(serde::ser::Error::custom)?;
        encode_message(&proto, s)
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Schema, D::Error> {
        let proto: protobuf::Schema = decode_message(d)?;
        Schema::try_from(&proto).map_err(serde::de::Error::custom)
    }
}

/// An object store path as its encoded text.
pub mod path {
    use super::*;
    use object_store::path::Path;

    /// See the module.
    pub fn serialize<S: Serializer>(v: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(v.as_ref())
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Path, D::Error> {
        Path::parse(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// An object store URL (`s3://bucket/`, `file:///`) as its text.
pub mod store_url {
    use super::*;
    use datafusion::execution::object_store::ObjectStoreUrl;

    /// See the module.
    pub fn serialize<S: Serializer>(
        v: &ObjectStoreUrl,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(v.as_str())
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<ObjectStoreUrl, D::Error> {
        ObjectStoreUrl::parse(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// An optional object store URL as its text.
pub mod opt_store_url {
    use super::*;
    use datafusion::execution::object_store::ObjectStoreUrl;

    #[derive(Serialize, Deserialize)]
    struct Wrap(#[serde(with = "store_url")] ObjectStoreUrl);

    /// See the module.
    pub fn serialize<S: Serializer>(
        v: &Option<ObjectStoreUrl>,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        v.clone().map(Wrap).serialize(s)
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<ObjectStoreUrl>, D::Error> {
        Ok(Option::<Wrap>::deserialize(d)?.map(|w| w.0))
    }
}

/// An optional UTC time as seconds and nanoseconds since the epoch (exactly: a footer kept
/// in a metadata cache is matched by it).
pub mod opt_time {
    use super::*;
    use chrono::{DateTime, Utc};

    /// See the module.
    pub fn serialize<S: Serializer>(
        v: &Option<DateTime<Utc>>,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        v.map(|t| (t.timestamp(), t.timestamp_subsec_nanos()))
            .serialize(s)
    }

    /// See the module.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<DateTime<Utc>>, D::Error> {
        match Option::<(i64, u32)>::deserialize(d)? {
            None => Ok(None),
            Some((secs, nanos)) => match DateTime::from_timestamp(secs, nanos) {
                Some(t) => Ok(Some(t)),
                None => Err(serde::de::Error::custom(format!(
                    "time out of range: {secs} s {nanos} ns"
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Values {
        #[serde(with = "scalar")]
        a: ScalarValue,
        #[serde(with = "opt_scalar")]
        b: Option<ScalarValue>,
        #[serde(with = "data_type")]
        t: DataType,
    }

    #[test]
    fn a_frame_round_trips_its_values() -> Result<()> {
        let values = Values {
            a: ScalarValue::Decimal128(Some(12345), 10, 2),
            b: Some(ScalarValue::Utf8(Some("x".into()))),
            t: DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("UTC".into())),
        };
        let mut buf = vec![];
        encode_frame(NodeKind::Scan, &values, &mut buf)?;
        assert!(is_frame(&buf));
        let (kind, body) = open_frame(&buf)?;
        assert_eq!(kind, NodeKind::Scan);
        assert_eq!(decode_body::<Values>(body, "test")?, values);
        Ok(())
    }

    #[test]
    fn another_wire_version_is_refused_naming_both() -> Result<()> {
        let mut buf = vec![];
        encode_frame(NodeKind::Scan, &1u8, &mut buf)?;
        buf[4..6].copy_from_slice(&(WIRE_VERSION + 1).to_le_bytes());
        let err = open_frame(&buf).map(|_| ()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("wire version {}", WIRE_VERSION + 1)),
            "{err}"
        );
        assert!(
            err.contains(&format!("wire version {WIRE_VERSION}")),
            "{err}"
        );
        assert!(err.contains("same lakescan version"), "{err}");
        Ok(())
    }

    #[test]
    fn a_cut_frame_and_an_unknown_kind_are_clear_errors() -> Result<()> {
        let mut buf = vec![];
        encode_frame(NodeKind::Scan, &1u8, &mut buf)?;
        let err = open_frame(&buf[..6]).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("cut short"), "{err}");
        buf[6] = 99;
        let err = open_frame(&buf).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("unknown lakescan plan node kind 99"), "{err}");
        let err = decode_body::<Values>(&[1, 2], "scan")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot decode the lakescan scan"), "{err}");
        Ok(())
    }
}
