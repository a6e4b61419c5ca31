// Package webpage serves the pages that hold an admin's API key (the
// dashboard, GraphiQL) with the headers that keep other sites and injected
// markup away from it, and their files without directory listings.
package webpage

import (
	"errors"
	"io/fs"
	"net/http"
	"path"
)

// Headers sets, on every response of next, a Content-Security-Policy of
// csp, and refuses framing (clickjacking), MIME sniffing and referrers: a
// page holding an API key runs only its own scripts and is never shown
// inside another site's frame.
func Headers(csp string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// NoListing is fsys whose directories cannot be opened unless they hold an
// index.html: http.FileServerFS answers 404 for them instead of listing
// their files.
func NoListing(fsys fs.FS) fs.FS { return noListing{fsys} }

type noListing struct{ fsys fs.FS }

func (n noListing) Open(name string) (fs.File, error) {
	f, err := n.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.IsDir() {
		return f, err
	}
	if _, err := fs.Stat(n.fsys, path.Join(name, "index.html")); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Join(fs.ErrNotExist, errors.New("directories are not listed"))}
	}
	return f, nil
}
