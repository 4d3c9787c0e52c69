//! A whole ORC file from the fuzzer's bytes, read to the end on the CPU
//! backend: an error is fine, a panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(builder) =
        warpread::orc::OrcReaderBuilder::from_bytes("fuzz.orc", bytes::Bytes::from(data.to_vec()))
    else {
        return;
    };
    let Ok(reader) = builder
        .with_backend(std::sync::Arc::new(warpread::exec::CpuBackend::new()))
        .with_read_ahead(0)
        .build()
    else {
        return;
    };
    for batch in reader {
        let _ = batch;
    }
});
