//! One SQL database holding runs, as both back ends (`sqlite`, `postgres`) give it: the
//! `Store` trait, the values passed to and read from SQL, clauses built a piece at a time,
//! and transactions.

/// A value passed to or read from SQL, the same for both back ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Val {
    pub fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Real(r) => Some(*r as i64),
            _ => None,
        }
    }
    pub fn text(&self) -> Option<&str> {
        match self {
            Val::Text(s) => Some(s),
            _ => None,
        }
    }
    pub fn opt_real(x: Option<f64>) -> Val {
        x.filter(|v| v.is_finite()).map_or(Val::Null, Val::Real)
    }
    pub fn opt_text(x: Option<&str>) -> Val {
        x.map_or(Val::Null, |s| Val::Text(s.into()))
    }
}

/// SQL built a clause at a time: each `#` in a clause becomes the next `$N`, bound to the
/// clause's values in order.
#[derive(Default)]
pub struct Sql {
    pub text: String,
    pub params: Vec<Val>,
}

impl Sql {
    pub fn new(start: &str) -> Sql {
        Sql {
            text: start.to_string(),
            params: Vec::new(),
        }
    }
    pub fn add(&mut self, clause: &str, vals: Vec<Val>) {
        let mut clause = clause.to_string();
        for v in vals {
            self.params.push(v);
            clause = clause.replacen('#', &format!("${}", self.params.len()), 1);
        }
        self.text.push_str(&clause);
    }
}

/// A value of a row handed out by `query_each`: text borrowed from the database's buffer.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "store"), allow(dead_code))]
pub enum ValRef<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(std::borrow::Cow<'a, str>),
}

impl ValRef<'_> {
    pub fn int(&self) -> Option<i64> {
        match self {
            ValRef::Int(i) => Some(*i),
            ValRef::Real(r) => Some(*r as i64),
            _ => None,
        }
    }
    pub fn real(&self) -> Option<f64> {
        match self {
            ValRef::Real(r) => Some(*r),
            ValRef::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn text(&self) -> Option<&str> {
        match self {
            ValRef::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// One SQL database holding runs. The SQL is written once (`schema`, `runs`) with `$1`
/// placeholders; a back end only executes it.
pub trait Store {
    /// What the store is, password masked, for every message.
    fn name(&self) -> &str;
    fn execute(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<u64>;
    fn query(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<Vec<Vec<Val>>>;
    /// The rows one at a time, as the database hands them out, their text borrowed:
    /// memory does not grow with the result, and nothing is copied that is not kept.
    fn query_each(
        &mut self,
        sql: &str,
        params: &[Val],
        each: &mut dyn for<'r> FnMut(&[ValRef<'r>]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>;
    /// Starts a transaction; `exclusive` also keeps every other writer out until it ends
    /// (for migrations).
    fn begin(&mut self, exclusive: bool) -> anyhow::Result<()>;
    fn commit(&mut self) -> anyhow::Result<()>;
    fn rollback(&mut self);
}

/// Runs `f` in one transaction: all of it or nothing.
pub fn in_transaction<T>(
    s: &mut dyn Store,
    exclusive: bool,
    f: impl FnOnce(&mut dyn Store) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    s.begin(exclusive)?;
    match f(s) {
        Ok(v) => {
            s.commit()?;
            Ok(v)
        }
        Err(e) => {
            s.rollback();
            Err(e)
        }
    }
}

/// What a command does with the store. Only a run (and an import) creates one: a
/// mistyped path is an error elsewhere. Reading commands never write, so a read-only or
/// immutable store still reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Changes a store that exists (tag, rm).
    Update,
    /// Writes, creating the store where missing.
    Write,
}
