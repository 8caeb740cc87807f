//! Reading the bytes of data files, the same for every format.
//!
//! | file                 | owns                                                           |
//! |----------------------|----------------------------------------------------------------|
//! | [`mod@counting_reader`]| [`CountingReader`]: counted byte ranges, the kept tail, checks that a listed file did not change |
//! | [`local_file`]       | `LocalFile`: local files read into reused buffers              |
//! | [`read_ahead`]       | `ReadAhead`: units of byte ranges fetched ahead on object stores |

pub mod counting_reader;
pub mod local_file;
pub mod read_ahead;

pub use counting_reader::{CountingReader, counting_reader};
