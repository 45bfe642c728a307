//! Reading a bench's `target/kaspar-bench/<name>.jsonl`: one flat JSON
//! object a line (strings and numbers), as [`JsonLines`](crate::bench::JsonLines)
//! and the peers' and remote benches write them, and where each row came
//! from.

use std::path::Path;

use crate::bench::{utc_date, Machine, Provenance};

/// A JSON value of a flat row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string, unescaped.
    Str(String),
    /// A number.
    Num(f64),
}

/// One row: what was measured and, if the row says, where.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `table5`, `savina`, ...
    pub table: String,
    /// The case within the table.
    pub case: String,
    /// What was measured (`p50_ns`, `cdf@0.99`, ...).
    pub metric: String,
    /// The value (-1 for a case that did not run).
    pub value: f64,
    /// Its unit; empty if the row has none.
    pub unit: String,
    /// The row's `machine`, `date`, `load` and `command`, when it has the
    /// first, second and fourth (`load` is `unknown` if missing).
    pub provenance: Option<Provenance>,
}

/// Parses one line: a JSON object whose values are strings or numbers,
/// its members in order.
pub fn parse_object(line: &str) -> Result<Vec<(String, Value)>, String> {
    let mut p = Parser {
        s: line.trim().as_bytes(),
        i: 0,
    };
    p.expect(b'{')?;
    let mut members = Vec::new();
    p.space();
    if p.peek() == Some(b'}') {
        p.i += 1;
    } else {
        loop {
            p.space();
            let key = p.string()?;
            p.space();
            p.expect(b':')?;
            p.space();
            let value = match p.peek() {
                Some(b'"') => Value::Str(p.string()?),
                _ => Value::Num(p.number()?),
            };
            members.push((key, value));
            p.space();
            match p.next() {
                Some(b',') => continue,
                Some(b'}') => break,
                _ => return Err(p.error("',' or '}'")),
            }
        }
    }
    p.space();
    if p.i != p.s.len() {
        return Err(p.error("the end of the line"));
    }
    Ok(members)
}

