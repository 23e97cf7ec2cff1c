CREATE TABLE extra(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO extra VALUES('a', 1), ('b', x'00ff'), ('c', 2.5);
SELECT count(*) FROM extra;
