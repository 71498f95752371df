//! The points of a tls run: what each measures, on which server and threads, in which
//! order (`plan`), and the names a point is shown by.

use super::bench::Bench;
use super::server::Content;

/// What one point measures.
#[derive(Clone, Copy, Debug)]
pub enum What {
    Suite(usize),
    Mix,
}

#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub content: Content,
    pub concurrency: u32,
    pub what: What,
    /// The server (an index into `Bench::servers`) and its workers or threads.
    pub server: usize,
    pub threads: usize,
    /// A keep-alive control point in a --handshake run (see `plan`).
    pub keepalive: bool,
    /// Which pass over every point (1-based; --rounds).
    pub round: u32,
}

impl Point {
    /// "TLS_AES_128_GCM_SHA256 4k c=10", for progress lines.
    pub fn label(&self, b: &Bench) -> String {
        let what = match self.what {
            What::Suite(i) => b.suites[i].shown(),
            What::Mix => format!(
                "mix {}",
                b.mix.as_ref().map(|(m, _)| m.spec.as_str()).unwrap_or("")
            ),
        };
        let tag = self.tag(b).map(|t| format!("{t} ")).unwrap_or_default();
        let ka = if self.keepalive { " keep-alive" } else { "" };
        let round = if b.rounds > 1 {
            format!(" round {}", self.round)
        } else {
            String::new()
        };
        format!(
            "{tag}{what} {} c={}{ka}{round}",
            self.content.short(),
            self.concurrency
        )
    }

    /// A new connection and full handshake per request.
    pub fn handshake(&self, b: &Bench) -> bool {
        b.handshake && !self.keepalive
    }

    /// "haproxy 2t", "haproxy 1t aws-lc": the server, threads and library, unless the
    /// default (nginx, a worker per server CPU, the system library), as the record's
    /// `server_tag`.
    pub fn tag(&self, b: &Bench) -> Option<String> {
        let s = &b.servers[self.server];
        let lib = Some(s.lib().name.as_str());
        crate::record::tls::server_tag(s.name(), self.threads, b.workers, lib)
    }

    pub fn suite(&self, b: &Bench) -> String {
        match self.what {
            What::Suite(i) => b.suites[i].name.clone(),
            What::Mix => "mix".into(),
        }
    }
}

/// Points planned, and those a server cannot serve with the reason.
pub type Plan = (Vec<Point>, Vec<Point>, Vec<(Point, String)>);

/// The plan: per server (one at a time) and thread count, per content and concurrency,
/// every suite back to back (drift hits them alike), then the mix. Mix points that cannot
/// be split, and points of a file the server cannot serve, are returned apart. With
/// --handshake, unless nginx alone at its default workers (as before --server), each
/// server and thread count ends with a keep-alive control point per suite, at the first
/// file it serves and the first concurrency.
pub fn plan(b: &Bench, concurrency: &[u32]) -> Plan {
    let (mut points, mut unsplittable, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    let runs = (0..b.servers.len()).flat_map(|k| b.threads.iter().map(move |&t| (k, t)));
    let runs: Vec<(usize, usize)> = runs.collect();
    let control = b.handshake
        && (b.servers.len() > 1 || b.servers[0].name() != "nginx" || b.threads != [b.workers]);
    for (n, ((server, threads), &content)) in runs
        .iter()
        .flat_map(|&r| b.contents.iter().map(move |c| (r, c)))
        .enumerate()
    {
        let first = b
            .contents
            .iter()
            .find(|c| b.servers[server].refusal(**c).is_none());
        let why = b.servers[server].refusal(content);
        for &c in concurrency {
            let at = |what| Point {
                content,
                concurrency: c,
                what,
                server,
                threads,
                keepalive: false,
                round: 1,
            };
            if let Some(why) = &why {
                refused.extend((0..b.suites.len()).map(|i| (at(What::Suite(i)), why.clone())));
                continue;
            }
            for i in 0..b.suites.len() {
                match b.servers[server].lib().suite_refusal(&b.suites[i]) {
                    Some(why) => refused.push((at(What::Suite(i)), why)),
                    None => points.push(at(What::Suite(i))),
                }
            }
            if b.mix.is_some() {
                let p = at(What::Mix);
                if c < 2 {
                    unsplittable.push(p);
                } else {
                    points.push(p);
                }
            }
        }
        // The last content of this server and thread count: its keep-alive controls.
        let last = (n + 1) % b.contents.len() == 0;
        if let (true, true, Some(&content)) = (control, last, first) {
            let lib = b.servers[server].lib();
            let offered = (0..b.suites.len()).filter(|&i| lib.suite_refusal(&b.suites[i]).is_none());
            points.extend(offered.map(|i| Point {
                content,
                concurrency: concurrency[0],
                what: What::Suite(i),
                server,
                threads,
                keepalive: true,
                round: 1,
            }));
        }
    }
    // Every round measures every point, in the same order (the refusals are said once).
    let first: Vec<Point> = points.clone();
    for round in 2..=b.rounds {
        points.extend(first.iter().map(|p| Point { round, ..*p }));
    }
    (points, unsplittable, refused)
}
