//! json_each and json_tree (json1.html, "The json_each() and json_tree() table-valued
//! functions"): the rows of one JSON document, computed whole for each call.
//!
//! Columns are SQLite's: key, value, type, atom, id, parent, fullkey, path, then the hidden
//! json and root (`COLUMNS`, hidden from `*` from `HIDDEN_FROM` on).
//!
//! Invariants, matching SQLite 3.45+ (which walks the document's JSONB form):
//! - `id` is the byte offset of the element in the document's JSONB encoding; for an
//!   object member it is the offset of its label. JSONB keeps each literal's text as
//!   written, and each element's header is 1, 2, 3 or 5 bytes for payloads of at most 11,
//!   255, 65535 or 2^32-1 bytes, so offsets follow from the parsed tree (`blob_len`).
//! - `parent` (json_tree only) is the `id` of the containing array's or object's row.
//! - `fullkey` appends `[i]` or `.label` to the container's path; a label that is not
//!   an ASCII letter followed by letters and digits is double-quoted, escapes kept.
//! - json_each's only row for a root that is not a container has a NULL key and the root
//!   path as `path`; json_tree's root row gets key and path from `tree_root`.
//! - Depth is bounded by the parser (`JSON_MAX_DEPTH`), so the walks recurse boundedly.

use super::json::{json_arg, key_text, resolve, to_sql, type_name, Node};
use crate::value::{Result, Value};

/// Column names, the hidden ones last.
pub const COLUMNS: [&str; 10] = [
    "key", "value", "type", "atom", "id", "parent", "fullkey", "path", "json", "root",
];
/// Columns from this position on are HIDDEN: not part of `*`.
pub const HIDDEN_FROM: usize = 8;

fn payload_len(n: &Node) -> usize {
    match n {
        Node::Null | Node::True | Node::False => 0,
        Node::Num(_, t) => t.len(),
        Node::Str(_, raw) => raw.len(),
        Node::Array(v) => v.iter().map(blob_len).sum(),
        Node::Object(kv) => kv.iter().map(|(k, v)| blob_len(k) + blob_len(v)).sum(),
    }
}

fn header_len(payload: usize) -> usize {
    match payload {
        0..=11 => 1,
        12..=0xff => 2,
        0x100..=0xffff => 3,
        _ => 5,
    }
}

/// Bytes of the element's JSONB encoding (header and payload).
fn blob_len(n: &Node) -> usize {
    let p = payload_len(n);
    header_len(p) + p
}

/// Where `target` (found by identity) lies within `n`, which starts at `at`: (row id, value
/// offset). The row id of an object member is its label's offset.
fn locate(n: &Node, at: usize, target: &Node) -> Option<(usize, usize)> {
    if std::ptr::eq(n, target) {
        return Some((at, at));
    }
    let mut pos = at + header_len(payload_len(n));
    match n {
        Node::Array(v) => {
            for c in v {
                if let Some(o) = locate(c, pos, target) {
                    return Some(o);
                }
                pos += blob_len(c);
            }
            None
        }
        Node::Object(kv) => {
            for (k, v) in kv {
                let value_at = pos + blob_len(k);
                if std::ptr::eq(v, target) {
                    return Some((pos, value_at));
                }
                if let Some(o) = locate(v, value_at, target) {
                    return Some(o);
                }
                pos = value_at + blob_len(v);
            }
            None
        }
        _ => None,
    }
}

/// `jsonAppendObjectPathElement`: `.label`, or `."label"` unless it is a plain word.
fn push_label(path: &mut String, k: &Node) {
    let raw = match k {
        Node::Str(_, raw) => raw.as_str(),
        _ => "",
    };
    let b = raw.as_bytes();
    let plain = b.first().is_some_and(|c| c.is_ascii_alphabetic())
        && b.iter().all(|c| c.is_ascii_alphanumeric());
    if plain {
        path.push('.');
        path.push_str(raw);
    } else {
        path.push_str(".\"");
        path.push_str(raw);
        path.push('"');
    }
}

