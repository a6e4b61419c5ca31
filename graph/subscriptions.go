package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/config"
)

// subscriptionCounts counts the live subscriptions of this replica and
// admits a new one only under every cap.
type subscriptionCounts struct {
	limits config.SubscriptionLimits

	mu      sync.Mutex
	replica int
	byKey   map[uuid.UUID]int
}

// socketSubscriptions counts one WebSocket's subscriptions (under
// subscriptionCounts.mu).
type socketSubscriptions struct{ n int }

type socketKey struct{}

func newSubscriptionCounts(limits config.SubscriptionLimits) *subscriptionCounts {
	return &subscriptionCounts{limits: limits, byKey: map[uuid.UUID]int{}}
}

// onSocket marks a WebSocket connection's context: its operations are
// admitted by the transport (admit, through wsproto's Admit) and counted
// against the socket too.
func onSocket(ctx context.Context) context.Context {
	return context.WithValue(ctx, socketKey{}, &socketSubscriptions{})
}

// admit counts a subscription that starts in ctx, or refuses it with
// SUBSCRIPTION_LIMIT; release uncounts it. Queries and mutations are not
// counted.
func (c *subscriptionCounts) admit(ctx context.Context) (release func(), err error) {
	if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Operation != ast.Subscription {
		return func() {}, nil
	}
	socket, _ := ctx.Value(socketKey{}).(*socketSubscriptions)
	p, keyed := access.FromContext(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case socket != nil && socket.n >= c.limits.PerSocket:
		return nil, apperr.New(apperr.SubscriptionLimit,
			"this WebSocket holds %d subscriptions, the most one socket may (setting %s): complete one first, or open another socket",
			socket.n, config.FlagSubscriptionsPerSocket)
	case keyed && c.byKey[p.KeyID] >= c.limits.PerKey:
		return nil, apperr.New(apperr.SubscriptionLimit,
			"this API key holds %d subscriptions on this server, the most one key may (setting %s): complete some first",
			c.byKey[p.KeyID], config.FlagSubscriptionsPerKey)
	case c.replica >= c.limits.PerReplica:
		return nil, apperr.New(apperr.SubscriptionLimit,
			"this server holds %d subscriptions, the most it may (setting %s): try again later",
			c.replica, config.FlagSubscriptionsPerReplica)
	}
	c.replica++
	if keyed {
		c.byKey[p.KeyID]++
	}
	if socket != nil {
		socket.n++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.replica--
			if keyed {
				if c.byKey[p.KeyID]--; c.byKey[p.KeyID] == 0 {
					delete(c.byKey, p.KeyID)
				}
			}
			if socket != nil {
				socket.n--
			}
		})
	}, nil
}
