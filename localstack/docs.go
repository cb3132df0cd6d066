package main

import (
	"bytes"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/loyalty-platform/platform/shared/contract/apidoc"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// The interactive API reference of the local stack: GET /docs is a Swagger
// UI page (the files of the pinned npm package swagger-ui-dist, installed
// in localstack/node_modules by the same `npm ci` as DynamoDB Local) that
// reads the document the operations function serves at /openapi.json. Its
// first server is the one the page was read from, so "Try it out" calls
// this stack; the page shows the seeded tenant's x-application-id and
// service key, enters the key under Authorize and sends the tenant header
// with every request that names none.

// swaggerUIDir is where npm installs swagger-ui-dist, next to the template.
func swaggerUIDir() string {
	return filepath.Join(filepath.Dir(sam.Path()), "localstack", "node_modules", "swagger-ui-dist")
}

// swaggerUIFiles are the files of the package the page loads.
var swaggerUIFiles = map[string]string{
	"swagger-ui.css":       "text/css; charset=utf-8",
	"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
	"favicon-32x32.png":    "image/png",
	"favicon-16x16.png":    "image/png",
}

// docsPage is the page at /docs. html/template escapes the values for
// their context (text, or JavaScript strings in the script).
var docsPage = template.Must(template.New("docs").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>Loyalty platform API: local reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
<style>
  body { margin: 0; font-family: sans-serif; }
  .local { padding: 16px 24px; background: #f3f6f9; border-bottom: 1px solid #d8dde3; }
  .local h1 { font-size: 20px; margin: 0 0 8px; }
  .local p { margin: 4px 0; }
  .local code { background: #fff; padding: 1px 4px; border: 1px solid #d8dde3; }
</style>
</head>
<body>
<section class="local">
  <h1>Loyalty platform API, running locally</h1>
  <p>"Try it out" calls this server, <code>{{.Base}}</code>. The seeded tenant:
    <code>x-application-id: {{.TenantID}}</code>, its service key
    <code>x-service-auth-token: {{.ServiceToken}}</code> (an admin of the tenant).</p>
  <p>The key is entered under Authorize; requests that set no <code>x-application-id</code> get
    <code>{{.TenantID}}</code>. Log out under Authorize to call as an anonymous client or with a
    session token. The document: <a href="/openapi.json">/openapi.json</a>.</p>
</section>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
<script>
window.onload = function () {
  var tenant = {{.TenantID}};
  var serviceToken = {{.ServiceToken}};
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    requestInterceptor: function (req) {
      if (!req.loadSpec && !req.headers["x-application-id"]) {
        req.headers["x-application-id"] = tenant;
      }
      return req;
    },
    onComplete: function () {
      window.ui.preauthorizeApiKey("x-service-auth-token", serviceToken);
    }
  });
};
</script>
</body>
</html>
`))

// docs serves GET /docs: the reference page.
func (l *local) docs(w http.ResponseWriter, r *http.Request) {
	if _, err := os.Stat(filepath.Join(swaggerUIDir(), "swagger-ui-bundle.js")); err != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "Swagger UI is not installed: run `make deps` (npm ci in localstack/).\n")
		return
	}
	var b bytes.Buffer
	err := docsPage.Execute(&b, map[string]string{
		"Base": apidoc.BaseURL(r), "TenantID": l.settings.TenantID, "ServiceToken": l.settings.ServiceToken,
	})
	if err != nil {
		http.Error(w, "the page could not be written", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

// docsFile serves GET /docs/{file}: one of the Swagger UI files the page
// loads.
func (l *local) docsFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ctype, ok := swaggerUIFiles[name]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"NOT_FOUND","message":"Not Found"}`)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFile(w, r, filepath.Join(swaggerUIDir(), name))
}
