//! One JSON document: {"schema", "environment", "records", ...}.

use super::{Exporter, Report};

pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        let mut s = serde_json::to_string_pretty(report)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }
}
