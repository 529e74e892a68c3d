import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { Effect } from "effect"
import { type Route, route } from "./Router.js"

/**
 * `GET /docs`: the human page of the API, Swagger UI (the `swagger-ui-dist` package) rendering
 * `/v1/openapi.json`. The two assets are read once, at start, from the installed package.
 */
export const docsRoutes = (): ReadonlyArray<Route<never>> => {
  const require = createRequire(import.meta.url)
  const dir = path.dirname(require.resolve("swagger-ui-dist/package.json"))
  const asset = (file: string) => readFileSync(path.join(dir, file), "utf8")
  const css = asset("swagger-ui.css")
  const js = asset("swagger-ui-bundle.js")
  const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>RFQ service API</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: "/v1/openapi.json", dom_id: "#ui" })</script></body>
</html>`
  const text = (body: string, contentType: string) =>
    Effect.succeed({ status: 200, body: null, text: body, headers: { "content-type": contentType } })
  return [
    route("GET", "/docs", () => text(page, "text/html; charset=utf-8")),
    route("GET", "/docs/swagger-ui.css", () => text(css, "text/css; charset=utf-8")),
    route("GET", "/docs/swagger-ui-bundle.js", () => text(js, "application/javascript; charset=utf-8"))
  ]
}
