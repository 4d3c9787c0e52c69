//! The ORC file-tail and stripe-footer messages (`orc_proto.proto` of the
//! ORC specification), declared by hand with prost so no code generator or
//! `protoc` is needed at build time. Only fields warpread reads are declared;
//! prost skips the others. Enumerations are kept as raw integers so unknown
//! values from newer writers surface as clear errors instead of decode
//! failures.

#![allow(missing_docs)] // Field names and numbers are the specification's own.

use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct PostScript {
    #[prost(uint64, optional, tag = "1")]
    pub footer_length: Option<u64>,
    #[prost(int32, optional, tag = "2")]
    pub compression: Option<i32>,
    #[prost(uint64, optional, tag = "3")]
    pub compression_block_size: Option<u64>,
    #[prost(uint32, repeated, tag = "4")]
    pub version: Vec<u32>,
    #[prost(uint64, optional, tag = "5")]
    pub metadata_length: Option<u64>,
    #[prost(uint32, optional, tag = "6")]
    pub writer_version: Option<u32>,
    #[prost(uint64, optional, tag = "7")]
    pub stripe_statistics_length: Option<u64>,
    #[prost(string, optional, tag = "8000")]
    pub magic: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Footer {
    #[prost(uint64, optional, tag = "1")]
    pub header_length: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub content_length: Option<u64>,
    #[prost(message, repeated, tag = "3")]
    pub stripes: Vec<StripeInformation>,
    #[prost(message, repeated, tag = "4")]
    pub types: Vec<Type>,
    #[prost(message, repeated, tag = "5")]
    pub metadata: Vec<UserMetadataItem>,
    #[prost(uint64, optional, tag = "6")]
    pub number_of_rows: Option<u64>,
    #[prost(message, repeated, tag = "7")]
    pub statistics: Vec<ColumnStatistics>,
    #[prost(uint32, optional, tag = "8")]
    pub row_index_stride: Option<u32>,
    #[prost(uint32, optional, tag = "9")]
    pub writer: Option<u32>,
    /// Column encryption: only its presence matters. No keys are handled:
    /// like ORC readers without the key, we read the masked copy of each
    /// encrypted column that the writer keeps in the unencrypted streams.
    #[prost(bytes = "vec", optional, tag = "10")]
    pub encryption: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "11")]
    pub calendar: Option<i32>,
    #[prost(string, optional, tag = "12")]
    pub software_version: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct StripeInformation {
    #[prost(uint64, optional, tag = "1")]
    pub offset: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub index_length: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub data_length: Option<u64>,
    #[prost(uint64, optional, tag = "4")]
    pub footer_length: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub number_of_rows: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Type {
    #[prost(int32, optional, tag = "1")]
    pub kind: Option<i32>,
    #[prost(uint32, repeated, tag = "2")]
    pub subtypes: Vec<u32>,
    #[prost(string, repeated, tag = "3")]
    pub field_names: Vec<String>,
    #[prost(uint32, optional, tag = "4")]
    pub maximum_length: Option<u32>,
    #[prost(uint32, optional, tag = "5")]
    pub precision: Option<u32>,
    #[prost(uint32, optional, tag = "6")]
    pub scale: Option<u32>,
    #[prost(message, repeated, tag = "7")]
    pub attributes: Vec<StringPair>,
}

/// A type attribute. Kept as bytes: `string` would make prost reject the
/// whole footer over one attribute that is not UTF-8.
#[derive(Clone, PartialEq, Message)]
pub struct StringPair {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub key: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub value: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct UserMetadataItem {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub value: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ColumnStatistics {
    #[prost(uint64, optional, tag = "1")]
    pub number_of_values: Option<u64>,
    #[prost(message, optional, tag = "2")]
    pub int_statistics: Option<IntegerStatistics>,
    #[prost(message, optional, tag = "3")]
    pub double_statistics: Option<DoubleStatistics>,
    #[prost(message, optional, tag = "4")]
    pub string_statistics: Option<StringStatistics>,
    #[prost(message, optional, tag = "5")]
    pub bucket_statistics: Option<BucketStatistics>,
    #[prost(message, optional, tag = "6")]
    pub decimal_statistics: Option<DecimalStatistics>,
    #[prost(message, optional, tag = "7")]
    pub date_statistics: Option<DateStatistics>,
    #[prost(message, optional, tag = "8")]
    pub binary_statistics: Option<BinaryStatistics>,
    #[prost(message, optional, tag = "9")]
    pub timestamp_statistics: Option<TimestampStatistics>,
    #[prost(bool, optional, tag = "10")]
    pub has_null: Option<bool>,
    #[prost(uint64, optional, tag = "11")]
    pub bytes_on_disk: Option<u64>,
    #[prost(message, optional, tag = "12")]
    pub collection_statistics: Option<CollectionStatistics>,
}

#[derive(Clone, PartialEq, Message)]
pub struct IntegerStatistics {
    #[prost(sint64, optional, tag = "1")]
    pub minimum: Option<i64>,
    #[prost(sint64, optional, tag = "2")]
    pub maximum: Option<i64>,
    #[prost(sint64, optional, tag = "3")]
    pub sum: Option<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DoubleStatistics {
    #[prost(double, optional, tag = "1")]
    pub minimum: Option<f64>,
    #[prost(double, optional, tag = "2")]
    pub maximum: Option<f64>,
    #[prost(double, optional, tag = "3")]
    pub sum: Option<f64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct StringStatistics {
    #[prost(string, optional, tag = "1")]
    pub minimum: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub maximum: Option<String>,
    #[prost(sint64, optional, tag = "3")]
    pub sum: Option<i64>,
    #[prost(string, optional, tag = "4")]
    pub lower_bound: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub upper_bound: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct BucketStatistics {
    #[prost(uint64, repeated, tag = "1")]
    pub count: Vec<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DecimalStatistics {
    #[prost(string, optional, tag = "1")]
    pub minimum: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub maximum: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub sum: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DateStatistics {
    #[prost(sint32, optional, tag = "1")]
    pub minimum: Option<i32>,
    #[prost(sint32, optional, tag = "2")]
    pub maximum: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TimestampStatistics {
    #[prost(sint64, optional, tag = "1")]
    pub minimum: Option<i64>,
    #[prost(sint64, optional, tag = "2")]
    pub maximum: Option<i64>,
    #[prost(sint64, optional, tag = "3")]
    pub minimum_utc: Option<i64>,
    #[prost(sint64, optional, tag = "4")]
    pub maximum_utc: Option<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct BinaryStatistics {
    #[prost(sint64, optional, tag = "1")]
    pub sum: Option<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct CollectionStatistics {
    #[prost(uint64, optional, tag = "1")]
    pub min_children: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub max_children: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub total_children: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Metadata {
    #[prost(message, repeated, tag = "1")]
    pub stripe_stats: Vec<StripeStatistics>,
}

#[derive(Clone, PartialEq, Message)]
pub struct StripeStatistics {
    #[prost(message, repeated, tag = "1")]
    pub col_stats: Vec<ColumnStatistics>,
}

#[derive(Clone, PartialEq, Message)]
pub struct StripeFooter {
    #[prost(message, repeated, tag = "1")]
    pub streams: Vec<Stream>,
    #[prost(message, repeated, tag = "2")]
    pub columns: Vec<ColumnEncoding>,
    #[prost(string, optional, tag = "3")]
    pub writer_timezone: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Stream {
    #[prost(int32, optional, tag = "1")]
    pub kind: Option<i32>,
    #[prost(uint32, optional, tag = "2")]
    pub column: Option<u32>,
    #[prost(uint64, optional, tag = "3")]
    pub length: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ColumnEncoding {
    #[prost(int32, optional, tag = "1")]
    pub kind: Option<i32>,
    #[prost(uint32, optional, tag = "2")]
    pub dictionary_size: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RowIndexEntry {
    #[prost(uint64, repeated, tag = "1")]
    pub positions: Vec<u64>,
    #[prost(message, optional, tag = "2")]
    pub statistics: Option<ColumnStatistics>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RowIndex {
    #[prost(message, repeated, tag = "1")]
    pub entry: Vec<RowIndexEntry>,
}
