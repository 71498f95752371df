//! A record of any workload, and what each workload's record data says about itself.
//! The list of workloads is one `workload_list!` line per workload, at the end: it
//! makes the `Workload` tag, the `AnyRecord` enum, every envelope accessor and the
//! `WorkloadSettings` enum, so that no other code matches on workloads to read a shared
//! field and a new workload's record costs one line here.

use super::envelope::Record;
use super::{disk, speed, ssh, tls, vpn};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// What a workload's own record fields (the `D` of `Record<D>`) tell about their point.
/// Implemented beside each data type (record/speed.rs, tls.rs, vpn.rs); the tag, `wrap`
/// and `pick` come from the workload list.
pub trait RecordData: Sized + Clone + Serialize + DeserializeOwned + Listed {
    /// The label `compare --a/--b` selects a record by.
    fn selection_label(r: &Record<Self>) -> &str {
        &r.label
    }
    /// The own label of the point's identity (`label` replaces it), and the point's
    /// coordinates in a fixed order.
    fn identity_keys<'a>(
        r: &'a Record<Self>,
        label: Option<&str>,
    ) -> (&'a str, Vec<(&'static str, KeyValue)>);
    /// What tells two records of one run apart beyond the identity: the label as shown,
    /// and the round (one record per point and round where a workload has rounds).
    fn point_key(r: &Record<Self>) -> (String, u32) {
        (r.label.clone(), 0)
    }
    /// Values of the workload's own fields that no measurement can produce.
    fn check(r: &Record<Self>) -> anyhow::Result<()>;
    /// Whether the point's number is suspect (other work, or the workload's own noise).
    fn suspect(r: &Record<Self>) -> bool {
        r.disturbed
    }
}

/// A data type's place in the workload list (made by `workload_list!`).
pub trait Listed: Sized {
    const WORKLOAD: Workload;
    /// The record as any workload's.
    fn wrap(r: Record<Self>) -> AnyRecord;
    /// This workload's record, or None for another workload's.
    fn pick(r: &AnyRecord) -> Option<&Record<Self>>;
}

/// The shared envelope of a record of any workload, and what its data says about itself:
/// what `AnyRecord` dereferences to, so that no caller matches on workloads.
pub trait Head {
    fn workload(&self) -> Workload;
    fn run_id(&self) -> &str;
    fn label(&self) -> &str;
    fn throughput_bps(&self) -> f64;
    fn throughput_bps_ci(&self) -> Option<[f64; 2]>;
    fn samples_bps(&self) -> &[f64];
    fn others_cpu_pct(&self) -> Option<f64>;
    fn wall_s(&self) -> f64;
    /// The CPU seconds it counts (user, system), where known.
    fn cpu_s(&self) -> [Option<f64>; 2];
    fn profile(&self) -> Option<&super::profile::ProfileField>;
    fn set_dut(&mut self, dut: Option<String>);
    /// The record as its JSON Lines line's value.
    fn to_json(&self) -> serde_json::Value;
    /// See `RecordData`.
    fn selection_label(&self) -> &str;
    fn identity_keys<'a>(&'a self, label: Option<&str>)
        -> (&'a str, Vec<(&'static str, KeyValue)>);
    fn point_key(&self) -> (String, u32);
    fn check(&self) -> anyhow::Result<()>;
    fn suspect(&self) -> bool;
}

impl<D: RecordData> Head for Record<D> {
    fn workload(&self) -> Workload {
        self.workload
    }
    fn run_id(&self) -> &str {
        &self.run_id
    }
    fn label(&self) -> &str {
        &self.label
    }
    fn throughput_bps(&self) -> f64 {
        self.throughput_bps
    }
    fn throughput_bps_ci(&self) -> Option<[f64; 2]> {
        self.throughput_bps_ci
    }
    fn samples_bps(&self) -> &[f64] {
        &self.samples_bps
    }
    fn others_cpu_pct(&self) -> Option<f64> {
        self.others_cpu_pct
    }
    fn wall_s(&self) -> f64 {
        self.wall_s
    }
    fn cpu_s(&self) -> [Option<f64>; 2] {
        [self.cpu_user_s, self.cpu_sys_s]
    }
    fn profile(&self) -> Option<&super::profile::ProfileField> {
        self.profile.as_deref()
    }
    fn set_dut(&mut self, dut: Option<String>) {
        self.dut = dut;
    }
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
    fn selection_label(&self) -> &str {
        D::selection_label(self)
    }
    fn identity_keys<'a>(
        &'a self,
        label: Option<&str>,
    ) -> (&'a str, Vec<(&'static str, KeyValue)>) {
        D::identity_keys(self, label)
    }
    fn point_key(&self) -> (String, u32) {
        D::point_key(self)
    }
    fn check(&self) -> anyhow::Result<()> {
        D::check(self)
    }
    fn suspect(&self) -> bool {
        D::suspect(self)
    }
}

