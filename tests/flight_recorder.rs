//! The flight recorder (issue #29, deliverable 4): the last N messages a
//! group or an actor handled, dumped as a journal on a handler's panic or
//! on request, and replayed in `Simulation`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use kaspar::journal::{
    Entry, FlightDump, FlightRecord, FlightRecorder, JournalErrorKind, JournalReader,
};
use kaspar::prelude::*;
use kaspar::{DeadLetter, Simulation, Solo};
use kaspar_suite::watch::eventually;
use serde::{Deserialize, Serialize};

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kaspar-flight-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

// ---- a standalone actor ------------------------------------------------------

pub struct Add(pub u64);
pub struct Total;
/// Larger than any slot the tests give: recorded as lost.
pub struct Note(pub String);

#[actor]
pub struct Tally {
    sum: u64,
    notes: usize,
}

#[actor]
impl Tally {
    #[handler(Add)]
    fn add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) {
        self.sum += msg.0;
    }

    #[handler(Total)]
    fn total(&mut self, _msg: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum
    }

    #[handler(Note)]
    fn note(&mut self, msg: Note, _ctx: &mut Ctx<Self>) {
        self.notes += msg.0.len();
    }
}

/// What the outside world sends a `Tally`: the journal's input type.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub enum TallyInput {
    Add(u64),
    Note(String),
}

/// Records `Add` and `Note`; `Total` is a query, not an input.
fn encode_tally(msg: &TallyMsg, rec: FlightRecord<'_>) {
    match msg {
        TallyMsg::Add(add, _) => rec.input(&TallyInput::Add(add.0)),
        // Borrowed twin of `TallyInput`: same variants, same order, so the
        // same encoding, and the string is not cloned.
        TallyMsg::Note(note, _) => {
            #[derive(Serialize)]
            enum InputRef<'a> {
                #[allow(dead_code)]
                Add(u64),
                Note(&'a str),
            }
            rec.input(&InputRef::Note(&note.0))
        }
        TallyMsg::Total(..) => {}
    }
}

fn route_tally(g: &Solo<Tally>, input: TallyInput) -> bool {
    match input {
        TallyInput::Add(n) => g.actor.send(Add(n)).is_ok(),
        TallyInput::Note(s) => g.actor.send(Note(s)).is_ok(),
    }
}

fn inputs(dump: &FlightDump) -> Vec<TallyInput> {
    JournalReader::<TallyInput>::from_bytes(dump.as_bytes())
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect()
}

#[test]
fn the_ring_keeps_exactly_the_last_n_inputs_in_order() {
    let system = System::new();
    let recorder = FlightRecorder::new(5, encode_tally);
    let tally = system
        .spawn(Tally { sum: 0, notes: 0 })
        .flight_recorder(&recorder)
        .start();
    for n in 1..=12 {
        tally.send(Add(n)).unwrap();
    }
    // A query is handled from the queue too, and skipped by the encoder.
    assert_eq!(tally.ask(Total).unwrap().wait().unwrap(), 78);

    let dump = recorder.dump();
    assert_eq!(
        inputs(&dump),
        (8..=12).map(TallyInput::Add).collect::<Vec<_>>()
    );
    assert_eq!((dump.records(), dump.lost()), (5, 0));
    assert_eq!(dump.overwritten(), 7);
    assert!(!dump.from_start());
    assert_eq!(
        (recorder.recorded(), recorder.lost(), recorder.panics()),
        (12, 0, 0)
    );

    // Records are stamped per batch, in handling order: never decreasing.
    let mut reader = JournalReader::<TallyInput>::from_bytes(dump.into_bytes()).unwrap();
    let mut last = kaspar::Time::from_nanos(0);
    while let Some(entry) = reader.next_entry().unwrap() {
        let Entry::Input { at, .. } = entry else {
            panic!("only inputs were recorded: {entry:?}")
        };
        assert!(at >= last);
        last = at;
    }
    system.shutdown();
}

#[test]
fn a_recording_from_the_start_replays_the_actor_exactly() {
    let system = System::new();
    let recorder = FlightRecorder::new(64, encode_tally);
    let tally = system
        .spawn(Tally { sum: 0, notes: 0 })
        .flight_recorder(&recorder)
        .start();
    for n in [5, 7, 11, 13] {
        tally.send(Add(n)).unwrap();
    }
    tally.send(Note("abc".into())).unwrap();
    assert_eq!(tally.ask(Total).unwrap().wait().unwrap(), 36);
    let dump = recorder.dump();
    assert!(dump.from_start());
    assert_eq!(dump.records(), 5);
    system.shutdown();
    replays_to(&dump, 5, 36);
}

