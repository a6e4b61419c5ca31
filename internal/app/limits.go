package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"sessiongraph/internal/apperr"
)

// limitBody bounds a request before anything reads it: a POST's body over
// MaxBodyBytes is refused with 413, and where oneOperation an array of
// operations (batching) with 400; it reports whether the request goes on,
// its body then read whole.
func (a *App) limitBody(w http.ResponseWriter, r *http.Request, oneOperation bool) bool {
	if r.Method != http.MethodPost {
		return true
	}
	body, err := a.readBody(w, r)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeError(w, http.StatusRequestTimeout, apperr.Timeout,
			fmt.Sprintf("the request body did not arrive within %s", a.cfg.ReadTimeout))
		return false
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, apperr.RequestTooLarge,
			fmt.Sprintf("the request body is over %d bytes; send less at once", a.cfg.MaxBodyBytes))
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, apperr.BadUserInput, "the request body could not be read")
		return false
	case oneOperation && bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")):
		writeError(w, http.StatusBadRequest, apperr.BatchingDisabled,
			"batched operations (a JSON array) are not accepted: send one operation per request")
		return false
	}
	whole := &wholeBody{whole: body}
	whole.Reset(body)
	r.Body = whole
	return true
}

// readBody reads a POST's body, up to MaxBodyBytes, within ReadTimeout:
// http.Server's ReadHeaderTimeout ends at the headers, and a body sent a
// byte at a time held its connection (and goroutine) for as long as its
// sender liked, before any key was checked.
func (a *App) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(a.cfg.ReadTimeout)) == nil
	body, err := readAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes), min(r.ContentLength, a.cfg.MaxBodyBytes))
	if err == nil && deadline {
		// Only once the body is whole: the server reads what is left of an
		// unread one after the answer, and must not wait for it forever.
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, err
}

// readAll is io.ReadAll into a buffer of the size the body says it has
// (size, when positive), so that a body of the size it says is one
// allocation of its size rather than io.ReadAll's 512 bytes and up.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1) // one more, to read the end of the body
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// isStream reports a subscription request: a WebSocket upgrade or SSE.
func isStream(r *http.Request) bool {
	return isWebSocket(r) ||
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// writeError answers with a GraphQL error response.
func writeError(w http.ResponseWriter, status int, code apperr.Code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []map[string]any{{"message": message, "extensions": map[string]any{"code": code}}},
	})
}

// wholeBody is a request body read whole: a reader of it, which also hands
// what is left of it to a transport (graph's) without another copy.
type wholeBody struct {
	bytes.Reader
	whole []byte
}

// Close implements io.Closer.
func (*wholeBody) Close() error { return nil }

// Unread returns what is left to read, without copying it.
func (b *wholeBody) Unread() []byte { return b.whole[len(b.whole)-b.Len():] }
