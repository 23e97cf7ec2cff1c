//! The built-in window functions (windowfunctions.html §3): row_number, rank,
//! dense_rank, percent_rank, cume_dist, ntile, lag, lead, first_value, last_value,
//! nth_value.
//!
//! They are computed a whole partition at a time: the executor sorts the partition by
//! the window's ORDER BY, evaluates each function's arguments for every row, groups rows
//! into peers (equal ORDER BY keys), resolves each row's frame, and calls
//! [`evaluate_partition`]. Aggregate functions used as window functions need no help from
//! this module: the executor feeds each frame to an accumulator from
//! [`super::aggregate::new_aggregate`].
//!
//! Invariants: `peer_group` is non-decreasing and starts at 0; frames are half-open
//! ranges of row indexes within the partition (empty frames allowed). Inputs that break
//! them give an error, never a panic.

use crate::value::{Affinity, Result, SqlError, Value};

/// The built-in window functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
}

impl WindowKind {
    /// Looks up a built-in window function by name and argument count; None when the name
    /// is not a window-only function (it may still be an aggregate usable with OVER).
    pub fn lookup(name: &str, n_args: usize) -> Option<Result<WindowKind>> {
        let (kind, min, max) = match name.to_ascii_lowercase().as_str() {
            "row_number" => (WindowKind::RowNumber, 0, 0),
            "rank" => (WindowKind::Rank, 0, 0),
            "dense_rank" => (WindowKind::DenseRank, 0, 0),
            "percent_rank" => (WindowKind::PercentRank, 0, 0),
            "cume_dist" => (WindowKind::CumeDist, 0, 0),
            "ntile" => (WindowKind::Ntile, 1, 1),
            "lag" => (WindowKind::Lag, 1, 3),
            "lead" => (WindowKind::Lead, 1, 3),
            "first_value" => (WindowKind::FirstValue, 1, 1),
            "last_value" => (WindowKind::LastValue, 1, 1),
            "nth_value" => (WindowKind::NthValue, 2, 2),
            _ => return None,
        };
        Some(if (min..=max).contains(&n_args) {
            Ok(kind)
        } else {
            Err(SqlError::WrongArgCount {
                name: name.to_string(),
            })
        })
    }

    /// Whether the function reads the frame (the others see the whole partition).
    pub fn uses_frame(self) -> bool {
        matches!(
            self,
            WindowKind::FirstValue | WindowKind::LastValue | WindowKind::NthValue
        )
    }
}

/// One partition, in window ORDER BY order.
pub struct Partition<'a> {
    /// The function's evaluated arguments, one slice per row.
    pub args: &'a [Vec<Value>],
    /// Peer group number of each row (0, 0, 1, 2, 2, ...): rows with equal ORDER BY keys
    /// share one; without ORDER BY every row is a peer of every other (all 0).
    pub peer_group: &'a [usize],
    /// Each row's frame as a half-open range of row indexes.
    pub frames: &'a [(usize, usize)],
}

