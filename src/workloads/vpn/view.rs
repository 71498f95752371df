//! How vpn records are shown, for `vpn` and `report`: pure functions of one run's records.

use crate::analyse::vpn::{self, CipherShare};
use crate::record::vpn::{VpnData, VpnRecord};
use crate::render::document::{Options, RunView, View};
use crate::render::model::{Block, Table};
use serde_json::{json, Value};

pub struct VpnView;

fn shares(run: &RunView<VpnData>) -> Vec<CipherShare> {
    let records: Vec<VpnRecord> = run.records.iter().map(|r| (*r).clone()).collect();
    vpn::shares(&records)
}

impl View for VpnView {
    type Data = VpnData;

    fn blocks(run: &RunView<VpnData>, _opts: &Options) -> Vec<Block> {
        super::render::blocks(run, &shares(run))
    }

    fn records_table(records: &[&VpnRecord]) -> Table {
        super::render::records_table(records)
    }

    fn figures(run: &RunView<VpnData>, _opts: &Options) -> Vec<crate::render::plots::Figure> {
        super::plots::figures(&run.records, &run.run.run_id)
    }

    fn analysis(run: &RunView<VpnData>, _opts: &Options) -> Value {
        json!({ "shares": shares(run) })
    }
}
