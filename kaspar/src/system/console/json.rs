//! The little JSON the console writes: objects, arrays, strings, numbers,
//! booleans and nulls, into one `String`, with commas placed by the
//! writer. Hand-written rather than serde_json: the console's one document
//! has a fixed shape of names and numbers, and this is shorter than the
//! derive glue, with no dependency for kaspar's users to build.

use std::fmt::Write as _;

/// Writes one JSON document. Every `begin_*` is matched by its `end_*` by
/// the caller; a value inside an object follows its [`key`](Self::key).
#[derive(Default)]
pub(super) struct Json {
    out: String,
    /// Whether the next value or key needs a comma before it.
    comma: bool,
}

impl Json {
    /// The document written so far.
    pub(super) fn finish(self) -> String {
        self.out
    }

    fn sep(&mut self) {
        if self.comma {
            self.out.push(',');
        }
    }

    pub(super) fn begin_object(&mut self) {
        self.sep();
        self.out.push('{');
        self.comma = false;
    }

    pub(super) fn end_object(&mut self) {
        self.out.push('}');
        self.comma = true;
    }

    pub(super) fn begin_array(&mut self) {
        self.sep();
        self.out.push('[');
        self.comma = false;
    }

    pub(super) fn end_array(&mut self) {
        self.out.push(']');
        self.comma = true;
    }

    /// An object's key; its value comes next.
    pub(super) fn key(&mut self, key: &str) {
        self.sep();
        self.quoted(key);
        self.out.push(':');
        self.comma = false;
    }

    pub(super) fn str(&mut self, value: &str) {
        self.sep();
        self.quoted(value);
        self.comma = true;
    }

    pub(super) fn u64(&mut self, value: u64) {
        self.sep();
        let _ = write!(self.out, "{value}");
        self.comma = true;
    }

    /// A finite number, or `null` (JSON has no NaN or infinity).
    pub(super) fn f64(&mut self, value: f64) {
        self.sep();
        if value.is_finite() {
            let _ = write!(self.out, "{value}");
        } else {
            self.out.push_str("null");
        }
        self.comma = true;
    }

    pub(super) fn bool(&mut self, value: bool) {
        self.sep();
        self.out.push_str(if value { "true" } else { "false" });
        self.comma = true;
    }

    pub(super) fn null(&mut self) {
        self.sep();
        self.out.push_str("null");
        self.comma = true;
    }

    /// `value`, or `null`.
    pub(super) fn opt_str(&mut self, value: Option<&str>) {
        match value {
            Some(v) => self.str(v),
            None => self.null(),
        }
    }

    /// `key` and a number.
    pub(super) fn num(&mut self, key: &str, value: u64) {
        self.key(key);
        self.u64(value);
    }

    /// `value` as a JSON string: quotes, backslashes and control characters
    /// escaped; everything else as it is (the document is UTF-8).
    fn quoted(&mut self, value: &str) {
        self.out.push('"');
        for c in value.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\u{:04x}", c as u32);
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_nesting_and_escapes() {
        let mut j = Json::default();
        j.begin_object();
        j.num("n", 3);
        j.key("list");
        j.begin_array();
        j.f64(1.5);
        j.f64(f64::NAN);
        j.begin_object();
        j.key("s");
        j.str("a\"b\\c\nd\u{1}é");
        j.end_object();
        j.null();
        j.end_array();
        j.key("ok");
        j.bool(true);
        j.key("none");
        j.opt_str(None);
        j.end_object();
        assert_eq!(
            j.finish(),
            r#"{"n":3,"list":[1.5,null,{"s":"a\"b\\c\nd\u0001é"},null],"ok":true,"none":null}"#
        );
    }
}
