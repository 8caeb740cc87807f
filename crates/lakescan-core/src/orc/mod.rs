//! The ORC split reader, beside Parquet's under one split lifecycle (as Velox reads DWRF/ORC
//! beside Parquet), on `orc-rust` 0.8's stripes and its decoders of non-primitive columns.
//!
//! | file            | owns                                                              |
//! |-----------------|-------------------------------------------------------------------|
//! | this file       | [`OrcFormat`]: the steps of the shared split lifecycle (below)    |
//! | [`open`]        | `LoadTail`: postscript, footer, stripe statistics, checked        |
//! | [`calendar`]    | dates and timestamps of files in Java's hybrid calendar, converted |
//! | [`nested`]      | a correction applied to the leaves of nested columns               |
//! | [`late_dst`]    | `timestamp` wall clocks after 2099 in zones with daylight saving   |
//! | [`projection`]  | the columns decoded: top-level columns, the struct members read    |
//! | [`synthetic_tail`] | tails handed to `orc-rust`: fetched bytes, or a footer alone     |
//! | [`mod@file`]    | `OrcFile`: a file whose tail was read and checked                 |
//! | [`errors`]      | errors of an ORC file, naming it                                   |
//! | [`tail_check`]  | postscript, codec, footer, types and stripes checked before `orc-rust` |
//! | [`tail_cache`]  | tails kept in the session's file metadata cache                    |
//! | [`stripes`]     | stripes of the byte range (midpoint rule), `LoadStripe`, row index |
//! | [`statistics`]  | stripe and row-group statistics in table types                    |
//! | [`decode`]      | filter columns first, the rest for surviving rows; row numbers    |
//! | [`primitive`]   | a stripe's column decoders: lakescan's for primitive columns      |
//! | [`seam`]        | `FormatSeam`: schema, statistics and whole columns of a file      |
//! | [`rle`]         | integer RLE v1/v2, byte RLE, booleans, varints over stream bytes  |
//! | [`timestamp`]   | timestamp values as ORC's C++ reader decodes them (negative nanos) |
//!
//! The lifecycle is every format's ([`crate::format::lifecycle`]), with stripes for units:
//!
//! ```text
//!  Pending ─LoadTail, bind─▶ Bound ─Prune─▶ Pruned ─LoadDeletes─▶ Ready ─▶ Reading ─▶ Done
//!                              │              │
//!                              └─a constant   ├─no stripe in range ─▶ Done
//!                                rejects      └─stripe statistics reject all ─▶ Done
//! ```
//!
//! Columns bind by name, as for Parquet; what the shared seam does (range, constants,
//! statistics pruning, assembling) is [`crate::format`].

pub mod calendar;
pub mod decode;
pub mod errors;
pub mod file;
pub mod late_dst;
pub mod nested;
pub mod open;
pub mod primitive;
pub mod projection;
pub mod rle;
pub mod seam;
pub mod statistics;
pub mod stripes;
pub mod synthetic_tail;
pub mod tail_cache;
pub mod tail_check;
pub mod timestamp;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow::array::RecordBatch;
use async_trait::async_trait;
use datafusion::common::Result;

use crate::binding::{FieldSource, SplitBinding};
use crate::deleted_rows::DeletedRows;
use crate::format::assemble::Assembler;
use crate::format::column_predicate::ColumnPredicate;
use crate::format::{FileFormatReader, FormatSplitReader};
use crate::format::{constants_rejected, member_missing_in_type, prune_units};
use crate::reader::{ReaderBatch, SplitContext};
use crate::required::{PathStep, RequiredSubfields, SubfieldPath, has_path, prune_type};
use crate::split::FileSplit;
use decode::{Decoding, Reading, decode_type};
use file::OrcFile;
use projection::DecodedRoot;
use statistics::{OrcStatistics, OrcUnit};

/// Reads one split of an ORC file into batches of the reader schema `R`: the shared split
/// lifecycle over [`OrcFormat`].
pub type OrcSplitReader = FormatSplitReader<OrcFormat>;

/// The ORC format under the split lifecycle: stripes are its units.
#[derive(Debug, Clone, Copy, Default)]
pub struct OrcFormat;

