/**
 * The API reference at /docs: Swagger UI (the maintained renderer, from the
 * installed swagger-ui-dist package, no CDN) over /openapi.json. Operations are
 * grouped by resource (the route group is the OpenAPI tag), with request and
 * response schemas, generated examples, and "Authorize" + "Try it out" to call
 * the API with an API key or session token.
 */
export const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Support Desk API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  persistAuthorization: true,
  tryItOutEnabled: false,
});
</script></body></html>`;

/** The renderer's files, served beside the page from the installed package. */
export const DOCS_ASSETS = { '/docs/swagger-ui.css': 'text/css; charset=utf-8', '/docs/swagger-ui-bundle.js': 'text/javascript; charset=utf-8' } as const;
