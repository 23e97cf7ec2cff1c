// Go's database/sql with the mattn/go-sqlite3 driver, built against the system
// libsqlite3 (-tags libsqlite3): crates/capi/tests/c_api.rs runs it on the system SQLite
// and on parlite's libsqlite3.so.0 and compares the outputs line for line.
// Usage: gosqlite DIR
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"
)

var (
	hooksMu sync.Mutex
	hooks   []string
)

func hook(s string) {
	hooksMu.Lock()
	hooks = append(hooks, s)
	hooksMu.Unlock()
}

func init() {
	sql.Register("sqlite3_hooks", &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			c.RegisterCommitHook(func() int {
				hook("commit")
				return 0
			})
			c.RegisterRollbackHook(func() { hook("rollback") })
			c.RegisterUpdateHook(func(op int, db string, table string, rowid int64) {
				hook(fmt.Sprintf("%d %s.%s %d", op, db, table, rowid))
			})
			return nil
		},
	})
}

func show(what string, err error) {
	if err == nil {
		fmt.Printf("%s: ok\n", what)
		return
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		fmt.Printf("%s: code=%d ext=%d msg=%s\n", what, se.Code, se.ExtendedCode, err)
		return
	}
	fmt.Printf("%s: %s\n", what, err)
}

func must(err error) {
	if err != nil {
		fmt.Println("unexpected:", err)
		os.Exit(1)
	}
}

func main() {
	dir := os.Args[1]
	db, err := sql.Open("sqlite3_hooks", filepath.Join(dir, "go.db")+"?_journal_mode=WAL&_busy_timeout=5000")
	must(err)
	defer db.Close()
	db.SetMaxOpenConns(1)

	_, err = db.Exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL, v REAL, b BLOB, n INTEGER UNIQUE)`)
	show("create", err)
	tx, err := db.Begin()
	must(err)
	st, err := tx.Prepare("INSERT INTO t(name, v, b, n) VALUES (?, ?, ?, ?)")
	must(err)
	for i := 0; i < 5; i++ {
		r, err := st.Exec(fmt.Sprintf("név %d", i), float64(i)*1.5, []byte{byte(i), 0, 0xff}, i*10)
		must(err)
		id, _ := r.LastInsertId()
		n, _ := r.RowsAffected()
		fmt.Println("insert", id, n)
	}
	must(st.Close())
	must(tx.Commit())

	rows, err := db.Query("SELECT id, name, v, b, typeof(b), n FROM t WHERE id > ? ORDER BY id DESC", 2)
	must(err)
	cols, _ := rows.Columns()
	fmt.Println("columns", strings.Join(cols, ","))
	for rows.Next() {
		var id, n int64
		var name string
		var v float64
		var b []byte
		var ty string
		must(rows.Scan(&id, &name, &v, &b, &ty, &n))
		fmt.Println(id, name, v, b, ty, n)
	}
	must(rows.Err())

	var count int
	must(db.QueryRow("SELECT count(*) FROM t").Scan(&count))
	fmt.Println("count", count)
	var null sql.NullString
	must(db.QueryRow("SELECT NULL").Scan(&null))
	fmt.Println("null valid", null.Valid)

	_, err = db.Exec("INSERT INTO t(name, n) VALUES ('dup', 10)")
	show("duplicate", err)
	_, err = db.Exec("INSERT INTO t(name) VALUES (NULL)")
	show("not null", err)
	_, err = db.Exec("SELEC 1")
	show("syntax", err)
	_, err = db.Exec("SELECT * FROM nosuch")
	show("no table", err)

	tx, err = db.Begin()
	must(err)
	_, err = tx.Exec("DELETE FROM t")
	must(err)
	must(tx.Rollback())
	must(db.QueryRow("SELECT count(*) FROM t").Scan(&count))
	fmt.Println("count after rollback", count)

	// A cached statement after another connection changes the schema.
	other, err := sql.Open("sqlite3", filepath.Join(dir, "go.db"))
	must(err)
	q := "SELECT * FROM t WHERE id = 1"
	rows, err = db.Query(q)
	must(err)
	cols, _ = rows.Columns()
	rows.Close()
	fmt.Println("before ALTER", len(cols))
	_, err = other.Exec("ALTER TABLE t ADD COLUMN extra DEFAULT 'x'")
	show("alter from another connection", err)
	rows, err = db.Query(q)
	must(err)
	cols, _ = rows.Columns()
	rows.Close()
	fmt.Println("after ALTER", len(cols), cols[len(cols)-1])
	other.Close()

	// Writers on several goroutines and connections.
	db.SetMaxOpenConns(4)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if _, err := db.Exec("INSERT INTO t(name, n) VALUES (?, ?)", "g", 1000+g*100+i); err != nil {
					fmt.Println("goroutine insert:", err)
				}
			}
		}(g)
	}
	wg.Wait()
	must(db.QueryRow("SELECT count(*) FROM t WHERE name = 'g'").Scan(&count))
	fmt.Println("goroutine rows", count)

	// The driver's own calls on a raw connection.
	conn, err := db.Conn(context.Background())
	must(err)
	must(conn.Raw(func(dc any) error {
		c := dc.(*sqlite3.SQLiteConn)
		fmt.Println("filename is go.db", filepath.Base(c.GetFilename("main")) == "go.db")
		fmt.Println("temp filename", c.GetFilename("temp") == "")
		show("file control unknown op", c.SetFileControlInt("main", 9999, 1))
		return nil
	}))
	conn.Close()

	_, err = sql.Open("sqlite3", filepath.Join(dir, "no", "such", "dir", "x.db"))
	must(err)
	bad, _ := sql.Open("sqlite3", filepath.Join(dir, "no", "such", "dir", "x.db"))
	err = bad.Ping()
	var se sqlite3.Error
	if errors.As(err, &se) {
		fmt.Println("open in a missing directory:", se.Code, se.SystemErrno)
	} else {
		fmt.Println("open in a missing directory:", err)
	}
	bad.Close()

	fmt.Println("hooks:", len(hooks) > 0, len(hooks), hooks[:16])
}
