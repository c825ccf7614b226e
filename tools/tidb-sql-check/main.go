// tidb-sql-check reports, for each SQL statement it is given, whether TiDB's own parser accepts
// it. TiDB itself cannot be built or run where Trellis is tested; its parser can, and it is the
// part that rejects syntax TiDB does not have (MariaDB-only forms, typos in VECTOR DDL, ...).
//
// Input on stdin: a JSON array of strings, one statement each.
// Output on stdout: a JSON array of the same length, {"ok": true} or
// {"ok": false, "error": "<the parser's message, with line and column>"}.
// A string holding more or fewer than one statement is reported as not ok: the adapter sends
// exactly one statement per call.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/pingcap/tidb/pkg/parser"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

type verdict struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func check(p *parser.Parser, sql string) verdict {
	statements, warnings, err := p.ParseSQL(sql)
	if err != nil {
		return verdict{Error: err.Error()}
	}
	if len(warnings) > 0 {
		return verdict{Error: fmt.Sprintf("parser warning: %v", warnings[0])}
	}
	if len(statements) != 1 {
		return verdict{Error: fmt.Sprintf("expected one statement, found %d", len(statements))}
	}
	return verdict{OK: true}
}

func main() {
	var statements []string
	if err := json.NewDecoder(os.Stdin).Decode(&statements); err != nil {
		fmt.Fprintln(os.Stderr, "tidb-sql-check: stdin must be a JSON array of strings:", err)
		os.Exit(2)
	}
	p := parser.New()
	verdicts := make([]verdict, len(statements))
	for i, sql := range statements {
		verdicts[i] = check(p, sql)
	}
	if err := json.NewEncoder(os.Stdout).Encode(verdicts); err != nil {
		fmt.Fprintln(os.Stderr, "tidb-sql-check:", err)
		os.Exit(2)
	}
}
