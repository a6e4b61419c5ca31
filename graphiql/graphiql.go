// Package graphiql serves GraphiQL at /graphiql from files embedded in the
// binary: React and GraphiQL are vendored (static/vendor, with their
// licenses and versions; `make graphiql-vendor` refreshes them), so the page
// works without internet and tells no third party that it was opened.
package graphiql

import (
	"embed"
	"io/fs"
	"net/http"

	"sessiongraph/internal/webpage"
)

//go:embed static
var static embed.FS

// csp lets GraphiQL run only its own (vendored) scripts and talk only to
// its own server; its editor writes style elements and attributes, so
// styles may be inline.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page at /graphiql and its files under /graphiql/,
// with the headers of a page that holds an API key; directories are not
// listed.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the folder is embedded at build time
	}
	files := http.StripPrefix("/graphiql/", http.FileServerFS(webpage.NoListing(sub)))
	return webpage.Headers(csp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/graphiql" {
			http.ServeFileFS(w, r, sub, "index.html")
			return
		}
		files.ServeHTTP(w, r)
	}))
}