/// Replays `dump` into a fresh simulated `Tally`: `inputs` replayed, and
/// its total then `total`.
fn replays_to(dump: &FlightDump, inputs: usize, total: u64) {
    let mut sim = Simulation::<Solo<Tally>>::new((Tally { sum: 0, notes: 0 },));
    let n = sim
        .replay(
            JournalReader::from_bytes(dump.as_bytes()).unwrap(),
            route_tally,
        )
        .unwrap();
    assert_eq!(n, inputs);
    assert_eq!(sim.group().actor.fast_send(Total).unwrap(), total);
    sim.finish();
}

#[test]
fn per_actor_opt_in_records_only_that_actor_and_one_recorder_records_one() {
    let system = System::new();
    let recorder = FlightRecorder::new(16, encode_tally);
    let recorded = system
        .spawn(Tally { sum: 0, notes: 0 })
        .flight_recorder(&recorder)
        .start();
    let plain = system.spawn(Tally { sum: 0, notes: 0 }).start();
    for n in 1..=3 {
        recorded.send(Add(n)).unwrap();
        plain.send(Add(100 + n)).unwrap();
    }
    assert_eq!(recorded.ask(Total).unwrap().wait().unwrap(), 6);
    assert_eq!(plain.ask(Total).unwrap().wait().unwrap(), 306);
    assert_eq!(
        inputs(&recorder.dump()),
        vec![TallyInput::Add(1), TallyInput::Add(2), TallyInput::Add(3)]
    );

    // A second actor cannot share the recorder: its records would
    // interleave with the first one's and replay as neither.
    let refused = catch_unwind(AssertUnwindSafe(|| {
        let _ = system
            .spawn(Tally { sum: 0, notes: 0 })
            .flight_recorder(&recorder);
    }))
    .unwrap_err();
    let message = refused.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("already records another group or actor"),
        "{message}"
    );
    system.shutdown();
}

#[test]
fn an_input_too_large_for_its_slot_is_lost_counted_and_stops_a_replay() {
    let system = System::new();
    // 8 bytes: an `Add` (variant + varint) fits, a 100-byte note does not.
    let recorder = FlightRecorder::with_slot_bytes(8, 8, encode_tally);
    let tally = system
        .spawn(Tally { sum: 0, notes: 0 })
        .flight_recorder(&recorder)
        .start();
    tally.send(Add(1)).unwrap();
    tally.send(Note("x".repeat(100))).unwrap();
    tally.send(Add(2)).unwrap();
    assert_eq!(tally.ask(Total).unwrap().wait().unwrap(), 3);
    system.shutdown();

    assert_eq!((recorder.recorded(), recorder.lost()), (3, 1));
    let dump = recorder.dump();
    assert_eq!((dump.records(), dump.lost()), (3, 1));
    // A dump with a lost record says so in its version (3).
    assert_eq!(&dump.as_bytes()[..8], b"KSPRJNL\x03");
    let mut reader = JournalReader::<TallyInput>::from_bytes(dump.as_bytes()).unwrap();
    assert!(matches!(
        reader.next_entry().unwrap(),
        Some(Entry::Input {
            input: TallyInput::Add(1),
            ..
        })
    ));
    assert!(matches!(
        reader.next_entry().unwrap(),
        Some(Entry::Lost { .. })
    ));
    assert!(matches!(
        reader.next_entry().unwrap(),
        Some(Entry::Input {
            input: TallyInput::Add(2),
            ..
        })
    ));
    assert!(reader.next_entry().unwrap().is_none());

    // The replay stops at the lost input, naming its offset (after the
    // header and the first record: 8 + 13 + 2).
    let mut sim = Simulation::<Solo<Tally>>::new((Tally { sum: 0, notes: 0 },));
    let err = sim
        .replay(
            JournalReader::from_bytes(dump.as_bytes()).unwrap(),
            route_tally,
        )
        .unwrap_err();
    assert!(matches!(err.kind, JournalErrorKind::LostInput), "{err}");
    assert_eq!(err.offset, 23);
    sim.finish();
}

// ---- a group that fails ------------------------------------------------------

/// A fill of `qty` on the book.
pub struct Fill(pub i64);
/// The position is closed: back to zero.
pub struct Flat;
/// Book -> risk, inline: the new net position.
pub struct Exposure(pub i64);
/// Risk -> blotter: an exposure it checked.
pub struct Report(pub i64);
pub struct Wire(pub Addr<Risk>);
pub struct WireOut(pub Addr<Blotter>);

