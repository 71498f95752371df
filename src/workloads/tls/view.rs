//! How tls records are shown, for `tls` and `report`: pure functions of one run's
//! records and of the cipher-alone timings its end line keeps.

use crate::analyse::tls::{self, Analysis};
use crate::record::tls::{CipherAlone, TlsData, TlsRecord};
use crate::render::document::{Options, RunView, View};
use crate::render::model::{Block, Table};
use serde_json::Value;

pub struct TlsView;

fn analysis_of(run: &RunView<TlsData>) -> Analysis {
    let records: Vec<TlsRecord> = run.records.iter().map(|r| (*r).clone()).collect();
    let alone: Vec<CipherAlone> = run
        .run
        .end
        .as_ref()
        .map(|e| e.analysis_inputs.tls_cipher_alone())
        .unwrap_or_default();
    tls::analyse(&records, alone)
}

impl View for TlsView {
    type Data = TlsData;

    fn blocks(run: &RunView<TlsData>, _opts: &Options) -> Vec<Block> {
        super::render::blocks(run, &analysis_of(run))
    }

    fn records_table(records: &[&TlsRecord]) -> Table {
        super::render::records_table(records)
    }

    fn figures(run: &RunView<TlsData>, _opts: &Options) -> Vec<crate::render::plots::Figure> {
        super::plots::figures(&run.records, run.run.end.as_ref(), &run.run.run_id)
    }

    fn analysis(run: &RunView<TlsData>, _opts: &Options) -> Value {
        serde_json::to_value(analysis_of(run)).unwrap_or(Value::Null)
    }
}