/// Makes, from one `Variant(DataType, SettingsType) = "name"` per workload: the
/// `WorkloadSettings` of the environment line, the `Workload` tag of
/// records and exclusions, `AnyRecord` (a record of any workload, serialized as the
/// record itself), `Listed` for each data type, and `AnyRecord`'s accessors of the shared
/// envelope and of `RecordData`.
macro_rules! workload_list {
    ($($variant:ident($data:ty, $settings:ty) = $name:literal),+ $(,)?) => {
        /// The workload that wrote a record or exclusion: its `workload` field.
        #[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Workload {
            $(#[serde(rename = $name)] $variant),+
        }

        impl Workload {
            pub const ALL: &'static [Workload] = &[$(Workload::$variant),+];
            pub fn name(self) -> &'static str {
                match self {
                    $(Workload::$variant => $name),+
                }
            }
        }

        /// Each workload's settings (the environment line's `settings`), told apart by
        /// the field only that workload has (each has one it never omits).
        #[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
        #[serde(untagged)]
        pub enum WorkloadSettings {
            $($variant($settings),)+
            /// A program timed as a whole process (speed's `openssl enc`).
            Process(super::speed::ProcessSettings),
            /// Settings this version does not know: not kept. Only a workload this
            /// version does not know writes them, and its records cannot be read either.
            Other {},
        }

        impl Default for WorkloadSettings {
            fn default() -> Self {
                WorkloadSettings::Other {}
            }
        }

        /// A record of any workload; serialized as the record itself (its JSON Lines line).
        #[derive(Clone, Debug, PartialEq, serde::Serialize)]
        #[serde(untagged)]
        pub enum AnyRecord {
            $($variant(Record<$data>)),+
        }

        $(impl $crate::record::any::Listed for $data {
            const WORKLOAD: Workload = Workload::$variant;
            fn wrap(r: Record<Self>) -> AnyRecord {
                AnyRecord::$variant(r)
            }
            fn pick(r: &AnyRecord) -> Option<&Record<Self>> {
                match r {
                    AnyRecord::$variant(r) => Some(r),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        })+

        impl AnyRecord {
            /// Reads a record of `workload` from its JSON text.
            pub fn from_text(workload: Workload, text: &str) -> serde_json::Result<AnyRecord> {
                Ok(match workload {
                    $(Workload::$variant => AnyRecord::$variant(serde_json::from_str(text)?)),+
                })
            }
            /// Reads a record of `workload` from its JSON value.
            pub fn from_value(workload: Workload, v: serde_json::Value) -> serde_json::Result<AnyRecord> {
                Ok(match workload {
                    $(Workload::$variant => AnyRecord::$variant(serde_json::from_value(v)?)),+
                })
            }
        }

        impl std::ops::Deref for AnyRecord {
            type Target = dyn $crate::record::any::Head;
            fn deref(&self) -> &Self::Target {
                match self {
                    $(AnyRecord::$variant(r) => r),+
                }
            }
        }

        impl std::ops::DerefMut for AnyRecord {
            fn deref_mut(&mut self) -> &mut Self::Target {
                match self {
                    $(AnyRecord::$variant(r) => r),+
                }
            }
        }
    };
}

// The workloads: one line each. A new workload adds its line here, its data type in its
// own file beside these (with `RecordData`), with its settings type.
workload_list! {
    Speed(speed::SpeedData, speed::SpeedSettings) = "speed",
    Tls(tls::TlsData, Box<tls::TlsSettings>) = "tls",
    Vpn(vpn::VpnData, vpn::VpnSettings) = "vpn",
    Disk(disk::DiskData, disk::DiskSettings) = "disk",
    Ssh(ssh::SshData, ssh::SshSettings) = "ssh",
}

impl std::fmt::Display for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A coordinate: numbers sort as numbers (16 before 1024).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub enum KeyValue {
    Num(u64),
    Text(String),
}

impl std::fmt::Display for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            KeyValue::Num(n) => write!(f, "{n}"),
            KeyValue::Text(s) => f.write_str(s),
        }
    }
}