/// An opened file bound to the scan.
#[derive(Clone)]
pub struct Bound {
    file: OrcFile,
    binding: SplitBinding,
}

#[async_trait]
impl FileFormatReader for OrcFormat {
    type Bound = Bound;
    type Reading = Reading;

    /// `LoadTail` (checked; renamed to the table's names by `iceberg.id` or by position),
    /// then `bind`.
    async fn open(&self, split: Arc<FileSplit>, context: SplitContext) -> Result<Bound> {
        let file = open::load_tail(Arc::clone(&split), context.clone()).await?;
        let binding =
            SplitBinding::try_new(&context.spec, &split, &context.constants, &file.schema)?;
        Ok(Bound { file, binding })
    }

    fn constants_rejected(&self, bound: &Bound, context: &SplitContext) -> bool {
        constants_rejected(context, &bound.binding, member_missing_in_type)
    }

    fn units_in_range(&self, bound: &Bound, split: &FileSplit) -> Vec<usize> {
        stripes::stripes_in_range(bound.file.metadata.stripe_metadatas(), split)
    }

    /// Of `stripes`, those the filters may match by stripe statistics.
    fn prune(
        &self,
        bound: &Bound,
        stripes: &[usize],
        split: &FileSplit,
        context: &SplitContext,
    ) -> Result<Vec<usize>> {
        if context.filters.filters.is_empty() && context.filters.residual.is_none() {
            return Ok(stripes.to_vec());
        }
        let infos = bound.file.metadata.stripe_metadatas();
        let first_rows = stripes::first_rows(infos);
        let units: Vec<OrcUnit> = stripes
            .iter()
            .map(|&s| OrcUnit {
                first_row: first_rows[s],
                rows: infos[s].number_of_rows(),
                columns: bound
                    .file
                    .stripe_statistics
                    .get(s)
                    .map(|st| st.col_stats.iter().cloned().enumerate().collect())
                    .unwrap_or_default(),
            })
            .collect();
        let stats = OrcStatistics::new(&context.spec, &bound.binding, &bound.file, &units);
        let positions: Vec<usize> = (0..units.len()).collect();
        let kept = prune_units(context, split, &stats, &positions)?;
        Ok(kept.into_iter().map(|k| stripes[k]).collect())
    }

    /// The decoder of the stripes, with the filters and adaptive order in force now.
    fn read(
        &self,
        bound: Bound,
        stripes: Vec<usize>,
        deleted: Option<Arc<DeletedRows>>,
        split: &Arc<FileSplit>,
        context: &SplitContext,
    ) -> Result<Reading> {
        let decoding = decoding(context, &bound)?;
        let decoded_roots: BTreeSet<usize> = decoding.roots.iter().map(|r| r.root).collect();
        let generated = crate::parquet::plan::generated_filters(context, &bound.binding);
        let assembler = Assembler::try_new(
            context,
            split,
            &bound.binding,
            &bound.file.schema,
            &decoded_roots,
            (vec![], generated),
        )?;
        context
            .metrics
            .leaves_decoded
            .add(decoding.roots.len() * stripes.len());
        Reading::new(
            bound.file,
            context.clone(),
            Arc::clone(split),
            bound.binding,
            decoding,
            stripes,
            deleted,
            assembler,
        )
    }

    async fn next(
        &self,
        reading: &mut Reading,
        _split: &FileSplit,
        context: &SplitContext,
    ) -> Result<Option<ReaderBatch>> {
        let decoded = reading.next().await?;
        Ok(match decoded.batch {
            Some(batch) => Some(ReaderBatch {
                batch,
                rows_scanned: decoded.rows_scanned,
                rows_deleted: decoded.rows_deleted,
            }),
            // Rows the filters dropped after the last batch still count as scanned.
            None if decoded.rows_scanned > 0 => Some(ReaderBatch {
                batch: RecordBatch::new_empty(Arc::clone(context.spec.reader_schema())),
                rows_scanned: decoded.rows_scanned,
                rows_deleted: decoded.rows_deleted,
            }),
            None => None,
        })
    }
}

