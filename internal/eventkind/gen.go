//go:build ignore

// gen writes the files derived from the table of event kinds (kinds.txt):
// the Go constants and the feed's lists, the GraphQL enum, the dashboard's
// kinds and docs/event-kinds.md. Run it from the repository root before
// gqlgen, which reads the enum: `make generate`.
package main

import (
	"log"
	"os"
	"path/filepath"

	"sessiongraph/internal/eventkind"
)

func main() {
	kinds, err := eventkind.Table()
	if err != nil {
		log.Fatal(err)
	}
	files, err := eventkind.Files(kinds)
	if err != nil {
		log.Fatal(err)
	}
	for path, content := range files {
		if err := os.WriteFile(filepath.FromSlash(path), content, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
