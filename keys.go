package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/access"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

const keysUsage = `usage:
  sessiongraph keys create -name NAME -role ADMIN|CLIENT|READER [-tenant TENANT]
  sessiongraph keys list
  sessiongraph keys revoke ID
each against DATABASE_URL (or -database-url), or with -dev this checkout's
development database. create prints the new key alone on stdout, once.`

// keysCommand manages API keys on the configured database: how an operator
// makes the first key of a database, or replaces a lost admin key.
func keysCommand(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, keysUsage)
		return 2
	}
	verb := args[0]
	var in access.NewKey
	var role string
	s, rest, err := config.Load("sessiongraph keys "+verb, args[1:], env, stderr, func(fs *flag.FlagSet) {
		if verb == "create" {
			fs.StringVar(&in.Name, "name", "", "what the key is for, so it can be told apart and revoked later")
			fs.StringVar(&role, "role", "", "ADMIN, CLIENT or READER")
			fs.StringVar(&in.Tenant, "tenant", "", "the tenant of a CLIENT or READER key")
		}
	})
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, keysUsage)
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "sessiongraph keys:", err)
		return 2
	case verb != "create" && verb != "list" && verb != "revoke":
		fmt.Fprintf(stderr, "sessiongraph keys: unknown command %q\n%s\n", verb, keysUsage)
		return 2
	case verb == "revoke" && len(rest) != 1, verb != "revoke" && len(rest) != 0:
		fmt.Fprintln(stderr, keysUsage)
		return 2
	}
	in.Role = apikey.Role(strings.ToUpper(role))

	cfg, release, ok := commandDatabase(ctx, "sessiongraph keys", s, stderr)
	if !ok {
		return 2
	}
	defer release()
	keys, err := app.OpenKeyAdmin(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph keys:", err)
		return 1
	}
	defer keys.Close()

	switch verb {
	case "create":
		key, row, err := keys.Create(ctx, in)
		if err != nil {
			fmt.Fprintf(stderr, "sessiongraph keys create: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "created %s key %q (id %s); it is shown this once, only its hash is stored\n", row.Role, row.Name, row.ID)
		fmt.Fprintln(stdout, key)
	case "list":
		rows, err := keys.List(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "sessiongraph keys list: %v\n", err)
			return 1
		}
		printKeys(stdout, rows)
	case "revoke":
		row, err := keys.Revoke(ctx, rest[0])
		if err != nil {
			fmt.Fprintf(stderr, "sessiongraph keys revoke: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "revoked %s key %q (id %s)\n", row.Role, row.Name, row.ID)
	}
	return 0
}

// printKeys writes one aligned line per key; never the key itself, which
// is not stored, only the prefix that tells keys apart.
func printKeys(w io.Writer, rows []*ent.APIKey) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tTENANT\tPREFIX\tCREATED\tLAST USED\tREVOKED")
	for _, k := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, terminalSafe(k.Name), k.Role, orDash(terminalSafe(k.Tenant)), k.Prefix,
			k.CreatedAt.UTC().Format(time.RFC3339), timeOrDash(k.LastUsedAt), timeOrDash(k.RevokedAt))
	}
	tw.Flush()
}

// keysCreateHint is the command that makes another admin key on the
// database the server uses: in a checkout (-dev), through go run.
func keysCreateHint(devDatabase bool) string {
	if devDatabase {
		return "go run . keys create -dev -role ADMIN -name <who it is for>"
	}
	return "sessiongraph keys create -role ADMIN -name <who it is for> (with the same DATABASE_URL)"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