#[actor]
pub struct Book {
    net: i64,
    risk: Option<Addr<Risk>>,
}

#[actor]
impl Book {
    #[handler(Wire)]
    fn wire(&mut self, msg: Wire, _ctx: &mut Ctx<Self>) {
        self.risk = Some(msg.0);
    }

    #[handler(Fill)]
    fn fill(&mut self, msg: Fill, _ctx: &mut Ctx<Self>) {
        self.net += msg.0;
        self.check();
    }

    #[handler(Flat)]
    fn flat(&mut self, _msg: Flat, _ctx: &mut Ctx<Self>) {
        self.net = 0;
        self.check();
    }
}

impl Book {
    fn check(&self) {
        // A member called inline: a panic there is the risk member's,
        // caught at its entry, and reported to the book as `Panicked`.
        let risk = self.risk.as_ref().expect("wired");
        let _ = risk.fast_send(Exposure(self.net));
    }
}

#[actor]
pub struct Risk {
    limit: i64,
    out: Option<Addr<Blotter>>,
}

#[actor]
impl Risk {
    #[handler(WireOut)]
    fn wire(&mut self, msg: WireOut, _ctx: &mut Ctx<Self>) {
        self.out = Some(msg.0);
    }

    #[handler(Exposure)]
    fn exposure(&mut self, msg: Exposure, _ctx: &mut Ctx<Self>) {
        self.out
            .as_ref()
            .expect("wired")
            .send(Report(msg.0))
            .unwrap();
        if msg.0.abs() > self.limit {
            panic!("exposure {} over limit {}", msg.0, self.limit);
        }
    }
}

#[group]
pub struct Desk {
    pub book: Addr<Book>,
    pub risk: Addr<Risk>,
}

/// Outside the group: what it reported, and the panics it saw.
#[actor]
pub struct Blotter {
    reports: Arc<Mutex<Vec<i64>>>,
    panics: Arc<Mutex<Vec<String>>>,
}

#[actor]
impl Blotter {
    #[handler(Report)]
    fn report(&mut self, msg: Report, _ctx: &mut Ctx<Self>) {
        self.reports.lock().unwrap().push(msg.0);
    }

    #[handler(DeadLetter)]
    fn letter(&mut self, msg: DeadLetter, _ctx: &mut Ctx<Self>) {
        if let Some(m) = msg.panic_message() {
            self.panics.lock().unwrap().push(m.to_owned());
        }
    }
}

type Log = (Arc<Mutex<Vec<i64>>>, Arc<Mutex<Vec<String>>>);

fn blotter() -> (Blotter, Log) {
    let log: Log = Default::default();
    let b = Blotter {
        reports: Arc::clone(&log.0),
        panics: Arc::clone(&log.1),
    };
    (b, log)
}

fn desk_members() -> (Book, Risk) {
    (
        Book { net: 0, risk: None },
        Risk {
            limit: 100,
            out: None,
        },
    )
}

fn wire_desk(g: &Desk, out: &Addr<Blotter>) {
    g.book.send(Wire(g.risk.clone())).unwrap();
    g.risk.send(WireOut(out.clone())).unwrap();
}

/// What the outside world sends the desk.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub enum DeskInput {
    Fill(i64),
    Flat,
}

/// Fills and flats are inputs; the wiring is not (a replay wires its own
/// simulated group), and an exposure is the book's own call.
fn encode_desk(msg: &DeskMsg, rec: FlightRecord<'_>) {
    match msg {
        DeskMsg::Book(BookMsg::Fill(fill, _)) => rec.input(&DeskInput::Fill(fill.0)),
        DeskMsg::Book(BookMsg::Flat(..)) => rec.input(&DeskInput::Flat),
        _ => {}
    }
}

fn route_desk(g: &Desk, input: DeskInput) -> bool {
    match input {
        DeskInput::Fill(q) => g.book.send(Fill(q)).is_ok(),
        DeskInput::Flat => g.book.send(Flat).is_ok(),
    }
}

/// 25 small fills (net 75, within the limit of 100), a flat, then four
/// fills of 30: the fourth takes the net to 120 and the risk member
/// panics.
fn failing_day() -> Vec<DeskInput> {
    let mut day = vec![DeskInput::Fill(3); 25];
    day.push(DeskInput::Flat);
    day.extend([DeskInput::Fill(30); 4]);
    day
}

