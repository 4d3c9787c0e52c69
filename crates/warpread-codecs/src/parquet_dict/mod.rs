//! Parquet dictionary gathers (RLE_DICTIONARY / PLAIN_DICTIONARY pages) of
//! fixed-width values: [`decode_page`] takes a page's RLE/bit-packed
//! indices as they are and gathers in the same pass (what the reader uses);
//! [`decode`] gathers from indices decoded before. The indices come from the hybrid decoder; a job's
//! input is `<u32 dictionary size n> <n * width dictionary bytes> <one u32
//! index per output value>`, built by the reader from the dictionary page
//! and the decoded indices. Byte-array dictionaries are gathered by
//! [`bytes`]: offsets first, then the bytes they size.

pub mod bytes;
mod decode;
mod page;

pub use decode::{decode, encode_input, input_len, write_input};
pub use page::{decode_page, page_aux, page_input};
