//! How tls records are shown, for `tls` and `report`.

use super::analysis;
use super::primitive::CipherAlone;
use super::record::{TlsData, TlsRecord};
use crate::record::read::AnyRecord;
use crate::render::document::{Options, RunView, View};
use crate::render::model::{Block, Table};
use serde_json::Value;

pub struct TlsView;

fn report(run: &RunView<TlsData>) -> super::render::TlsReport {
    let records: Vec<TlsRecord> = run.records.iter().map(|r| (*r).clone()).collect();
    let alone: Vec<CipherAlone> = run
        .run
        .end
        .as_ref()
        .and_then(|e| serde_json::from_value(e.analysis_inputs.clone()).ok())
        .unwrap_or_default();
    let analysis = analysis::analyse(&records, alone);
    super::render::TlsReport {
        schema: crate::record::SCHEMA,
        environment: run.environment().cloned(),
        records,
        refused: run
            .exclusions
            .iter()
            .map(|e| super::record::Refusal {
                suite: e
                    .point
                    .get("suite")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .into(),
                content: e
                    .point
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .into(),
                file_size: e
                    .point
                    .get("file_size")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                concurrency: e
                    .point
                    .get("concurrency")
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as u32,
                kind: e.kind.clone(),
                reason: e.reason.clone(),
            })
            .collect(),
        interrupted: run.interrupted(),
        analysis,
    }
}

impl View for TlsView {
    type Data = TlsData;
    const WORKLOAD: &'static str = "tls";

    fn pick(r: &AnyRecord) -> Option<&TlsRecord> {
        match r {
            AnyRecord::Tls(t) => Some(t),
            _ => None,
        }
    }

    fn blocks(run: &RunView<TlsData>, _opts: &Options) -> Vec<Block> {
        super::render::blocks(&report(run))
    }

    fn records_table(records: &[&TlsRecord]) -> Table {
        super::render::records_table(records)
    }

    fn analysis(run: &RunView<TlsData>, _opts: &Options) -> Value {
        serde_json::to_value(report(run).analysis).unwrap_or(Value::Null)
    }
}
