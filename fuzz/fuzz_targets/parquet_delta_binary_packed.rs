//! Parquet DELTA_BINARY_PACKED into i64, i32, u16 or u8 (first byte picks), output count
//! from the next two bytes.
#![no_main]

warpread_fuzz::int_decoder_target!(warpread_codecs::parquet_delta_binary_packed);
