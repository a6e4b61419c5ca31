package app_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// A client that sends its body a byte at a time (or not at all) is cut off
// at the read deadline, with or without a key: the server answers 408
// TIMEOUT and closes the connection. It used to wait as long as the client
// liked, holding the connection and its goroutine, before checking any key.
func TestASlowBodyIsCutOffAtTheReadDeadline(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.ReadTimeout = 300 * time.Millisecond })
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	for name, auth := range map[string]string{"no key": "", "a valid key": "Authorization: Bearer " + s.AdminKey + "\r\n"} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", u.Host)
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, "POST /graphql HTTP/1.1\r\nHost: "+u.Host+"\r\n"+auth+
				"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
			require.NoError(t, err)
			// The guard only keeps a broken server from hanging the test:
			// a server without a body deadline never answers within it.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "the server answers before the client sends the rest")
			assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
			body, _ := io.ReadAll(res.Body)
			assert.Contains(t, string(body), `"code":"TIMEOUT"`)
			_, err = conn.Read(make([]byte, 1))
			assert.True(t, errors.Is(err, io.EOF) || !errors.Is(err, os.ErrDeadlineExceeded), "the server closed the connection: %v", err)
		})
	}
}
