//! The bottom layer: reading and writing bytes. Input selection, NDJSON
//! framing, the JSON scanner, atomic output files, and the warning printer
//! and error wording every layer above uses.

pub mod decode_ahead;
pub(crate) mod decompress;
pub mod diag;
pub mod framing;
pub mod input;
pub mod intern;
pub mod json_scan;
pub mod json_text;
pub mod outfile;
pub mod read_ahead;
pub mod surrogates;
pub mod task_share;
pub mod waiting;
