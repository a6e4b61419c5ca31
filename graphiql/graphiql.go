// Package graphiql serves GraphiQL at /graphiql from files embedded in the
// binary: React and GraphiQL are vendored (static/vendor, with their
// licenses and versions; `make graphiql-vendor` refreshes them), so the page
// works without internet and tells no third party that it was opened.
package graphiql

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the page at /graphiql and its files under /graphiql/.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the folder is embedded at build time
	}
	files := http.StripPrefix("/graphiql/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/graphiql" {
			http.ServeFileFS(w, r, sub, "index.html")
			return
		}
		files.ServeHTTP(w, r)
	})
}