/// The function's value for every row of the partition.
pub fn evaluate_partition(kind: WindowKind, p: &Partition<'_>) -> Result<Vec<Value>> {
    let n = p.args.len();
    if p.peer_group.len() != n || p.frames.len() != n {
        return Err(SqlError::msg(
            "window partition: rows, peers and frames disagree",
        ));
    }
    if p.peer_group.windows(2).any(|w| w[1] < w[0]) || p.frames.iter().any(|&(a, b)| a > b || b > n)
    {
        return Err(SqlError::msg(
            "window partition: malformed peer groups or frames",
        ));
    }
    // First and last row index of each row's peer group.
    let mut group_start = vec![0usize; n];
    let mut group_end = vec![0usize; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && p.peer_group[j] == p.peer_group[i] {
            j += 1;
        }
        for k in i..j {
            group_start[k] = i;
            group_end[k] = j;
        }
        i = j;
    }
    let arg = |row: usize, k: usize| {
        p.args
            .get(row)
            .and_then(|a| a.get(k))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut out = Vec::with_capacity(n);
    match kind {
        WindowKind::RowNumber => out.extend((0..n).map(|i| Value::Integer(i as i64 + 1))),
        WindowKind::Rank => out.extend((0..n).map(|i| Value::Integer(group_start[i] as i64 + 1))),
        WindowKind::DenseRank => {
            let mut dense = 0i64;
            for i in 0..n {
                if i == 0 || p.peer_group[i] != p.peer_group[i - 1] {
                    dense += 1;
                }
                out.push(Value::Integer(dense));
            }
        }
        WindowKind::PercentRank => out.extend((0..n).map(|i| {
            Value::Real(if n > 1 {
                group_start[i] as f64 / (n - 1) as f64
            } else {
                0.0
            })
        })),
        WindowKind::CumeDist => {
            out.extend((0..n).map(|i| Value::Real(group_end[i] as f64 / n as f64)))
        }
        WindowKind::Ntile => {
            for i in 0..n {
                let param = arg(0, 0).to_i64();
                if param <= 0 {
                    return Err(SqlError::msg(
                        "argument of ntile must be a positive integer",
                    ));
                }
                let total = n as i64;
                let size = total / param;
                let row = i as i64;
                out.push(Value::Integer(if size == 0 {
                    row + 1
                } else {
                    let large = total - param * size;
                    let small_rows = large * (size + 1);
                    if row < small_rows {
                        1 + row / (size + 1)
                    } else {
                        1 + large + (row - small_rows) / size
                    }
                }));
            }
        }
        WindowKind::Lag | WindowKind::Lead => {
            for i in 0..n {
                let offset = match p.args[i].get(1) {
                    None => 1,
                    Some(v) => v.to_i64(),
                };
                let target = if kind == WindowKind::Lag {
                    (i as i64).checked_sub(offset)
                } else {
                    (i as i64).checked_add(offset)
                };
                out.push(match target {
                    Some(t) if t >= 0 && (t as usize) < n => arg(t as usize, 0),
                    _ => arg(i, 2),
                });
            }
        }
        WindowKind::FirstValue => {
            out.extend(
                p.frames
                    .iter()
                    .map(|&(a, b)| if a < b { arg(a, 0) } else { Value::Null }),
            )
        }
        WindowKind::LastValue => {
            out.extend(
                p.frames
                    .iter()
                    .map(|&(a, b)| if a < b { arg(b - 1, 0) } else { Value::Null }),
            )
        }
        WindowKind::NthValue => {
            for (i, &(a, b)) in p.frames.iter().enumerate() {
                let nth = match p.args[i]
                    .get(1)
                    .cloned()
                    .unwrap_or(Value::Null)
                    .apply_comparison_affinity(Some(Affinity::Numeric))
                {
                    Value::Integer(v) => v,
                    Value::Real(r) if (r as i64) as f64 == r => r as i64,
                    _ => {
                        return Err(SqlError::msg(
                            "second argument to nth_value must be a positive integer",
                        ))
                    }
                };
                if nth <= 0 {
                    return Err(SqlError::msg(
                        "second argument to nth_value must be a positive integer",
                    ));
                }
                let idx = a as i64 + nth - 1;
                out.push(if idx < b as i64 {
                    arg(idx as usize, 0)
                } else {
                    Value::Null
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_errors() {
        let args = vec![vec![Value::Integer(2)]; 5];
        let peers = [0, 0, 1, 2, 2];
        let frames: Vec<(usize, usize)> = (0..5).map(|i| (0, i + 1)).collect();
        let p = Partition {
            args: &args,
            peer_group: &peers,
            frames: &frames,
        };
        let rank = evaluate_partition(WindowKind::Rank, &p).unwrap_or_default();
        assert_eq!(rank, [1, 1, 3, 4, 4].map(Value::Integer).to_vec());
        let dense = evaluate_partition(WindowKind::DenseRank, &p).unwrap_or_default();
        assert_eq!(dense, [1, 1, 2, 3, 3].map(Value::Integer).to_vec());
        let ntile = evaluate_partition(WindowKind::Ntile, &p).unwrap_or_default();
        assert_eq!(ntile, [1, 1, 1, 2, 2].map(Value::Integer).to_vec());
        let bad = Partition {
            args: &args,
            peer_group: &[0, 1],
            frames: &frames,
        };
        assert!(evaluate_partition(WindowKind::RowNumber, &bad).is_err());
        let bad_frames = vec![(3, 1); 5];
        let bad = Partition {
            args: &args,
            peer_group: &peers,
            frames: &bad_frames,
        };
        assert!(evaluate_partition(WindowKind::FirstValue, &bad).is_err());
        let zero = vec![vec![Value::Integer(0)]; 2];
        let p = Partition {
            args: &zero,
            peer_group: &[0, 0],
            frames: &[(0, 1), (0, 2)],
        };
        assert!(evaluate_partition(WindowKind::Ntile, &p).is_err());
        assert!(matches!(WindowKind::lookup("LAG", 4), Some(Err(_))));
        assert!(WindowKind::lookup("sum", 1).is_none());
    }
}
