package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// opHeader names the operation a request performs, so the server side of
// the load generator can attribute its statements and CPU samples to it.
const opHeader = "X-Loadgen-Op"

// graphqlClient posts operations to /graphql the way any client does, with
// the admin key, and records each one's latency under its operation name.
type graphqlClient struct {
	url    string
	key    string
	http   *http.Client
	rec    *recorder
	errors *errorTally
}

// graphqlError is one entry of a response's errors.
type graphqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func (e graphqlError) Error() string {
	code, _ := e.Extensions["code"].(string)
	return fmt.Sprintf("%s: %s", code, e.Message)
}

// do runs one operation named op, decodes its data into out (when not nil)
// and returns its latency. A GraphQL error is an error: the load follows
// the happy path of an agent, so any error is a finding.
func (c *graphqlClient) do(ctx context.Context, op, query string, vars map[string]any, out any) (time.Duration, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set(opHeader, op)

	start := time.Now()
	res, err := c.http.Do(req)
	if err != nil {
		return 0, c.fail(op, err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if err != nil {
		return took, c.fail(op, err)
	}
	var decoded struct {
		Data   json.RawMessage `json:"data"`
		Errors []graphqlError  `json:"errors"`
	}
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return took, c.fail(op, fmt.Errorf("HTTP %d: %.200s", res.StatusCode, raw))
	}
	if len(decoded.Errors) > 0 {
		return took, c.fail(op, decoded.Errors[0])
	}
	c.rec.add(op, took)
	if out != nil {
		if err := json.Unmarshal(decoded.Data, out); err != nil {
			return took, c.fail(op, err)
		}
	}
	return took, nil
}

func (c *graphqlClient) fail(op string, err error) error {
	c.errors.add(op, err)
	return fmt.Errorf("%s: %w", op, err)
}

// errorTally counts failed operations by name and keeps the first few
// messages for the report.
type errorTally struct {
	mu     sync.Mutex
	counts map[string]int
	first  []string
}

func newErrorTally() *errorTally { return &errorTally{counts: map[string]int{}} }

func (t *errorTally) add(op string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[op]++
	if len(t.first) < 5 {
		t.first = append(t.first, fmt.Sprintf("%s: %v", op, err))
	}
}

// take returns the counts and first messages so far and starts afresh.
func (t *errorTally) take() (map[string]int, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	counts, first := t.counts, t.first
	t.counts, t.first = map[string]int{}, nil
	return counts, first
}
