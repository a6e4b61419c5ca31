// GraphiQL on this server's /graphql. Every request needs an API key: the
// headers tab starts with the key the dashboard signed in with in this
// browser tab (sessionStorage), or a placeholder to replace. Headers are
// not persisted, so a key never lands in localStorage.
const dashboardKey = sessionStorage.getItem('sessiongraph.apiKey');
const headers = JSON.stringify({ Authorization: `Bearer ${dashboardKey || '<your API key>'}` }, null, 2);

const defaultQuery = `# Your API key goes in Headers, below. Run: Ctrl-Enter.
{
  viewer {
    name
    role
    tenant
  }
}
`;

const fetcher = GraphiQL.createFetcher({ url: new URL('/graphql', location.href).toString() });
ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, {
    fetcher,
    defaultQuery,
    defaultHeaders: headers,
    headers,
    shouldPersistHeaders: false,
    defaultEditorToolsVisibility: 'headers',
  }),
);
