# sessiongraph: `make run` serves, `make test` proves it. Both find or start
# PostgreSQL by themselves (see README.md).
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: run test test-transports test-citus generate check-generated migration migration-hash lint fuzz bench bench-growth image compare-postgraphile

# make load (cmd/loadgen), and the dashboard's vendored files and screenshots.
-include load.mk dashboard/vendor.mk graphiql/vendor.mk

## run: serve on 127.0.0.1:8080 with this checkout's development database (-dev); the
## first run prints an admin API key, once
run:
	$(GO) run . -dev -introspection -log-format text -bootstrap-admin-key

## test: the whole suite against a real PostgreSQL (DATABASE_URL, else 127.0.0.1:5432 when it lets
## us in, else the private cluster under .data/postgres). A test binary that runs past TEST_TIMEOUT
## is stopped with every goroutine's stack, well inside CI's budget. The outage, slow-subscriber
## and PostgreSQL-restart tests run over TCP and over a Unix socket whichever DATABASE_URL names.
## Four package binaries run at once (go's default is one per core): the slow ones wait on npm, PyPI,
## Chromium and PostgreSQL's flushes much of the time, and overlapped they took the suite from 15:31
## to 10:37 on 2 cores at load 9-15 (docs/testing.md).
TEST_TIMEOUT ?= 15m
TEST_PARALLEL ?= 4
test:
	$(GO) test -race -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) ./...

## test-transports: TRANSPORT_PACKAGES (default every package) twice against a PostgreSQL this
## target starts itself (.data/transports): over TCP on 127.0.0.1 with a password, then over a
## Unix socket (see docs/testing.md)
TRANSPORT_PACKAGES ?= ./...
test-transports:
	@mkdir -p .data && $(GO) run ./internal/testdb/transports > .data/transports.urls
	@while read -r transport url; do \
		echo "== DATABASE_URL over $$transport"; \
		DATABASE_URL="$$url" $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TRANSPORT_PACKAGES) || exit 1; \
	done < .data/transports.urls

## image: the container image (static binary, non-root, no shell) as sessiongraph-image.tar, without a
## Docker daemon; docker load -i sessiongraph-image.tar (docs/image.md). IMAGE_TAG names it.
IMAGE_TAG ?= sessiongraph:dev
image:
	$(GO) run ./cmd/image -o sessiongraph-image.tar -tag $(IMAGE_TAG)

## test-citus: the API's behaviour tests on a Citus cluster named by CITUS_URL (its coordinator,
## postgres://user@host:port/postgres, workers added with citus_add_node): every database is made on
## every node and distributed by docs/scale-out.md's statements as printed. Not part of make test.
CITUS_SUITE := registry_flow registry_errors turn_lifecycle context receipts live lifecycle session registry_concurrency \
	access pagination steps artifacts revocation agent_loop shards_citus
