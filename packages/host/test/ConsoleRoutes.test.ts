import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { consoleRoutes } from "../src/ConsoleRoutes.js"
import { makeRouter, type RouteResponse } from "../src/Router.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A console build in a temporary folder, with a secret beside it that must never be served. */
const makeDist = () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-console-"))
  dirs.push(root)
  fs.writeFileSync(path.join(root, "secret.txt"), "outside")
  const dist = path.join(root, "dist")
  fs.mkdirSync(path.join(dist, "assets"), { recursive: true })
  fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>console</title>")
  fs.writeFileSync(path.join(dist, "assets/index-abc123.js"), "console.log(1)")
  fs.writeFileSync(path.join(dist, "assets/index-abc123.css"), "body{}")
  fs.writeFileSync(path.join(dist, "assets/logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
  fs.writeFileSync(path.join(dist, ".env"), "SECRET=1")
  fs.symlinkSync(path.join(root, "secret.txt"), path.join(dist, "assets/link.txt"))
  return dist
}

const get = (routes: ReturnType<typeof consoleRoutes>, urlPath: string): RouteResponse | string => {
  const match = makeRouter(routes).match("GET", urlPath)
  if (match._tag !== "Found") return match._tag
  return Effect.runSync(
    match.route.handler({
      method: "GET",
      path: urlPath,
      query: "",
      headers: {},
      params: match.params,
      body: new Uint8Array(0),
      remoteAddress: "127.0.0.1"
    })
  )
}

const statusAndText = (answer: RouteResponse | string) =>
  typeof answer === "string" ? answer : { status: answer.status, text: answer.text }

describe("ConsoleRoutes", () => {
  it("serves the page at /console and /console/, revalidated, with its content security policy", () => {
    const routes = consoleRoutes(makeDist())
    for (const at of ["/console", "/console/"]) {
      const answer = get(routes, at)
      assert(typeof answer !== "string")
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.text, "<!doctype html><title>console</title>")
      assert.strictEqual(answer.headers?.["content-type"], "text/html; charset=utf-8")
      assert.strictEqual(answer.headers?.["cache-control"], "no-cache")
      assert.match(answer.headers?.["content-security-policy"] ?? "", /default-src 'self'/)
    }
  })

  it("serves hashed assets with their content type, cached for a year", () => {
    const routes = consoleRoutes(makeDist())
    const js = get(routes, "/console/assets/index-abc123.js")
    const css = get(routes, "/console/assets/index-abc123.css")
    assert(typeof js !== "string" && typeof css !== "string")
    assert.deepStrictEqual(statusAndText(js), { status: 200, text: "console.log(1)" })
    assert.strictEqual(js.headers?.["content-type"], "text/javascript; charset=utf-8")
    assert.strictEqual(js.headers?.["cache-control"], "public, max-age=31536000, immutable")
    assert.strictEqual(js.headers?.["x-content-type-options"], "nosniff")
    assert.strictEqual(css.headers?.["content-type"], "text/css; charset=utf-8")
  })

  it("answers the page for an app path without an extension, 404 for a missing file", () => {
    const routes = consoleRoutes(makeDist())
    assert.strictEqual(
      (get(routes, "/console/taker/42") as RouteResponse).text,
      "<!doctype html><title>console</title>"
    )
    // The service's own 404 body, as for any unknown path (not a text page of its own).
    const missing = get(routes, "/console/assets/missing.js") as RouteResponse
    assert.deepStrictEqual(
      { status: missing.status, body: missing.body, text: missing.text },
      {
        status: 404,
        body: { code: 404, message: "not found" },
        text: undefined
      }
    )
  })

  it("never leaves the folder: dot segments, encoded slashes, hidden files, symlinks, binaries", () => {
    const routes = consoleRoutes(makeDist())
    for (const at of [
      "/console/..%2Fsecret.txt",
      "/console/%2e%2e/secret.txt",
      "/console/assets/..%2F..%2Fsecret.txt",
      "/console/.env",
      "/console/assets/link.txt",
      "/console/assets/logo.png",
      "/console/%2E%2E%2F%2E%2E%2Fsecret.txt"
    ]) {
      const answer = get(routes, at)
      const status = typeof answer === "string" ? answer : answer.status
      assert.oneOf(status, [404, "NotFound"], at)
    }
    // Deeper than any route: the router's own 404.
    assert.strictEqual(get(routes, "/console/a/b/c/d"), "NotFound")
  })

  it("answers 503 with the build command until the folder is built, then serves it without a restart", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "rfq-console-"))
    dirs.push(root)
    const dist = path.join(root, "dist")
    const routes = consoleRoutes(dist)
    const before = get(routes, "/console")
    assert(typeof before !== "string")
    assert.strictEqual(before.status, 503)
    assert.match(before.text ?? "", /npm run build/)
    fs.mkdirSync(dist)
    fs.writeFileSync(path.join(dist, "index.html"), "built")
    assert.deepStrictEqual(statusAndText(get(routes, "/console")), { status: 200, text: "built" })
  })
})
