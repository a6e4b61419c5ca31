package wsproto_test

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/graph/wsproto"
)

// A client that sends its first frame in the same write as the upgrade
// request leaves that frame in net/http's read buffer at the hijack; the
// transport's small buffers must carry it over, byte for byte.
func TestFirstFrameSentWithTheHandshakeIsNotLost(t *testing.T) {
	_, raw := serve(t, &wsproto.Transport{})
	u, err := url.Parse(raw)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(readTimeout)))

	host, path := u.Host, u.Path
	if path == "" {
		path = "/"
	}
	request := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n",
		path, host, base64.StdEncoding.EncodeToString([]byte("0123456789abcdef")))
	_, err = conn.Write(append([]byte(request), maskedText(`{"type":"connection_init"}`)...))
	require.NoError(t, err)

	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
	header := make([]byte, 2)
	_, err = io.ReadFull(r, header)
	require.NoError(t, err)
	require.Equal(t, byte(0x81), header[0], "a final text frame")
	payload := make([]byte, header[1]&0x7f)
	_, err = io.ReadFull(r, payload)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"connection_ack"}`, string(payload))
}

// maskedText is a client's final text frame (RFC 6455: clients mask).
func maskedText(s string) []byte {
	key := []byte{1, 2, 3, 4}
	frame := []byte{0x81, 0x80 | byte(len(s))}
	frame = append(frame, key...)
	for i := range len(s) {
		frame = append(frame, s[i]^key[i%4])
	}
	return frame
}
