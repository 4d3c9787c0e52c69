//! A plan with warpread scans encoded by `WarpCodec` and decoded again
//! runs to the same rows, keeping its filters and settings.

use datafusion::physical_plan::{collect, displayable};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use warpread_datafusion::{compare_results, session, session_config, sorted_rows};
use warpread_distributed::WarpCodec;

use crate::{QUERIES, cpu_config, plan_of, register_fixtures};

#[tokio::test]
async fn scans_round_trip_through_the_codec() {
    let mut options = session_config();
    options
        .options_mut()
        .set("warpread.read_ahead", "3")
        .unwrap();
    // A coordinator runs neither rule (key sets hand build keys over
    // shared memory; `LIKE` by pieces runs on the workers), and the codec
    // carries scans only.
    for key in ["warpread.join_key_sets", "warpread.fast_like"] {
        options.options_mut().set(key, "false").unwrap();
    }
    let ctx = session(cpu_config(), options);
    register_fixtures(&ctx).await;
    for sql in QUERIES {
        let (plan, before) = plan_of(&ctx, sql).await;
        let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &WarpCodec)
            .unwrap_or_else(|e| panic!("{sql}: encode: {e}"));
        let decoded =
            physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &WarpCodec)
                .unwrap_or_else(|e| panic!("{sql}: decode: {e}"));
        let after = displayable(decoded.as_ref()).indent(true).to_string();
        for shown in ["reader=warpread", "read_ahead=3"] {
            assert_eq!(
                before.contains(shown),
                after.contains(shown),
                "{sql}: {shown:?}\n{before}\n{after}"
            );
        }
        assert!(after.contains("reader=warpread"), "{after}");
        let want = collect(plan, ctx.task_ctx()).await.unwrap();
        let got = collect(decoded, ctx.task_ctx()).await.unwrap();
        assert!(!sorted_rows(&want).is_empty(), "{sql}: no rows to compare");
        compare_results(&want, &got, 1e-12).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[test]
fn other_nodes_are_left_to_other_codecs() {
    use datafusion::physical_plan::empty::EmptyExec;
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
    use std::sync::Arc;
    let node = Arc::new(EmptyExec::new(Arc::new(arrow::datatypes::Schema::empty())));
    let mut buf = Vec::new();
    let e = WarpCodec
        .try_encode(node, &mut buf, &DefaultPhysicalProtoConverter {})
        .unwrap_err();
    assert!(e.to_string().contains("EmptyExec"), "{e}");
}

#[test]
fn garbage_bytes_are_an_error() {
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
    let ctx = datafusion::prelude::SessionContext::new();
    for bytes in [&b"\xff\xff\xff"[..], &[], &[0x0a, 0x02, 0x08]] {
        let e = WarpCodec
            .try_decode(
                bytes,
                &[],
                &ctx.task_ctx(),
                &DefaultPhysicalProtoConverter {},
            )
            .unwrap_err();
        assert!(e.to_string().contains("warpread scan on the wire"), "{e}");
    }
}
