//! The ORC split reader (seed §7: DWRF/ORC beside Parquet under one split reader), on
//! `orc-rust` 0.8's stripes and column decoders.
//!
//! | file            | owns                                                              |
//! |-----------------|-------------------------------------------------------------------|
//! | this file       | [`OrcSplitReader`]: the split's lifecycle (below)                 |
//! | [`open`]        | `LoadTail`: postscript, footer, stripe statistics, checked        |
//! | [`projection`]  | the columns decoded: top-level columns, the struct members read    |
//! | [`stripes`]     | stripes of the byte range (midpoint rule), `LoadStripe`, row index |
//! | [`statistics`]  | stripe and row-group statistics in table types                    |
//! | [`decode`]      | filter columns first, the rest for surviving rows; row numbers    |
//!
//! The lifecycle is Parquet's (`crate::parquet`), with stripes for row groups:
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

pub mod decode;
pub mod open;
pub mod projection;
pub mod statistics;
pub mod stripes;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow::array::RecordBatch;
use async_trait::async_trait;
use datafusion::common::{Result, internal_err};

use crate::binding::{FieldSource, SplitBinding};
use crate::deleted_rows::DeletedRows;
use crate::format::{constants_rejected, member_missing_in_type, prune_units};
use crate::parquet::assemble::Assembler;
use crate::parquet::row_filter::ColumnPredicate;
use crate::reader::{
    BatchStage, DeleteSource, Deletes, Prepared, ReaderBatch, Refreshed, SplitContext, SplitReader,
};
use crate::required::{PathStep, RequiredSubfields, SubfieldPath, has_path, prune_type};
use crate::split::FileSplit;
use crate::split_filters::SplitFilters;
use decode::{DecodedRoot, Decoding, Reading, decode_type};
use open::OrcFile;
use statistics::{OrcStatistics, OrcUnit};

/// Reads one split of an ORC file into batches of the reader schema `R`.
pub struct OrcSplitReader {
    split: Arc<FileSplit>,
    context: SplitContext,
    state: State,
    /// The split's deletes, until `LoadDeletes` loads them.
    deletes: Option<Box<dyn DeleteSource>>,
    /// The stages the loaded deletes add, until the driver takes them.
    delete_stages: Vec<BatchStage>,
}

/// Where a split is in its lifecycle (see the module docs).
enum State {
    Pending,
    Bound(Bound),
    Pruned(Chosen),
    Ready(Chosen, Option<Arc<DeletedRows>>),
    Reading(Box<Reading>),
    Done,
}

/// An opened file bound to the scan.
struct Bound {
    file: OrcFile,
    binding: SplitBinding,
}

/// A bound file and the stripes to read.
struct Chosen {
    bound: Bound,
    stripes: Vec<usize>,
}

impl OrcSplitReader {
    /// A reader for `split` whose deletes `deletes` gives; nothing is opened before
    /// [`SplitReader::prepare`].
    pub fn new(
        split: Arc<FileSplit>,
        context: SplitContext,
        deletes: Option<Box<dyn DeleteSource>>,
    ) -> Self {
        Self {
            split,
            context,
            state: State::Pending,
            deletes,
            delete_stages: vec![],
        }
    }

    fn rejected(&self, binding: &SplitBinding) -> bool {
        constants_rejected(&self.context, binding, member_missing_in_type)
    }

    /// `bind`; `None` when a filter rejects a constant.
    fn bind(&self, file: OrcFile) -> Result<Option<Bound>> {
        let binding = SplitBinding::try_new(
            &self.context.spec,
            &self.split,
            &self.context.constants,
            &file.schema,
        )?;
        if self.rejected(&binding) {
            return Ok(None);
        }
        Ok(Some(Bound { file, binding }))
    }

