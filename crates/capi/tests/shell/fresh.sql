.headers on
CREATE TABLE artist(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, born REAL, photo BLOB, note TEXT DEFAULT 'n/a');
CREATE INDEX artist_born ON artist(born DESC);
CREATE VIEW old AS SELECT name FROM artist WHERE born < 1950;
CREATE TRIGGER artist_ai AFTER INSERT ON artist BEGIN SELECT 1; END;
INSERT INTO artist(name, born, photo) VALUES ('Miles "Dewey" Davis', 1926, x'89504e47'), ('O''Brien', 1961.5, NULL), ('Zoë', NULL, x''), ('tab	and
newline', -0.0, NULL);
.mode list
SELECT * FROM artist ORDER BY id;
.mode csv
SELECT * FROM artist ORDER BY id;
.mode column
SELECT id, name, born FROM artist ORDER BY id;
.mode box
SELECT id, name, born, photo FROM artist ORDER BY id;
.mode json
SELECT * FROM artist ORDER BY id;
.mode insert artist
SELECT * FROM artist ORDER BY id;
.mode quote
SELECT * FROM artist ORDER BY id;
.mode line
SELECT * FROM artist WHERE id = 1;
.mode markdown
SELECT id, name FROM artist ORDER BY id;
.mode table
SELECT 1.5 AS r, 1e300 AS big, 'x' AS t, NULL AS n;
.mode tabs
SELECT id, name FROM artist ORDER BY id;
.mode html
SELECT id, name FROM artist WHERE id < 3 ORDER BY id;
.headers off
.mode list
.schema
.schema artist
.tables
.indexes
.indexes artist
.import --csv people.csv people
SELECT * FROM people;
.mode quote
SELECT typeof(id), typeof(score) FROM people;
.mode list
.separator |
.nullvalue NULL
SELECT name, born FROM artist ORDER BY id;
.nullvalue ''
SELECT printf('%5.2f|%-6s|%q|%Q|%w', 3.14159, 'ab', 'it''s', NULL, 'a"b');
.read more.sql
INSERT INTO artist(name) VALUES ('Zoë');
INSERT INTO artist(name) VALUES (NULL);
SELEC 1;
SELECT nosuch FROM artist;
SELECT count(*) FROM artist;
.backup backup.db
.dump