/// json_tree's root row: (key, length of its `path`), as `jsonEachPathLength` and the
/// JEACH_KEY case compute them. The path is cut at the last `.` or `[` whose prefix names
/// a container that *starts* with the root element (SQLite's test, kept as it is: for a
/// root that is not its container's first member the cut falls back to `$`, and the key
/// is the whole rest of the path, `$.a."x y"` giving `a."x y"`).
fn tree_root(doc: &Node, root: &str, root_id: usize) -> Result<(Value, usize)> {
    let b = root.as_bytes();
    let mut n = b.len();
    while n > 1 {
        n -= 1;
        if b[n] == b'[' || b[n] == b'.' {
            let Some(x) = resolve(doc, &root[..n])? else {
                continue;
            };
            if let Some((_, at)) = locate(doc, 0, x) {
                if at + header_len(payload_len(x)) == root_id {
                    break;
                }
            }
        }
    }
    if b.len() == 1 || b.len() == n {
        return Ok((Value::Null, n));
    }
    let len = b.len() - n;
    let key = if b[n] == b'[' {
        let digits: String = root[n + 1..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        Value::Integer(digits.parse().unwrap_or(0))
    } else if b.get(n + 1) == Some(&b'"') && len >= 3 {
        // SQLite drops the first and last byte; `get` keeps a multi-byte last character
        // from splitting (the key is then empty rather than a panic).
        Value::text(root.get(n + 2..n + len - 1).unwrap_or(""))
    } else {
        Value::text(root.get(n + 1..).unwrap_or(""))
    };
    Ok((key, n))
}

struct Walk<'a> {
    recursive: bool,
    json: Value,
    root: &'a str,
    out: Vec<Vec<Value>>,
}

