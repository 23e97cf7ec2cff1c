.tables
.schema Album
.indexes Track
.headers on
.mode column
SELECT g.Name AS genre, count(*) AS tracks, round(avg(t.Milliseconds)/1000.0, 2) AS avg_s FROM Track t JOIN Genre g USING (GenreId) GROUP BY g.Name ORDER BY tracks DESC, genre LIMIT 8;
.mode box
SELECT a.Title, ar.Name FROM Album a JOIN Artist ar USING (ArtistId) ORDER BY a.AlbumId LIMIT 5;
.mode json
SELECT InvoiceId, CustomerId, InvoiceDate, Total FROM Invoice ORDER BY InvoiceId LIMIT 3;
.mode csv
SELECT * FROM Employee ORDER BY EmployeeId LIMIT 3;
.mode quote
SELECT * FROM MediaType;
.headers off
.mode list
.dump Genre
.dump MediaType
INSERT INTO Genre(GenreId, Name) VALUES (1, 'dup');
SELECT count(*), sum(Total) FROM Invoice;
