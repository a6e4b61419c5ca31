package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// page is one GraphQL request asked of both servers. PostGraphile names
// things its own way (allSessions, rowId, turnsBySessionId); its query
// aliases them to sessiongraph's names, so that the two answers have one
// shape and can be compared value by value.
type page struct {
	Name        string
	SG, PG      string // the query as each server spells it
	Objects     int    // nodes in the answer
	Description string
}

// nestedPage is the session graph page of BENCHMARKS.md ("Compiled reads",
// and graph/compiled_page_bench_test.go's sessionGraphOneRow): the 20 newest
// sessions, each with its first 10 turns and 20 refs, 620 objects.
var nestedPage = page{
	Name:        "nested",
	Objects:     pageSessions * (1 + pageTurns + pageRefs),
	Description: "nested page (20 sessions × 10 turns + 20 refs, 620 objects)",
	SG: `query SessionGraphPage {
  sessions(first: 20, orderBy: {field: CREATED_AT, direction: DESC}) {
    pageInfo { hasNextPage }
    edges { node {
      id externalKey status currentTurn lastActiveAt
      turns(first: 10) { edges { node { number userMessage status startedAt } } }
      refs(first: 20) { edges { node { ref entityType label } } }
    } }
  }
}`,
	PG: `query SessionGraphPage {
  sessions: allSessions(first: 20, orderBy: CREATED_AT_DESC) {
    pageInfo { hasNextPage }
    edges { node {
      id: rowId externalKey status currentTurn lastActiveAt
      turns: turnsBySessionId(first: 10) { edges { node { number userMessage status startedAt } } }
      refs: refsBySessionId(first: 20) { edges { node { ref entityType label } } }
    } }
  }
}`,
}

// simplePage is the smallest list a client asks for (BenchmarkSessionIDsPage):
// the ids of the first 20 sessions in each server's default order, the
// primary key's for both.
var simplePage = page{
	Name:        "simple",
	Objects:     20,
	Description: "simple page `sessions(first: 20){ id }`",
	SG:          `{ sessions(first: 20) { edges { node { id } } } }`,
	PG:          `{ sessions: allSessions(first: 20) { edges { node { id: rowId } } } }`,
}

// requestBody is the POST body of query.
func requestBody(query string) []byte {
	b, _ := json.Marshal(map[string]string{"query": query})
	return b
}

// sameAnswer compares the two servers' answers to one page: the same
// objects, in the same order, with the same values. Two spellings are
// equal: a 64-bit integer, which PostGraphile sends as a string (BigInt)
// and sessiongraph as a number, and a timestamp, which each formats its own
// way (compared as instants). It returns the number of nodes.
func sameAnswer(sg, pg []byte) (int, error) {
	var a, b any
	for _, x := range []struct {
		raw []byte
		v   *any
	}{{sg, &a}, {pg, &b}} {
		d := json.NewDecoder(bytes.NewReader(x.raw))
		d.UseNumber()
		if err := d.Decode(x.v); err != nil {
			return 0, err
		}
		if m, _ := (*x.v).(map[string]any); m == nil || m["errors"] != nil || m["data"] == nil {
			return 0, fmt.Errorf("not a data answer: %.300s", x.raw)
		}
	}
	nodes := 0
	if err := sameValue("", a, b, &nodes); err != nil {
		return 0, err
	}
	return nodes, nil
}

func sameValue(path string, a, b any, nodes *int) error {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: object against %T", path, b)
		}
		ak, bk := keys(av), keys(bv)
		if !slices.Equal(ak, bk) {
			return fmt.Errorf("%s: fields %v against %v", path, ak, bk)
		}
		if strings.HasSuffix(path, ".node") {
			*nodes++
		}
		for _, k := range ak {
			if err := sameValue(path+"."+k, av[k], bv[k], nodes); err != nil {
				return err
			}
		}
		return nil
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return fmt.Errorf("%s: a list of %d against %v", path, len(av), b)
		}
		for i := range av {
			if err := sameValue(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], nodes); err != nil {
				return err
			}
		}
		return nil
	}
	if reflect.DeepEqual(a, b) || fmt.Sprint(a) == fmt.Sprint(b) && isNumber(a, b) || sameInstant(a, b) {
		return nil
	}
	return fmt.Errorf("%s: %v against %v", path, a, b)
}

// isNumber reports whether one of two equal-looking values is a JSON number.
func isNumber(a, b any) bool {
	_, an := a.(json.Number)
	_, bn := b.(json.Number)
	return an || bn
}

// sameInstant reports whether a and b are timestamps of the same instant.
func sameInstant(a, b any) bool {
	as, ok1 := a.(string)
	bs, ok2 := b.(string)
	if !ok1 || !ok2 {
		return false
	}
	at, err1 := time.Parse(time.RFC3339Nano, as)
	bt, err2 := time.Parse(time.RFC3339Nano, bs)
	return err1 == nil && err2 == nil && at.Equal(bt)
}

func keys(m map[string]any) []string {
	k := make([]string, 0, len(m))
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}