/// Parses one row: `table`, `case`, `metric` (strings) and `value` (a
/// number) are required; `unit` and the provenance fields are optional.
pub fn parse_row(line: &str) -> Result<Row, String> {
    let members = parse_object(line)?;
    let text = |key: &str| {
        members.iter().find_map(|(k, v)| match v {
            Value::Str(s) if k == key => Some(s.clone()),
            _ => None,
        })
    };
    let need = |key: &str| text(key).ok_or_else(|| format!("no string `{key}`"));
    let value = members
        .iter()
        .find_map(|(k, v)| match v {
            Value::Num(n) if k == "value" => Some(*n),
            _ => None,
        })
        .ok_or("no number `value`")?;
    let provenance = match (text("machine"), text("date"), text("command")) {
        (Some(machine), Some(date), Some(command)) => Some(Provenance {
            machine,
            date,
            load: text("load").unwrap_or_else(|| "unknown".into()),
            command,
        }),
        _ => None,
    };
    Ok(Row {
        table: need("table")?,
        case: need("case")?,
        metric: need("metric")?,
        value,
        unit: text("unit").unwrap_or_default(),
        provenance,
    })
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        self.i += 1;
        c
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn error(&self, wanted: &str) -> String {
        format!("expected {wanted} at byte {}", self.i)
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.error(&format!("'{}'", c as char)))
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .s
            .get(self.i..self.i + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("four hex digits"))?;
        self.i += 4;
        Ok(digits)
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.next() {
                None => return Err(self.error("a closing '\"'")),
                Some(b'"') => break,
                Some(b'\\') => {
                    let c = match self.next() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                self.expect(b'\\')?;
                                self.expect(b'u')?;
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            char::from_u32(code).ok_or_else(|| self.error("a character"))?
                        }
                        _ => return Err(self.error("an escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(c) => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("UTF-8"))
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(&c))
        {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("expected a number at byte {start}"))
    }
}

/// The bench output a figure reads, and the command that makes it (named
/// in the error when the file is missing).
#[derive(Clone, Copy, Debug)]
pub struct Input {
    /// The file's name in `target/kaspar-bench/`.
    pub file: &'static str,
    /// The command that writes it.
    pub command: &'static str,
}

/// One bench output file, read.
#[derive(Debug)]
pub struct Rows {
    /// Where it came from.
    pub input: Input,
    /// Its rows, in file order.
    pub rows: Vec<Row>,
    /// For rows that do not say where they come from: this host, the
    /// file's date, the input's command.
    fallback: Provenance,
}

impl Rows {
    /// Reads `dir/<input.file>`. A missing file is an error that names the
    /// command making it; so is a line that is not a row.
    pub fn load(dir: &Path, input: Input) -> Result<Rows, String> {
        let path = dir.join(input.file);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "cannot read {} ({e}): make it with `{}`",
                path.display(),
                input.command
            )
        })?;
        let date = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_or_else(|_| "unknown date".into(), utc_date);
        let m = Machine::detect();
        let fallback = Provenance {
            machine: format!(
                "{} cores, {} (the host drawing the figure: the rows do not name theirs)",
                m.cores, m.cpu
            ),
            date: format!("{date} (the file's date)"),
            load: "unknown".into(),
            command: format!("{} (or a variant: the rows do not say)", input.command),
        };
        Rows::parse(input, &text, fallback).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The rows of `text`, blank lines skipped.
    pub fn parse(input: Input, text: &str, fallback: Provenance) -> Result<Rows, String> {
        let rows = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(k, l)| parse_row(l).map_err(|e| format!("line {}: {e}", k + 1)))
            .collect::<Result<_, _>>()?;
        Ok(Rows {
            input,
            rows,
            fallback,
        })
    }

    /// The value of the last row of `table`, `case`, `metric`, if any and
    /// if it ran (a value of -1 is a case that did not).
    pub fn get(&self, table: &str, case: &str, metric: &str) -> Option<f64> {
        self.rows
            .iter()
            .rev()
            .find(|r| r.table == table && r.case == case && r.metric == metric)
            .map(|r| r.value)
            .filter(|&v| v >= 0.0)
    }

    /// [`get`](Rows::get), or an error naming the row and the command that
    /// writes it.
    pub fn need(&self, table: &str, case: &str, metric: &str) -> Result<f64, String> {
        self.get(table, case, metric).ok_or_else(|| {
            format!(
                "{} has no row {table} / {case} / {metric}: make it with `{}`",
                self.input.file, self.input.command
            )
        })
    }

    /// The cases of `table` with a row of `metric`, in the order they first
    /// appear.
    pub fn cases(&self, table: &str, metric: &str) -> Vec<String> {
        let mut cases: Vec<String> = Vec::new();
        for r in &self.rows {
            if r.table == table && r.metric == metric && !cases.contains(&r.case) {
                cases.push(r.case.clone());
            }
        }
        cases
    }

    /// The `(fraction, ns)` quantile rows of `table`, `case`
    /// ([`cdf::record`](crate::bench::cdf::record)); an error if there are none.
    pub fn quantiles(&self, table: &str, case: &str) -> Result<Vec<(f64, f64)>, String> {
        let q: Vec<(f64, f64)> = self
            .rows
            .iter()
            .filter(|r| r.table == table && r.case == case)
            .filter_map(|r| Some((crate::bench::cdf::metric_fraction(&r.metric)?, r.value)))
            .collect();
        if q.is_empty() {
            return Err(format!(
                "{} has no CDF rows (cdf@…) for {table} / {case}: make it with `{}`",
                self.input.file, self.input.command
            ));
        }
        Ok(q)
    }

    /// One sentence per distinct provenance among the rows `keep` picks,
    /// in file order: the command, the machine, its load, the date.
    pub fn provenance(&self, keep: impl Fn(&Row) -> bool) -> Vec<String> {
        let mut seen: Vec<&Provenance> = Vec::new();
        for r in self.rows.iter().filter(|r| keep(r)) {
            let p = r.provenance.as_ref().unwrap_or(&self.fallback);
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        seen.into_iter()
            .map(|p| {
                let load = if p.load == "unknown" {
                    String::new()
                } else {
                    format!(", load average {}", p.load)
                };
                format!("Data: `{}` on {}{load}, {}.", p.command, p.machine, p.date)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: Input = Input {
        file: "t.jsonl",
        command: "cargo bench --bench t",
    };

    fn fallback() -> Provenance {
        Provenance {
            machine: "here".into(),
            date: "today".into(),
            load: "unknown".into(),
            command: "cargo bench --bench t".into(),
        }
    }

    #[test]
    fn a_row_as_the_suite_writes_it_parses_with_its_provenance() {
        let p = Provenance {
            machine: "2 cores, \"Xeon\" µ\\".into(),
            date: "2025-01-02".into(),
            load: "5.06".into(),
            command: "cargo bench --bench paper -- --quick".into(),
        };
        let line = format!(
            r#"{{"table":"table5","case":"grouped","metric":"p50_ns","value":91.5,"unit":"ns"{}}}"#,
            p.json_members()
        );
        let row = parse_row(&line).unwrap();
        assert_eq!(
            (row.table.as_str(), row.case.as_str(), row.metric.as_str()),
            ("table5", "grouped", "p50_ns")
        );
        assert_eq!((row.value, row.unit.as_str()), (91.5, "ns"));
        assert_eq!(row.provenance, Some(p));
    }

    #[test]
    fn strings_unescape_and_numbers_parse() {
        let m = parse_object(r#" { "a" : "q\"\\\/\n\u00e9\ud83d\ude00µ", "b":-1.5e3 ,"c":7} "#)
            .unwrap();
        assert_eq!(m[0], ("a".into(), Value::Str("q\"\\/\né😀µ".into())));
        assert_eq!(m[1], ("b".into(), Value::Num(-1500.0)));
        assert_eq!(m[2], ("c".into(), Value::Num(7.0)));
        assert_eq!(parse_object("{}").unwrap(), vec![]);
        assert!(parse_object(r#"{"a":1"#).is_err());
        assert!(parse_object(r#"{"a":1} x"#).is_err());
        assert!(parse_object(r#"{"a":"x}"#).is_err());
        assert!(parse_row(r#"{"table":"t","case":"c","metric":"m"}"#).is_err());
    }

    #[test]
    fn lookups_take_the_last_row_and_skip_cases_that_did_not_run() {
        let text = r#"{"table":"remote","case":"iceoryx2/raw","metric":"p50_ns","value":600,"unit":"ns"}

{"table":"remote","case":"iceoryx2/raw","metric":"p50_ns","value":650,"unit":"ns","machine":"m","date":"2025-01-02","command":"c"}
{"table":"remote","case":"aeron_ipc/raw","metric":"p50_ns","value":-1,"unit":"ns"}
{"table":"remote","case":"x","metric":"cdf@0.5","value":10,"unit":"ns"}
"#;
        let rows = Rows::parse(INPUT, text, fallback()).unwrap();
        assert_eq!(rows.get("remote", "iceoryx2/raw", "p50_ns"), Some(650.0));
        assert_eq!(rows.get("remote", "aeron_ipc/raw", "p50_ns"), None);
        let err = rows.need("remote", "aeron_ipc/raw", "p50_ns").unwrap_err();
        assert!(err.contains("cargo bench --bench t"), "{err}");
        assert_eq!(
            rows.cases("remote", "p50_ns"),
            ["iceoryx2/raw", "aeron_ipc/raw"]
        );
        assert_eq!(rows.quantiles("remote", "x").unwrap(), vec![(0.5, 10.0)]);
        assert!(rows.quantiles("remote", "y").is_err());
        assert_eq!(
            rows.provenance(|r| r.case == "iceoryx2/raw"),
            [
                "Data: `cargo bench --bench t` on here, today.",
                "Data: `c` on m, 2025-01-02."
            ]
        );
        assert!(Rows::parse(INPUT, "{\"table\":1}", fallback())
            .unwrap_err()
            .starts_with("line 1:"));
    }
}
