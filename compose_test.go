package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// compose.yaml, read as Compose reads it: the server is published on the
// loopback interface only (not to the network the Docker host is on), and
// comes back after a crash or a restart of the daemon.
func TestComposePublishesOnLoopbackAndRestarts(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Image   string   `yaml:"image"`
			Ports   []string `yaml:"ports"`
			Restart string   `yaml:"restart"`
		} `yaml:"services"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	require.NoError(t, dec.Decode(&compose))
	server, ok := compose.Services["sessiongraph"]
	require.True(t, ok, "compose.yaml has no sessiongraph service")
	require.Equal(t, "sessiongraph:dev", server.Image)
	require.Equal(t, []string{"127.0.0.1:8080:8080"}, server.Ports)
	require.Equal(t, "unless-stopped", server.Restart)
	require.Empty(t, compose.Services["postgres"].Ports, "PostgreSQL is not published")
}