CITUS_TESTS = $(shell sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' $(CITUS_SUITE:%=graph/%_test.go) | paste -sd'|')
test-citus:
	@test -n "$(CITUS_URL)" || { echo "make test-citus needs a Citus cluster: set CITUS_URL to its coordinator" \
		"(postgres://user@host:port/postgres) with its workers added by citus_add_node (docs/scale-out.md)" >&2; exit 2; }
	TESTDB_CITUS_URL="$(CITUS_URL)" $(GO) test -tags citus -count=1 -timeout 30m ./internal/store/ ./internal/events/
	TESTDB_CITUS_URL="$(CITUS_URL)" $(GO) test -tags citus -count=1 -timeout 30m -run '^($(CITUS_TESTS))$$' ./graph/

## generate: what derives from the table of event kinds (internal/eventkind/kinds.txt), ent (and
## graph/schema/ent.graphql), then gqlgen, both with their templates patched by patches/ (apply.sh
## applies them to the pinned modules' templates; generate fails when one no longer applies), then the TypeScript
## client's typed operations from the schema (npm ci on first use)
EVENTKIND_FILES := internal/engine/eventkinds_gen.go internal/store/eventkinds_gen.go \
	dashboard/static/js/eventkinds.js docs/event-kinds.md
generate:
	$(GO) run ./internal/eventkind/gen.go
	@patched=$$(mktemp -d) && trap 'rm -rf "$$patched"' EXIT && patches/apply.sh "$$patched" && \
	echo "$(GO) run -mod=mod -modfile=<go.mod with the patched modules> ./ent/entc.go" && \
	$(GO) run -mod=mod -modfile="$$patched/go.mod" ./ent/entc.go && \
	echo "$(GO) run -mod=mod -modfile=<go.mod with the patched modules> github.com/99designs/gqlgen generate" && \
	$(GO) run -mod=mod -modfile="$$patched/go.mod" github.com/99designs/gqlgen generate
	cd clients/typescript && { test -d node_modules || npm ci --no-audit --no-fund; } && npm run --silent generate

## check-generated: fail when committed generated code differs from a fresh run, or a patch of
## patches/ no longer applies to the pinned module (generate fails then)
check-generated: generate
	@git diff --exit-code --stat -- ent graph go.mod go.sum clients/typescript/src/generated $(EVENTKIND_FILES) || \
		(echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1)
	@test -z "$$(git status --porcelain --untracked-files=all -- ent graph clients/typescript/src/generated $(EVENTKIND_FILES))" || \
		(git status --porcelain -- ent graph clients/typescript/src/generated $(EVENTKIND_FILES); echo "generate made untracked files: commit them" >&2; exit 1)

## migration: write the next migration from the ent schema (NAME=what_changed)
migration:
	@test -n "$(NAME)" || (echo "usage: make migration NAME=what_changed" >&2; exit 2)
	$(GO) run -mod=mod ./ent/migrate/main.go $(NAME)

## migration-hash: rewrite migrations/atlas.sum after writing SQL by hand
migration-hash:
	$(GO) run -mod=mod ./ent/migrate/main.go --hash

## lint: formatting and vet
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed" >&2; exit 1)
	$(GO) vet ./...

## fuzz: each fuzz target for FUZZTIME (default 20s); seeds in testdata/fuzz run with every make test.
## Then the hostile walk of every schema field with HOSTILE_VARIANTS argument sets each, from a random
## seed (it prints HOSTILE_SEED=n: rerun with that to replay a failure); make test walks 12 from seed 13.
FUZZTIME ?= 20s
HOSTILE_VARIANTS ?= 200
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzReadRecords$$' -fuzztime $(FUZZTIME) ./internal/registry/
	$(GO) test -run '^$$' -fuzz '^FuzzArtifactContent$$' -fuzztime $(FUZZTIME) ./internal/registry/
	$(GO) test -run '^$$' -fuzz '^FuzzQueryText$$' -fuzztime $(FUZZTIME) ./graph/
	HOSTILE_SEED=$${HOSTILE_SEED:-random} HOSTILE_VARIANTS=$(HOSTILE_VARIANTS) \
		$(GO) test -run '^TestEveryFieldSurvivesHostileArguments$$' -count=1 -v ./graph/

## bench-growth: the nested page at 200 and at 10,000 sessions, this checkout against BASE (a commit) in
## one interleaved run, medians and ratios as a table (bench/page-growth.sh; ROUNDS, BENCHTIME)
ROUNDS ?= 5
BENCHTIME ?= 300x
bench-growth:
	@test -n "$(BASE)" || (echo "usage: make bench-growth BASE=<commit>" >&2; exit 2)
	bench/page-growth.sh $(BASE) $(ROUNDS) $(BENCHTIME)

## bench: every benchmark, against a real PostgreSQL (the dashboard's, in Chromium, 5 visits per size)
bench:
	$(GO) test -run '^$$' -bench . -benchtime 200x -benchmem -count=1 $$($(GO) list ./... | grep -v /dashboard)
	$(GO) test -run '^$$' -bench Cockpit -benchtime 5x -count=1 ./dashboard/

## compare-postgraphile: sessiongraph against PostGraphile 5.1.5 (npm ci on first use) on the same
## PostgreSQL (DATABASE_URL, on this host) and data, checked to answer alike, interleaved rounds at 1
## and 8 clients (bench/postgraphile/README.md; COMPARE_FLAGS adds flags). Not part of make test.
compare-postgraphile:
	$(GO) run ./bench/postgraphile $(COMPARE_FLAGS)
