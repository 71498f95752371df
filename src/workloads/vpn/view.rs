//! How vpn records are shown, for `vpn` and `report`.

use super::record::{self, VpnData, VpnRecord};
use crate::record::read::AnyRecord;
use crate::render::document::{Options, RunView, View};
use crate::render::model::{Block, Table};
use serde_json::{json, Value};

pub struct VpnView;

fn report(run: &RunView<VpnData>) -> super::VpnReport {
    let records: Vec<VpnRecord> = run.records.iter().map(|r| (*r).clone()).collect();
    super::VpnReport {
        schema: crate::record::SCHEMA,
        environment: run.environment().cloned(),
        analysis: super::Analysis {
            shares: record::shares(&records),
        },
        records,
        exclusions: run
            .exclusions
            .iter()
            .map(|e| super::Exclusion {
                tunnel: e.implementation.clone(),
                load: e
                    .point
                    .get("load")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                reason: e.reason.clone(),
            })
            .collect(),
        interrupted: run.interrupted(),
    }
}

impl View for VpnView {
    type Data = VpnData;
    const WORKLOAD: &'static str = "vpn";

    fn pick(r: &AnyRecord) -> Option<&VpnRecord> {
        match r {
            AnyRecord::Vpn(v) => Some(v),
            _ => None,
        }
    }

    fn blocks(run: &RunView<VpnData>, _opts: &Options) -> Vec<Block> {
        super::render::blocks(&report(run))
    }

    fn records_table(records: &[&VpnRecord]) -> Table {
        super::render::records_table(records)
    }

    fn analysis(run: &RunView<VpnData>, _opts: &Options) -> Value {
        json!({ "shares": report(run).analysis.shares })
    }
}
