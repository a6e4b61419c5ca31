package graph_test

import (
	"fmt"
	"testing"

	"sessiongraph/internal/apitest"
)

// The growth benchmark: the nested page and the ids page on a database of
// 200 sessions and on one of 10,000, each session shaped as the nested
// page's (10 turns, 20 refs), ANALYZEd. What the page reads is the same 20
// sessions' 620 objects in both, so its cost should be the same: the
// ratio of the two is what the tables' growth costs.
// bench/page-growth.sh runs it on two commits and writes the medians.

// pageGrowthSizes are the session counts the growth benchmark compares.
var pageGrowthSizes = []int{200, 10000}

// BenchmarkPageGrowth serves the one-row nested page (20 sessions × 10
// turns + 20 refs) and sessions(first: 20){ id } at each size.
func BenchmarkPageGrowth(b *testing.B) {
	for _, page := range []struct {
		name, query string
		objects     int
	}{{"nested", sessionGraphOneRow, 620}, {"ids", sessionIDsPage, 20}} {
		for _, n := range pageGrowthSizes {
			b.Run(fmt.Sprintf("%s/sessions=%d", page.name, n), func(b *testing.B) {
				rec := &apitest.Recorder{}
				s := apitest.NewPages(b, n, apitest.Recording(rec))
				benchOneRowPage(b, s, rec, page.query, page.objects)
			})
		}
	}
}
