//! parlite: `Database`, `Connection` and `Statement`, the API every front end uses.
