//! Running SQL text of one or more `;`-separated statements, and the query
//! texts shipped in `queries/` (TPC-H with fixed substitution parameters as
//! DataFusion's own tpch benchmark uses, and NYC taxi examples).

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::DFParser;

use crate::error::{Error, Result};

/// A multi-threaded tokio runtime for running DataFusion from blocking code.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("<tokio runtime>", e))
}

/// The result of one statement.
#[derive(Debug, Clone)]
pub struct StatementResult {
    /// Output schema (also for empty results).
    pub schema: SchemaRef,
    /// Output rows.
    pub batches: Vec<RecordBatch>,
}

/// Plans and runs every statement of `sql` in order.
pub async fn run_sql(ctx: &SessionContext, sql: &str) -> Result<Vec<StatementResult>> {
    let err = |e| Error::datafusion("running SQL", e);
    let statements = DFParser::parse_sql(sql).map_err(err)?;
    let mut out = Vec::with_capacity(statements.len());
    for st in statements {
        let plan = ctx.state().statement_to_plan(st).await.map_err(err)?;
        let df = ctx.execute_logical_plan(plan).await.map_err(err)?;
        let schema = df.schema().inner().clone();
        let batches = df.collect().await.map_err(err)?;
        out.push(StatementResult { schema, batches });
    }
    Ok(out)
}

macro_rules! tpch_queries {
    ($($n:literal),*) => {
        /// TPC-H queries 1 to 22, index `n - 1`.
        pub const TPCH: [&str; 22] = [$(include_str!(concat!("../../../queries/tpch/q", $n, ".sql"))),*];
    };
}
tpch_queries!(
    "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17",
    "18", "19", "20", "21", "22"
);

/// NYC taxi example queries over a table named `taxi`: (name, SQL).
pub const TAXI: [(&str, &str); 3] = [
    (
        "avg_fare_by_passengers",
        include_str!("../../../queries/taxi/avg_fare_by_passengers.sql"),
    ),
    (
        "revenue_by_payment_type",
        include_str!("../../../queries/taxi/revenue_by_payment_type.sql"),
    ),
    (
        "avg_fare_from_zone",
        include_str!("../../../queries/taxi/avg_fare_from_zone.sql"),
    ),
];