/// The columns to decode (filter columns first, in adaptive order) and the filters.
fn decoding(context: &SplitContext, bound: &Bound) -> Result<Decoding> {
    let spec = &context.spec;
    let schema = &bound.file.schema;
    let mut filtered = vec![];
    for (subfield, filter) in &context.filters.filters {
        let Some((i, field)) = spec.field(subfield.root()) else {
            continue;
        };
        let FieldSource::File { root, file_type } = &bound.binding.sources()[i] else {
            continue;
        };
        // A member the file lacks is NULL in every row (`bind` tested it); one with a
        // default is filtered on the struct with its defaults filled in.
        let has_default = field
            .handle
            .member_defaults
            .as_deref()
            .is_some_and(|d| d.at(subfield.path()).is_some());
        if member_missing_in_type(*root, file_type, subfield) && !has_default {
            continue;
        }
        filtered.push((*root, subfield, filter, field));
    }
    spec.adaptive()
        .order(&mut filtered, |(_, subfield, filter, _)| {
            (subfield.to_string(), filter.data_type().clone())
        });
    let filter_roots = filtered
        .iter()
        .map(|(root, ..)| *root)
        .collect::<BTreeSet<_>>()
        .len();
    let mut roots: Vec<DecodedRoot> = vec![];
    // What of each decoded root the filters and the outputs read.
    let mut needs: Vec<RequiredSubfields> = vec![];
    let mut position: HashMap<usize, usize> = HashMap::new();
    let mut add = |root: usize, table_type: &arrow::datatypes::DataType, need: SubfieldNeed| {
        let k = *position.entry(root).or_insert_with(|| {
            let file_field = schema.field(root);
            let whole_as = decode_type(file_field.data_type(), table_type);
            roots.push(DecodedRoot {
                root,
                name: file_field.name().clone(),
                decode_as: whole_as.clone(),
                whole_as,
            });
            needs.push(RequiredSubfields::Nothing);
            roots.len() - 1
        });
        match need {
            SubfieldNeed::Path(path) => needs[k].add(path),
            SubfieldNeed::Some(required) => needs[k].merge(required),
        }
        k
    };
    let mut filters = vec![];
    for (root, subfield, filter, field) in filtered {
        let path = subfield.path().iter().cloned().map(PathStep::Field);
        let k = add(
            root,
            &field.handle.data_type,
            SubfieldNeed::Path(path.collect()),
        );
        filters.push((
            k,
            ColumnPredicate::new(field, subfield, filter, spec.adaptive()),
        ));
    }
    for (field, source) in spec.fields().iter().zip(bound.binding.sources()) {
        if field.channel.is_none() {
            continue;
        }
        // Only the members the output reads are decoded, unless defaults fill members
        // in (they need the whole struct) or the value is needed whole.
        let need = match (&field.required, &field.handle.member_defaults, source) {
            (RequiredSubfields::Paths(_), None, FieldSource::File { .. }) => {
                SubfieldNeed::Some(&field.required)
            }
            _ => SubfieldNeed::Path(vec![]),
        };
        match source {
            FieldSource::Filled {
                file: Some((root, _)),
                ..
            } => {
                add(*root, &field.handle.data_type, need);
            }
            FieldSource::File { root, file_type } if reads_any(field, file_type) => {
                add(*root, &field.handle.data_type, need);
            }
            _ => {}
        }
    }
    // A root is decoded in the members its needs reach (subfield pruning on ORC).
    for (root, need) in roots.iter_mut().zip(&needs) {
        root.decode_as = prune_type(&root.decode_as, need);
    }
    Ok(Decoding {
        roots,
        filter_roots,
        filters,
        row_numbers: bound.binding.needs_row_index(),
    })
}

/// What a filter or an output reads of a decoded root.
enum SubfieldNeed<'a> {
    /// The subtree at one path (empty: the whole value).
    Path(SubfieldPath),
    /// What an output's required subfields say.
    Some(&'a RequiredSubfields),
}

/// Whether a channel reads anything of its file column: a column none of whose required
/// members this file has (and without defaults) reads as NULL without decoding, as the
/// Parquet reader does.
fn reads_any(field: &crate::scan_spec::FieldSpec, file_type: &arrow::datatypes::DataType) -> bool {
    match &field.required {
        RequiredSubfields::Paths(paths) => {
            field.handle.member_defaults.is_some() || paths.iter().any(|p| has_path(file_type, p))
        }
        _ => true,
    }
}
