//! [`DeletedRows`]: rows of one data file that deletes remove by position (Iceberg position
//! deletes and deletion vectors), as a table format's
//! [`crate::reader::DeleteSource`] gives them to the reader. Positions are file positions
//! (the row index), whatever split or filter reads them. How the Parquet reader drops them
//! (a row selection or a mask) is [`crate::parquet::deletes`].

use std::borrow::Cow;

use roaring::RoaringTreemap;

/// Deleted positions of one file, by where they come from (for metrics).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletedRows {
    /// Positions listed by position-delete files.
    pub by_position_deletes: RoaringTreemap,
    /// Positions set in the file's deletion vector.
    pub by_deletion_vector: RoaringTreemap,
}

impl DeletedRows {
    /// Whether no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.by_position_deletes.is_empty() && self.by_deletion_vector.is_empty()
    }

    /// Every deleted position; usually one source is empty and nothing is built.
    pub fn all(&self) -> Cow<'_, RoaringTreemap> {
        match (
            self.by_position_deletes.is_empty(),
            self.by_deletion_vector.is_empty(),
        ) {
            (_, true) => Cow::Borrowed(&self.by_position_deletes),
            (true, false) => Cow::Borrowed(&self.by_deletion_vector),
            (false, false) => Cow::Owned(&self.by_position_deletes | &self.by_deletion_vector),
        }
    }
}
