# Dashboard targets, included from the Makefile. Running the server needs
# neither: the vendored files are committed and embedded with go:embed.

.PHONY: dashboard-vendor dashboard-vendor-axe screenshots

GO ?= go

# The graphql-ws client the dashboard uses for subscriptions. The protocol
# tests (graph/wsproto/testdata/node) pin the same version against our server.
GRAPHQL_WS_VERSION ?= 5.16.2
GRAPHQL_WS_DIR := dashboard/static/vendor/graphql-ws

## dashboard-vendor: refresh the dashboard's vendored graphql-ws ESM build (needs npm)
dashboard-vendor:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		(cd "$$tmp" && npm pack --silent graphql-ws@$(GRAPHQL_WS_VERSION) >/dev/null && tar xzf graphql-ws-$(GRAPHQL_WS_VERSION).tgz) && \
		mkdir -p $(GRAPHQL_WS_DIR) && rm -f $(GRAPHQL_WS_DIR)/*.mjs && \
		cp "$$tmp"/package/lib/client.mjs "$$tmp"/package/lib/common.mjs "$$tmp"/package/lib/utils.mjs \
			"$$tmp"/package/LICENSE.md $(GRAPHQL_WS_DIR)/ && \
		echo $(GRAPHQL_WS_VERSION) > $(GRAPHQL_WS_DIR)/VERSION
	@echo "vendored graphql-ws $(GRAPHQL_WS_VERSION) into $(GRAPHQL_WS_DIR)"

## screenshots: rewrite docs/dashboard-list.png, docs/dashboard-session.png, docs/dashboard-receipts.png and docs/dashboard-user.png from the browser tests
screenshots:
	SCREENSHOTS=1 $(GO) test -count=1 -run '^(TestDashboard|TestDashboardShowsWhatTheModelSawAndHowItChanged|TestDashboardShowsAUserAcrossTheirSessions)$$' ./dashboard/

# axe-core, the accessibility engine the browser tests run on each page
# (dashboard/axe_test.go); test data only, never served.
AXE_CORE_VERSION ?= 4.14.1
AXE_CORE_DIR := dashboard/testdata/axe-core

## dashboard-vendor-axe: refresh the browser tests' vendored axe-core (needs npm)
dashboard-vendor-axe:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		(cd "$$tmp" && npm pack --silent axe-core@$(AXE_CORE_VERSION) >/dev/null && tar xzf axe-core-$(AXE_CORE_VERSION).tgz) && \
		mkdir -p $(AXE_CORE_DIR) && cp "$$tmp"/package/axe.min.js "$$tmp"/package/LICENSE $(AXE_CORE_DIR)/ && \
		echo $(AXE_CORE_VERSION) > $(AXE_CORE_DIR)/VERSION
	@echo "vendored axe-core $(AXE_CORE_VERSION) into $(AXE_CORE_DIR)"
