// Package dashboard embeds the admin dashboard's static files, served at /
// by the same binary. The dashboard talks only to the public GraphQL API.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"

	"sessiongraph/internal/webpage"
)

//go:embed static
var static embed.FS

// csp lets the dashboard load only its own files and talk only to its own
// server (connect-src 'self' covers same-host WebSockets).
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the dashboard's files, with the headers of a page that
// holds an API key; directories (js/, vendor/) are not listed.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the folder is embedded at build time
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(webpage.NoListing(sub)))
	// Browsers and tools ask for /favicon.ico whatever the page links:
	// it answers with the same small SVG.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		http.ServeFileFS(w, r, sub, "favicon.svg")
	})
	return webpage.Headers(csp, mux)
}
