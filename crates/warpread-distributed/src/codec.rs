//! [`WarpCodec`]: warpread scans through datafusion-proto, as the
//! distributed engine's user codec.

use std::sync::Arc;

use datafusion::common::config::ExtensionOptions;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::from_proto::{
    parse_protobuf_file_scan_config, parse_table_schema_from_proto,
};
use datafusion_proto::physical_plan::to_proto::serialize_file_scan_config;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use prost::Message;
use warpread::exec::Devices;
use warpread_datafusion::{ScanParts, WarpSource, WarpreadOptions, format_named};

/// Encodes and decodes warpread scans (a `DataSourceExec` over a
/// [`WarpSource`]): the file scan configuration as DataFusion encodes it,
/// then the format, the `warpread.*` settings and the pushed filters. A
/// decoded scan decodes on the receiving session's backends, whatever
/// `warpread.devices` said where it was planned (a worker's devices are the
/// ones its process was started with). Every other node is refused, so the
/// engine tries its other codecs.
#[derive(Debug, Default, Clone, Copy)]
pub struct WarpCodec;

/// A warpread scan on the wire.
#[derive(Clone, PartialEq, Message)]
struct WarpScanNode {
    #[prost(message, optional, tag = "1")]
    conf: Option<protobuf::FileScanExecConf>,
    #[prost(string, tag = "2")]
    format: String,
    #[prost(message, repeated, tag = "3")]
    options: Vec<Setting>,
    #[prost(message, optional, tag = "4")]
    filter: Option<protobuf::PhysicalExprNode>,
    #[prost(message, repeated, tag = "5")]
    dynamic_filters: Vec<protobuf::PhysicalExprNode>,
    #[prost(message, repeated, tag = "6")]
    fixed_filters: Vec<protobuf::PhysicalExprNode>,
    #[prost(uint64, optional, tag = "7")]
    batch_size: Option<u64>,
    #[prost(bool, tag = "8")]
    probe_first: bool,
    #[prost(bool, tag = "9")]
    device_values: bool,
}

/// One `warpread.*` setting (full key, value).
#[derive(Clone, PartialEq, Message)]
struct Setting {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(string, tag = "2")]
    value: String,
}

fn warp_scan(node: &dyn ExecutionPlan) -> Option<(&FileScanConfig, &WarpSource)> {
    node.downcast_ref::<DataSourceExec>()?
        .downcast_to_file_source::<WarpSource>()
}

fn proto_error(what: &str, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("warpread scan on the wire: {what}: {e}"))
}

impl PhysicalExtensionCodec for WarpCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return Err(proto_error(
                "inputs",
                format!("a scan has no inputs, got {}", inputs.len()),
            ));
        }
        let node = WarpScanNode::decode(buf).map_err(|e| proto_error("decode", e))?;
        let conf = node
            .conf
            .as_ref()
            .ok_or_else(|| proto_error("conf", "missing"))?;
        let table_schema = parse_table_schema_from_proto(conf)?;
        let decode = PhysicalPlanDecodeContext::new(ctx, self);
        let schema = Arc::clone(table_schema.table_schema());
        let expr = |p: &protobuf::PhysicalExprNode| -> Result<Arc<dyn PhysicalExpr>> {
            converter.proto_to_physical_expr(p, &schema, &decode)
        };
        let mut options = WarpreadOptions::default();
        for s in &node.options {
            options.set(&s.key, &s.value)?;
        }
        options.devices = Devices::All;
        let format = format_named(&node.format)
            .ok_or_else(|| proto_error("format", format!("unknown format {:?}", node.format)))?
            .name();
        let mut parts = ScanParts::new(format, options);
        parts.filter = node.filter.as_ref().map(&expr).transpose()?;
        parts.dynamic_filters = node
            .dynamic_filters
            .iter()
            .map(&expr)
            .collect::<Result<_>>()?;
        parts.fixed_filters = node
            .fixed_filters
            .iter()
            .map(&expr)
            .collect::<Result<_>>()?;
        parts.batch_size = node.batch_size.map(|b| b as usize);
        parts.probe_first = node.probe_first;
        parts.device_values = node.device_values;
        let source = WarpSource::from_parts(
            parts,
            table_schema,
            ctx.session_config(),
            &ctx.runtime_env(),
        )?;
        let config = parse_protobuf_file_scan_config(conf, &decode, converter, Arc::new(source))?;
        Ok(DataSourceExec::from_data_source(config))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some((config, source)) = warp_scan(node.as_ref()) else {
            return Err(DataFusionError::NotImplemented(format!(
                "WarpCodec encodes warpread scans only, not {}",
                node.name()
            )));
        };
        let parts = source.parts();
        let expr = |e: &Arc<dyn PhysicalExpr>| converter.physical_expr_to_proto(e, self);
        let options = parts
            .options
            .entries()
            .into_iter()
            .filter_map(|e| {
                Some(Setting {
                    key: e.key,
                    value: e.value?,
                })
            })
            .collect();
        let wire = WarpScanNode {
            conf: Some(serialize_file_scan_config(config, self, converter)?),
            format: parts.format.to_string(),
            options,
            filter: parts.filter.as_ref().map(expr).transpose()?,
            dynamic_filters: parts
                .dynamic_filters
                .iter()
                .map(expr)
                .collect::<Result<_>>()?,
            fixed_filters: parts
                .fixed_filters
                .iter()
                .map(expr)
                .collect::<Result<_>>()?,
            batch_size: parts.batch_size.map(|b| b as u64),
            probe_first: parts.probe_first,
            device_values: parts.device_values,
        };
        wire.encode(buf).map_err(|e| proto_error("encode", e))
    }
}