/// Replays `journal` into a fresh simulated desk; returns the reports and
/// the panics it saw, and how many inputs it replayed.
fn replay_desk(journal: JournalReader<DeskInput>) -> (Vec<i64>, Vec<String>, usize) {
    let mut sim = Simulation::<Desk>::new(desk_members());
    let (b, (reports, panics)) = blotter();
    let out = sim.spawn(b);
    sim.dead_letters().subscribe(&out);
    wire_desk(sim.group(), &out);
    let n = sim.replay(journal, route_desk).unwrap();
    sim.finish();
    let reports = reports.lock().unwrap().clone();
    let panics = panics.lock().unwrap().clone();
    (reports, panics, n)
}

#[test]
fn a_panic_writes_the_journal_and_simulation_replays_it_to_the_same_panic() {
    let path = temp_path("desk-panic.journal");
    let _ = std::fs::remove_file(&path);

    // Live: 8 records kept, 30 inputs fed; the dump on the panic is a
    // window that begins three fills before the flat.
    let system = System::new();
    let (b, (live_reports, live_panics)) = blotter();
    let out = system.spawn(b).start();
    system.dead_letters().subscribe(&out);
    let recorder = FlightRecorder::new(8, encode_desk);
    recorder.on_panic_write(&path);
    let desk = system
        .spawn_group::<Desk>(desk_members())
        .flight_recorder(&recorder)
        .start();
    wire_desk(&desk, &out);
    for input in failing_day() {
        assert!(route_desk(&desk, input));
    }
    assert!(
        eventually(|| path.exists()),
        "no journal written on the panic"
    );
    assert!(eventually(|| live_panics.lock().unwrap().len() == 1));
    assert!(eventually(|| live_reports.lock().unwrap().len() == 30));
    system.shutdown();
    assert_eq!(recorder.panics(), 1);
    assert!(recorder.take_write_error().is_none());
    let live_panic = live_panics.lock().unwrap()[0].clone();
    assert_eq!(live_panic, "exposure 120 over limit 100");
    let live_reports = live_reports.lock().unwrap().clone();

    // The file holds the last 8 inputs, the panicking one last.
    let journal: Vec<DeskInput> = JournalReader::<DeskInput>::open(&path)
        .unwrap()
        .map(|r| r.unwrap().1)
        .collect();
    assert_eq!(journal, failing_day()[22..]);

    // Replayed from fresh states, the window reproduces the panic: its
    // cause (everything since the flat) lies inside it.
    let (reports, panics, n) = replay_desk(JournalReader::open(&path).unwrap());
    assert_eq!(n, 8);
    assert_eq!(panics, vec![live_panic]);
    // From the flat on, the replay's outputs are the live run's, bit for
    // bit; before it, the replay did not know the position the live book
    // had built up (69 to 75 live, 3 to 9 replayed): a window says
    // nothing of what came before it.
    assert_eq!(reports, vec![3, 6, 9, 0, 30, 60, 90, 120]);
    assert_eq!(live_reports[25..], reports[3..]);
    assert_eq!(live_reports[22..25], [69, 72, 75]);
}

#[test]
fn a_dump_on_request_from_the_start_replays_to_the_live_outputs() {
    let path = temp_path("desk-request.journal");
    let system = System::new();
    let (b, (live_reports, _)) = blotter();
    let out = system.spawn(b).start();
    let recorder = FlightRecorder::new(64, encode_desk);
    let desk = system
        .spawn_group::<Desk>(desk_members())
        .flight_recorder(&recorder)
        .start();
    wire_desk(&desk, &out);
    let day: Vec<DeskInput> = (0..40)
        .map(|i| {
            if i % 7 == 6 {
                DeskInput::Flat
            } else {
                DeskInput::Fill(i % 5 - 2)
            }
        })
        .collect();
    for input in &day {
        assert!(route_desk(&desk, *input));
    }
    assert!(eventually(
        || live_reports.lock().unwrap().len() == day.len()
    ));
    let dump = recorder.dump();
    system.shutdown();
    assert!(dump.from_start());
    assert_eq!(dump.records(), day.len());
    assert_eq!(recorder.panics(), 0);
    dump.write_to(&path).unwrap();

    let (reports, panics, n) = replay_desk(JournalReader::open(&path).unwrap());
    assert_eq!(n, day.len());
    assert!(panics.is_empty());
    assert_eq!(reports, *live_reports.lock().unwrap());
}

