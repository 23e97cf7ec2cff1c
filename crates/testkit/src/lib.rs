//! parlite-testkit: the sqllogictest runner and the SQLite oracle used by tests.