impl Walk<'_> {
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        key: Value,
        n: &Node,
        id: usize,
        parent: Option<usize>,
        fullkey: &str,
        path: &str,
    ) -> Result<()> {
        let value = to_sql(n)?;
        let atom = match n {
            Node::Array(_) | Node::Object(_) => Value::Null,
            _ => value.clone(),
        };
        self.out.push(vec![
            key,
            value,
            Value::text(type_name(n)),
            atom,
            Value::Integer(id as i64),
            parent.map_or(Value::Null, |p| Value::Integer(p as i64)),
            Value::text(fullkey),
            Value::text(path),
            self.json.clone(),
            Value::text(self.root),
        ]);
        Ok(())
    }

    /// The members of container `n` (its value at offset `at`, its row id `id`, reached
    /// by `path`).
    fn children(&mut self, n: &Node, at: usize, id: usize, path: &str) -> Result<()> {
        let mut pos = at + header_len(payload_len(n));
        let parent = self.recursive.then_some(id);
        match n {
            Node::Array(v) => {
                for (i, c) in v.iter().enumerate() {
                    let full = format!("{path}[{i}]");
                    self.row(Value::Integer(i as i64), c, pos, parent, &full, path)?;
                    if self.recursive {
                        self.children(c, pos, pos, &full)?;
                    }
                    pos += blob_len(c);
                }
            }
            Node::Object(kv) => {
                for (k, v) in kv {
                    let mut full = path.to_string();
                    push_label(&mut full, k);
                    self.row(Value::text(key_text(k)), v, pos, parent, &full, path)?;
                    let value_at = pos + blob_len(k);
                    if self.recursive {
                        self.children(v, value_at, pos, &full)?;
                    }
                    pos = value_at + blob_len(v);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The rows of `json_each(json [, root])` (`recursive` false) or `json_tree(...)`.
pub fn rows(recursive: bool, args: &[Value]) -> Result<Vec<Vec<Value>>> {
    let (json, root) = match args {
        [j] => (j, None),
        [j, r] => (j, Some(r)),
        _ => {
            let name = if recursive { "json_tree" } else { "json_each" };
            return Err(crate::value::SqlError::msg(format!(
                "wrong number of arguments to function {name}()"
            )));
        }
    };
    let root = match root {
        None => "$".to_string(),
        Some(Value::Null) => return Ok(Vec::new()),
        Some(r) => r.to_text_or_empty().into_owned(),
    };
    let Some(doc) = json_arg(json)? else {
        return Ok(Vec::new());
    };
    let Some(node) = resolve(&doc, &root)? else {
        return Ok(Vec::new());
    };
    let (id, at) = locate(&doc, 0, node).unwrap_or((0, 0));
    let mut w = Walk {
        recursive,
        json: json.clone(),
        root: &root,
        out: Vec::new(),
    };
    let is_container = matches!(node, Node::Array(_) | Node::Object(_));
    if recursive {
        let (key, cut) = tree_root(&doc, &root, id)?;
        w.row(key, node, id, None, &root, &root[..cut])?;
    } else if !is_container {
        w.row(Value::Null, node, id, None, &root, &root)?;
    }
    if is_container {
        w.children(node, at, id, &root)?;
    }
    Ok(w.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(rows: &[Vec<Value>], c: usize) -> Vec<Value> {
        rows.iter().map(|r| r[c].clone()).collect()
    }

    #[test]
    fn jsonb_offsets() {
        // {"a":{"b":1}}: object@0, label a@1, object@3, label b@4, 1@6.
        let r = rows(true, &[Value::text(r#"{"a":{"b":1}}"#)]).expect("rows");
        assert_eq!(
            col(&r, 4),
            vec![Value::Integer(0), Value::Integer(1), Value::Integer(4)]
        );
        assert_eq!(
            col(&r, 5),
            vec![Value::Null, Value::Integer(0), Value::Integer(1)]
        );
        let long = format!("[\"{}\",1]", "x".repeat(300));
        let r = rows(false, &[Value::text(long)]).expect("rows");
        // Payload 300+1+3+... > 255: a 3-byte array header; the string has a 3-byte one.
        assert_eq!(col(&r, 4), vec![Value::Integer(3), Value::Integer(306)]);
    }

    #[test]
    fn tree_root_keys() {
        let doc = json_arg(&Value::text(r#"{"a":{"b":1,"x y":[5,6]}}"#))
            .expect("parse")
            .expect("doc");
        let key = |path: &str| {
            let node = resolve(&doc, path).expect("path").expect("found");
            let (id, _) = locate(&doc, 0, node).expect("located");
            tree_root(&doc, path, id).expect("root")
        };
        assert_eq!(key("$"), (Value::Null, 1));
        assert_eq!(key("$.a"), (Value::text("a"), 1));
        assert_eq!(key("$.a.b"), (Value::text("b"), 3));
        assert_eq!(key("$.a.\"x y\""), (Value::text("a.\"x y\""), 1));
        assert_eq!(key("$.a.\"x y\"[0]"), (Value::Integer(0), 9));
        // A root whose last step ends in a multi-byte character never splits it.
        let doc = json_arg(&Value::text(r#"{"k":{"a":1,"é":2}}"#))
            .expect("parse")
            .expect("doc");
        let node = resolve(&doc, "$.\"k\".é").expect("path").expect("found");
        let (id, _) = locate(&doc, 0, node).expect("located");
        assert_eq!(tree_root(&doc, "$.\"k\".é", id).expect("root").1, 1);
    }

    #[test]
    fn kinds_are_kept() {
        let r = rows(false, &[Value::text("[1,2.5,\"s\",null,true]")]).expect("rows");
        assert_eq!(
            col(&r, 2),
            ["integer", "real", "text", "null", "true"]
                .iter()
                .map(|s| Value::text(*s))
                .collect::<Vec<_>>()
        );
    }
}