// ---- timers ----------------------------------------------------------------

pub struct Start(pub u64);
pub struct Mark;
#[derive(Clone)]
pub struct Beat;

/// Beats on a periodic timer; each mark logs how many beats came first.
#[actor]
pub struct Pacer {
    beats: u64,
    log: Arc<Mutex<Vec<u64>>>,
}

#[actor]
impl Pacer {
    #[handler(Start)]
    fn start(&mut self, msg: Start, ctx: &mut Ctx<Self>) {
        ctx.schedule_every(std::time::Duration::from_millis(msg.0), Beat);
    }

    #[handler(Beat)]
    fn beat(&mut self, _msg: Beat, _ctx: &mut Ctx<Self>) {
        self.beats += 1;
    }

    #[handler(Mark)]
    fn mark(&mut self, _msg: Mark, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push(self.beats);
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub enum PacerInput {
    Start(u64),
    Mark,
}

fn encode_pacer(msg: &PacerMsg, rec: FlightRecord<'_>) {
    match msg {
        PacerMsg::Start(s, _) => rec.input(&PacerInput::Start(s.0)),
        PacerMsg::Mark(..) => rec.input(&PacerInput::Mark),
        PacerMsg::Beat(..) => rec.timer(),
    }
}

fn route_pacer(g: &Solo<Pacer>, input: PacerInput) -> bool {
    match input {
        PacerInput::Start(ms) => g.actor.send(Start(ms)).is_ok(),
        PacerInput::Mark => g.actor.send(Mark).is_ok(),
    }
}

#[test]
fn timer_firings_recorded_as_timers_replay_where_they_fired() {
    let system = System::new();
    let live_log = Arc::new(Mutex::new(Vec::new()));
    let recorder = FlightRecorder::new(1024, encode_pacer);
    let pacer = system
        .spawn(Pacer {
            beats: 0,
            log: Arc::clone(&live_log),
        })
        .flight_recorder(&recorder)
        .start();
    pacer.send(Start(1)).unwrap();
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(3));
        pacer.send(Mark).unwrap();
    }
    assert!(eventually(|| live_log.lock().unwrap().len() == 5));
    // Taken between two messages: the beats handled so far, and the marks.
    let dump = recorder.dump();
    system.shutdown();
    assert!(dump.from_start());
    let live = live_log.lock().unwrap().clone();
    assert!(live[4] > 0, "the timer beat while the marks came: {live:?}");

    let mut reader = JournalReader::<PacerInput>::from_bytes(dump.as_bytes()).unwrap();
    let mut timers = 0;
    while let Some(entry) = reader.next_entry().unwrap() {
        timers += usize::from(matches!(entry, Entry::Timer { .. }));
    }
    assert_eq!(timers, dump.records() - 6);

    let replay_log = Arc::new(Mutex::new(Vec::new()));
    let mut sim = Simulation::<Solo<Pacer>>::new((Pacer {
        beats: 0,
        log: Arc::clone(&replay_log),
    },));
    let n = sim
        .replay(
            JournalReader::from_bytes(dump.as_bytes()).unwrap(),
            route_pacer,
        )
        .unwrap();
    sim.finish();
    assert_eq!(n, 6);
    assert_eq!(*replay_log.lock().unwrap(), live);
}

/// A pooled actor records the same inputs as a threaded one, across
/// budgets it serves on past and lingers between (asked one message at a
/// time from this thread, 300 times, with a budget of 16): the recording
/// replays it exactly.
#[test]
fn a_pooled_actor_records_across_its_budgets_and_replays_exactly() {
    let system = System::with_config(kaspar::SystemConfig {
        pool: kaspar::PoolConfig::new().workers(1).budget(16),
        ..kaspar::SystemConfig::default()
    });
    let recorder = FlightRecorder::new(1024, encode_tally);
    let tally = system
        .spawn(Tally { sum: 0, notes: 0 })
        .pooled()
        .flight_recorder(&recorder)
        .start();
    let mut sum = 0;
    for n in 1..=300 {
        tally.send(Add(n)).unwrap();
        sum += n;
        assert_eq!(tally.ask(Total).unwrap().wait().unwrap(), sum);
    }
    let dump = recorder.dump();
    assert!(dump.from_start());
    assert_eq!((dump.records(), dump.lost()), (300, 0));
    assert_eq!(
        inputs(&dump),
        (1..=300).map(TallyInput::Add).collect::<Vec<_>>()
    );
    system.shutdown();
    replays_to(&dump, 300, sum);
}
