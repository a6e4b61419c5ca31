package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"

	"sessiongraph/internal/access"
	"sessiongraph/internal/app"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/config"
)

const transferUsage = `usage:
  sessiongraph export-session SESSION_ID > session.json
  sessiongraph import-session [-file session.json]   (default: standard input)
export writes one session, every row of it and its events, as a JSON
document; import writes it into another database at the same schema version
(docs/operations-data.md). Against DATABASE_URL (or -database-url), or with
-dev this checkout's development database.`

// exportSessionCommand writes a session as a JSON document on stdout.
func exportSessionCommand(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	return withOperations(ctx, "export-session", args, env, stderr, nil, func(ops *app.Operations, rest []string) error {
		if len(rest) != 1 {
			return errUsage
		}
		id, err := uuid.Parse(rest[0])
		if err != nil {
			return fmt.Errorf("%q is not a session id", rest[0])
		}
		x, err := ops.Engine.Transfer.ExportSession(access.System(ctx), id, ops.SchemaVersion)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(x)
	})
}

// importSessionCommand writes an exported session into the database.
func importSessionCommand(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	var file string
	flags := func(fs *flag.FlagSet) {
		fs.StringVar(&file, "file", "", "the exported document; standard input when empty")
	}
	return withOperations(ctx, "import-session", args, env, stderr, flags, func(ops *app.Operations, rest []string) error {
		if len(rest) != 0 {
			return errUsage
		}
		in := io.Reader(os.Stdin)
		if file != "" {
			f, err := os.Open(file)
			if err != nil {
				return err
			}
			defer f.Close()
			in = f
		}
		imported, err := ops.Engine.Transfer.ImportSession(access.System(ctx), in, ops.SchemaVersion)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "imported session %s: %d turns, %d refs, %d artifacts, %d events\n",
			imported.ID, imported.Rows["turns"], imported.Rows["refs"], imported.Rows["artifacts"], imported.Rows["events"])
		return nil
	})
}

var errUsage = errors.New("usage")

// withOperations loads the settings of command, opens the database and
// runs do; it answers the exit code: 2 for a usage or configuration error,
// 1 when do failed.
func withOperations(ctx context.Context, command string, args []string, env config.Lookup, stderr io.Writer,
	flags func(*flag.FlagSet), do func(*app.Operations, []string) error) int {
	s, rest, err := config.Load("sessiongraph "+command, args, env, stderr, flags)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, transferUsage)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "sessiongraph %s: %v\n", command, err)
		return 2
	}
	cfg, release, ok := commandDatabase(ctx, "sessiongraph "+command, s, stderr)
	if !ok {
		return 2
	}
	defer release()
	ops, err := app.OpenOperations(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sessiongraph %s: %v\n", command, err)
		return 1
	}
	defer ops.Close()
	switch err := do(ops, rest); {
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, transferUsage)
		return 2
	case err != nil:
		// An error a person can act on leads with its code, as the API
		// answers it.
		if code := apperr.CodeOf(err); code != "" {
			fmt.Fprintf(stderr, "sessiongraph %s: %s: %v\n", command, code, err)
			return 1
		}
		fmt.Fprintf(stderr, "sessiongraph %s: %v\n", command, err)
		return 1
	}
	return 0
}
