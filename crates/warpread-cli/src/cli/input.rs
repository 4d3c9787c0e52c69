//! Inputs named on the command line: a local path or an object store URL
//! (`warpread_url`, shared with the Python module).

pub use warpread_url::{Input, Kind, Object, is_url, store_for};
