//! The lines of results files, parsed on worker threads and handed back in file order.
//! Parsing is most of the work of reading (a record is about 1.2 KB of JSON); filing the
//! lines into runs stays on the reader's thread, in order.

use super::line::{parse_line, Line};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

/// Lines handed to a worker at a time, and the bytes a batch may hold before it goes.
const BATCH: usize = 512;
const BATCH_BYTES: usize = 8 << 20;

/// The longest line read: a record is about 1.2 KB, an environment about 11 KB. A longer
/// line is damage, counted but never held (a 3 GB line aborted the process).
pub const MAX_LINE: usize = 4 << 20;

/// One line: its file (an index into the paths given), its number, and what it holds or
/// why it is skipped. Empty lines are left out.
pub struct Parsed {
    pub file: usize,
    pub line: usize,
    pub parsed: Result<Line, String>,
}

enum Batch {
    Lines(Vec<Parsed>),
    /// A file could not be read on: the message, and nothing after it.
    Failed(String),
}

/// A line's bytes, or the length of one too long to hold.
type Job = (u64, Vec<(usize, usize, Result<Vec<u8>, usize>)>);

/// The parsed lines, in order. Dropping it stops the threads: their sends fail.
pub struct Lines {
    done: Receiver<(u64, Batch)>,
    /// Batches that came back before the one due.
    early: BTreeMap<u64, Batch>,
    due: u64,
    current: std::vec::IntoIter<Parsed>,
}

impl Lines {
    /// Starts reading `files` (with their shown names) on a thread, parsing on up to four.
    pub fn start(files: Vec<(String, Box<dyn Read + Send>)>) -> Lines {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let (work_tx, work_rx) = sync_channel::<Job>(workers * 2);
        let (done_tx, done) = sync_channel(workers * 2);
        let work_rx = Arc::new(Mutex::new(work_rx));
        for _ in 0..workers {
            let (work_rx, done_tx) = (work_rx.clone(), done_tx.clone());
            std::thread::spawn(move || worker(&work_rx, &done_tx));
        }
        std::thread::spawn(move || split(files, &work_tx, &done_tx));
        Lines {
            done,
            early: BTreeMap::new(),
            due: 0,
            current: Vec::new().into_iter(),
        }
    }

    /// The next line; None at the end of the last file. Err: a file could not be read.
    pub fn next_line(&mut self) -> Result<Option<Parsed>, String> {
        loop {
            if let Some(p) = self.current.next() {
                return Ok(Some(p));
            }
            let batch = loop {
                if let Some(b) = self.early.remove(&self.due) {
                    break b;
                }
                match self.done.recv() {
                    Ok((seq, b)) => {
                        self.early.insert(seq, b);
                    }
                    // Every thread is done and every batch was handed out.
                    Err(_) => return Ok(None),
                }
            };
            self.due += 1;
            match batch {
                Batch::Lines(lines) => self.current = lines.into_iter(),
                Batch::Failed(why) => return Err(why),
            }
        }
    }
}

/// Reads the files line by line into numbered batches for the workers.
fn split(
    files: Vec<(String, Box<dyn Read + Send>)>,
    work: &SyncSender<Job>,
    done: &SyncSender<(u64, Batch)>,
) {
    let mut seq = 0;
    let mut batch = Vec::with_capacity(BATCH);
    let mut bytes = 0;
    for (k, (shown, file)) in files.into_iter().enumerate() {
        let mut file = BufReader::new(file);
        for i in 0.. {
            let line = match capped_line(&mut file) {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(e) => {
                    if !batch.is_empty() {
                        let _ = work.send((seq, std::mem::take(&mut batch)));
                        seq += 1;
                    }
                    let _ = done.send((seq, Batch::Failed(format!("cannot read {shown}: {e}"))));
                    return;
                }
            };
            bytes += line.as_ref().map_or(0, Vec::len);
            batch.push((k, i + 1, line));
            if batch.len() == BATCH || bytes >= BATCH_BYTES {
                if work.send((seq, std::mem::take(&mut batch))).is_err() {
                    return;
                }
                seq += 1;
                bytes = 0;
            }
        }
    }
    if !batch.is_empty() {
        let _ = work.send((seq, batch));
    }
}

fn worker(work: &Mutex<Receiver<Job>>, done: &SyncSender<(u64, Batch)>) {
    loop {
        let job = work
            .lock()
            .map_err(|_| ())
            .and_then(|rx| rx.recv().map_err(|_| ()));
        let Ok((seq, lines)) = job else { return };
        let parsed = lines
            .into_iter()
            .filter_map(|(file, line, bytes)| {
                let parsed = match bytes.as_deref().map(std::str::from_utf8) {
                    Err(len) => Err(format!(
                        "longer than any record: {len} bytes (at most {MAX_LINE})"
                    )),
                    Ok(Err(_)) => Err("not UTF-8".to_string()),
                    Ok(Ok(t)) if t.trim().is_empty() => return None,
                    Ok(Ok(t)) => parse_line(t).map_err(|e| e.to_string()),
                };
                Some(Parsed { file, line, parsed })
            })
            .collect();
        if done.send((seq, Batch::Lines(parsed))).is_err() {
            return;
        }
    }
}

/// The next line without its newline; Err(length) for one longer than MAX_LINE, whose
/// bytes are passed over, not held. None at the end of the file.
fn capped_line(r: &mut impl BufRead) -> std::io::Result<Option<Result<Vec<u8>, usize>>> {
    let (mut line, mut len, mut any) = (Vec::new(), 0usize, false);
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        any = true;
        let (part, used, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        len += part.len();
        if len <= MAX_LINE {
            line.extend_from_slice(part);
        } else {
            line = Vec::new();
        }
        r.consume(used);
        if end {
            break;
        }
    }
    Ok(any.then_some(if len > MAX_LINE { Err(len) } else { Ok(line) }))
}
