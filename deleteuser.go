package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"sessiongraph/internal/access"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

const deleteUserUsage = `usage:
  sessiongraph delete-user -tenant TENANT -user USER_ID
deletes every session the user left in the tenant, live or expired, with all
their turns, refs, artifacts, step results, receipts and events, for a
privacy request (docs/operations-data.md). Against DATABASE_URL (or
-database-url), or with -dev this checkout's development database.`

// deleteUserCommand deletes a tenant's user's sessions.
func deleteUserCommand(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	var tenant, user string
	s, rest, err := config.Load("sessiongraph delete-user", args, env, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&tenant, "tenant", "", "the tenant of the user")
		fs.StringVar(&user, "user", "", "the userID the sessions were opened with")
	})
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, deleteUserUsage)
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "sessiongraph delete-user:", err)
		return 2
	case len(rest) > 0 || tenant == "" || user == "":
		fmt.Fprintln(stderr, deleteUserUsage)
		return 2
	}
	cfg, release, ok := commandDatabase(ctx, "sessiongraph delete-user", s, stderr)
	if !ok {
		return 2
	}
	defer release()
	ops, err := app.OpenOperations(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph delete-user:", err)
		return 1
	}
	defer ops.Close()
	n, err := ops.Engine.Sessions.DeleteUserData(access.System(ctx), tenant, user)
	if err != nil {
		fmt.Fprintln(stderr, "sessiongraph delete-user:", err)
		return 1
	}
	fmt.Fprintf(stdout, "deleted %d sessions of user %q in tenant %q\n", n, user, tenant)
	return 0
}
