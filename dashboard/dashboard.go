// Package dashboard embeds the admin dashboard's static files, served at /
// by the same binary. The dashboard talks only to the public GraphQL API.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the dashboard's files.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the folder is embedded at build time
	}
	return http.FileServerFS(sub)
}
