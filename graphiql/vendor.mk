# GraphiQL's vendored files, included from the Makefile. Serving /graphiql
# needs none of this: the files are committed and embedded with go:embed.

.PHONY: graphiql-vendor

# GraphiQL 3 is the last line with a self-contained browser build
# (graphiql.min.js bundles graphql-js); it needs React 18's UMD builds,
# which React 19 no longer ships.
GRAPHIQL_VERSION ?= 3.9.0
REACT_VERSION ?= 18.3.1
GRAPHIQL_VENDOR := graphiql/static/vendor

## graphiql-vendor: refresh the vendored GraphiQL and React builds behind /graphiql (needs npm)
graphiql-vendor:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		(cd "$$tmp" && for p in graphiql@$(GRAPHIQL_VERSION) react@$(REACT_VERSION) react-dom@$(REACT_VERSION); do \
			mkdir -p "$${p%@*}" && npm pack --silent "$$p" >/dev/null && tar xzf "$${p%@*}"-*.tgz -C "$${p%@*}" --strip-components 1; done) && \
		rm -rf $(GRAPHIQL_VENDOR) && mkdir -p $(GRAPHIQL_VENDOR)/graphiql $(GRAPHIQL_VENDOR)/react && \
		sed '/^\/\/# sourceMappingURL=/d' "$$tmp"/graphiql/graphiql.min.js > $(GRAPHIQL_VENDOR)/graphiql/graphiql.min.js && \
		cp "$$tmp"/graphiql/graphiql.min.css "$$tmp"/graphiql/LICENSE $(GRAPHIQL_VENDOR)/graphiql/ && \
		echo $(GRAPHIQL_VERSION) > $(GRAPHIQL_VENDOR)/graphiql/VERSION && \
		cp "$$tmp"/react/umd/react.production.min.js "$$tmp"/react-dom/umd/react-dom.production.min.js $(GRAPHIQL_VENDOR)/react/ && \
		cp "$$tmp"/react/LICENSE $(GRAPHIQL_VENDOR)/react/LICENSE && \
		echo "react $(REACT_VERSION), react-dom $(REACT_VERSION)" > $(GRAPHIQL_VENDOR)/react/VERSION
	@echo "vendored GraphiQL $(GRAPHIQL_VERSION) and React $(REACT_VERSION) into $(GRAPHIQL_VENDOR)"
