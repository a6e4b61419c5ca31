package main

import (
	"context"
	"time"
)

// sessionsPageOp is a frontend's session graph: a page of 20 sessions, the
// newest first, each with its first 5 turns and 10 refs.
const sessionsPageOp = `query SessionGraphPage($after: Cursor) {
  sessions(first: 20, after: $after, orderBy: {field: CREATED_AT, direction: DESC}) {
    pageInfo { hasNextPage endCursor }
    edges { node {
      id externalKey status currentTurn lastActiveAt
      turns(first: 5) { edges { node { number userMessage status startedAt } } }
      refs(first: 10) { edges { node { ref entityType label action turnLastReferenced } } }
    } }
  }
}`

// frontendPages is how deep a frontend pages before it starts again from
// the newest sessions, as a person scrolling a list does.
const frontendPages = 5

// frontend pages through the sessions list until ctx ends.
type frontend struct{ c *graphqlClient }

func (f *frontend) run(ctx context.Context) {
	var after any // nil: the first page
	pages := 0
	for ctx.Err() == nil {
		var page struct {
			Sessions struct {
				PageInfo struct {
					HasNextPage bool    `json:"hasNextPage"`
					EndCursor   *string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"sessions"`
		}
		if _, err := f.c.do(ctx, opSessionsPage, sessionsPageOp, map[string]any{"after": after}, &page); err != nil {
			if ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
			}
			after, pages = nil, 0
			continue
		}
		pages++
		info := page.Sessions.PageInfo
		if !info.HasNextPage || info.EndCursor == nil || pages == frontendPages {
			after, pages = nil, 0
			continue
		}
		after = *info.EndCursor
	}
}