    /// Of `stripes`, those the filters may match by stripe statistics.
    fn prune(&self, bound: &Bound, stripes: &[usize]) -> Result<Vec<usize>> {
        if self.context.filters.filters.is_empty() && self.context.filters.residual.is_none() {
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
        let stats = OrcStatistics::new(
            &self.context.spec,
            &bound.binding,
            bound.file.metadata.root_data_type().children(),
            &units,
        );
        let positions: Vec<usize> = (0..units.len()).collect();
        let kept = prune_units(&self.context, &self.split, &stats, &positions)?;
        Ok(kept.into_iter().map(|k| stripes[k]).collect())
    }

    /// `choose`: the stripes of the byte range that statistics may match.
    fn choose(&self, bound: Bound) -> Result<std::result::Result<Chosen, Prepared>> {
        let in_range =
            stripes::stripes_in_range(bound.file.metadata.stripe_metadatas(), &self.split);
        self.context.metrics.row_groups_total.add(in_range.len());
        if in_range.is_empty() {
            return Ok(Err(Prepared::EmptyRange));
        }
        let kept = self.prune(&bound, &in_range)?;
        self.context
            .metrics
            .row_groups_pruned_statistics
            .add(in_range.len() - kept.len());
        if kept.is_empty() {
            return Ok(Err(Prepared::NothingToRead));
        }
        Ok(Ok(Chosen {
            bound,
            stripes: kept,
        }))
    }

    /// The decoder of a prepared split, with the filters and adaptive order in force now.
    fn start_reading(&self, chosen: Chosen, deleted: Option<Arc<DeletedRows>>) -> Result<Reading> {
        let Chosen { bound, stripes } = chosen;
        let decoding = self.decoding(&bound)?;
        let decoded_roots: BTreeSet<usize> = decoding.roots.iter().map(|r| r.root).collect();
        let generated = crate::parquet::plan::generated_filters(&self.context, &bound.binding);
        let assembler = Assembler::try_new(
            &self.context,
            &self.split,
            &bound.binding,
            &bound.file.schema,
            &decoded_roots,
            (vec![], generated),
        )?;
        self.context
            .metrics
            .leaves_decoded
            .add(decoding.roots.len() * stripes.len());
        Reading::new(
            bound.file,
            self.context.clone(),
            Arc::clone(&self.split),
            bound.binding,
            decoding,
            stripes,
            deleted,
            assembler,
        )
    }

    /// The columns to decode (filter columns first, in adaptive order) and the filters.
    fn decoding(&self, bound: &Bound) -> Result<Decoding> {
        let spec = &self.context.spec;
        let schema = &bound.file.schema;
        let mut filtered = vec![];
        for (subfield, filter) in &self.context.filters.filters {
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
                ColumnPredicate {
                    column: subfield.to_string(),
                    projection: parquet::arrow::ProjectionMask::all(),
                    subfield: subfield.clone(),
                    filter: filter.clone(),
                    adaptive: Arc::clone(spec.adaptive()),
                    rows_scanned: None,
                    table_type: field.handle.data_type.clone(),
                    defaults: field.handle.member_defaults.clone(),
                },
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
        // A root is decoded in the members its needs reach (seed §6.2 on ORC).
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

    /// One step of the lifecycle; `Some(outcome)` when preparing is over.
    async fn step(&mut self) -> Result<Option<Prepared>> {
        let state = std::mem::replace(&mut self.state, State::Done);
        let (next, outcome) = match state {
            State::Pending => {
                let file = open::load_tail(self.split.clone(), self.context.clone()).await?;
                match self.bind(file)? {
                    Some(bound) => (State::Bound(bound), None),
                    None => (State::Done, Some(Prepared::SkippedByConstant)),
                }
            }
            State::Bound(bound) => match self.choose(bound)? {
                Ok(chosen) => (State::Pruned(chosen), None),
                Err(outcome) => (State::Done, Some(outcome)),
            },
            State::Pruned(chosen) => {
                let deleted = self.load_deletes().await?;
                (State::Ready(chosen, deleted), Some(Prepared::Read))
            }
            State::Ready(..) | State::Reading(_) | State::Done => {
                return internal_err!("split of '{}' prepared twice", self.split.display_path());
            }
        };
        self.state = next;
        Ok(outcome)
    }

    /// `LoadDeletes`: the split's deleted positions; its delete stages wait for the driver.
    async fn load_deletes(&mut self) -> Result<Option<Arc<DeletedRows>>> {
        let Some(source) = self.deletes.take() else {
            return Ok(None);
        };
        let Deletes { positions, stages } = source.load(&self.context).await?;
        self.delete_stages = stages;
        Ok(positions)
    }
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

#[async_trait]
impl SplitReader for OrcSplitReader {
    async fn prepare(&mut self) -> Result<Prepared> {
        loop {
            if let Some(outcome) = self.step().await? {
                return Ok(outcome);
            }
        }
    }

    fn refresh_filters(
        &mut self,
        filters: Arc<SplitFilters>,
        generation: u64,
    ) -> Result<Refreshed> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Ready(chosen, deleted) => {
                self.context.filters = filters;
                if let Some(dynamic) = self.context.dynamic.as_mut() {
                    dynamic.generation = generation;
                }
                if self.rejected(&chosen.bound.binding) {
                    return Ok(Refreshed::NothingToRead);
                }
                let kept = self.prune(&chosen.bound, &chosen.stripes)?;
                self.context
                    .metrics
                    .row_groups_pruned_dynamic_filter
                    .add(chosen.stripes.len() - kept.len());
                if kept.is_empty() {
                    return Ok(Refreshed::NothingToRead);
                }
                let chosen = Chosen {
                    bound: chosen.bound,
                    stripes: kept,
                };
                self.state = State::Ready(chosen, deleted);
                Ok(Refreshed::Applied)
            }
            State::Done => Ok(Refreshed::Applied),
            other => {
                self.state = other;
                Ok(Refreshed::NotApplied)
            }
        }
    }

    fn take_delete_stages(&mut self) -> Vec<BatchStage> {
        std::mem::take(&mut self.delete_stages)
    }

    async fn next(&mut self) -> Result<Option<ReaderBatch>> {
        if matches!(self.state, State::Ready(..))
            && let State::Ready(chosen, deleted) = std::mem::replace(&mut self.state, State::Done)
        {
            self.state = State::Reading(Box::new(self.start_reading(chosen, deleted)?));
        }
        let reading = match &mut self.state {
            State::Reading(reading) => reading,
            State::Done => return Ok(None),
            _ => {
                return internal_err!(
                    "split of '{}' was read before it was prepared",
                    self.split.display_path()
                );
            }
        };
        let decoded = reading.next().await?;
        match decoded.batch {
            Some(batch) => Ok(Some(ReaderBatch {
                batch,
                rows_scanned: decoded.rows_scanned,
                rows_deleted: decoded.rows_deleted,
            })),
            None => {
                self.state = State::Done;
                if decoded.rows_scanned == 0 {
                    return Ok(None);
                }
                // Rows the filters dropped after the last batch still count as scanned.
                let schema = Arc::clone(self.context.spec.reader_schema());
                Ok(Some(ReaderBatch {
                    batch: RecordBatch::new_empty(schema),
                    rows_scanned: decoded.rows_scanned,
                    rows_deleted: decoded.rows_deleted,
                }))
            }
        }
    }
}
