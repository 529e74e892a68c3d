import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectAs, promise, TestHost, TestHostLive } from "../ws/hostHarness.js"

/**
 * The documents as a real host serves them (demo data, no token), and the AsyncAPI document's
 * methods against a real session: each one it publishes is a method the session knows (never
 * -32601), called by a viewer with empty params so that nothing changes.
 */

const fetchJson = (url: string) =>
  promise(async () => {
    const response = await fetch(url)
    return { status: response.status, headers: response.headers, body: (await response.json()) as any }
  })

layer(TestHostLive, { excludeTestServices: true, timeout: "120 seconds" })(
  "documents served by a host",
  (it) => {
    it.scoped("both documents need no token and name the host they were fetched from", () =>
      Effect.gen(function* () {
        const host = yield* TestHost
        const authority = new URL(host.url).host
        const openApi = yield* fetchJson(`${host.url}/v1/openapi.json`)
        assert.strictEqual(openApi.status, 200)
        assert.strictEqual(openApi.body.servers[0].url, `http://${authority}`)
        const asyncApi = yield* fetchJson(`${host.url}/v1/asyncapi.json`)
        assert.strictEqual(asyncApi.status, 200)
        assert.strictEqual(asyncApi.body.asyncapi, "3.0.0")
        assert.strictEqual(asyncApi.body.servers.session.host, authority)
      })
    )

    it.scoped("every method the AsyncAPI document publishes is known to a real session", () =>
      Effect.gen(function* () {
        const host = yield* TestHost
        const asyncApi = yield* fetchJson(`${host.url}/v1/asyncapi.json`)
        const methods = Object.values(
          asyncApi.body.operations as Record<string, { action: string; title: string }>
        )
          .filter((o) => o.action === "receive")
          .map((o) => o.title)
        assert.isAbove(methods.length, 20)
        const client = yield* connectAs(host.wsUrl, "demo-viewer")
        for (const method of methods) {
          // `auth` again with empty params is a refusal, not a change of user.
          const reply = yield* promise(() => client.call(method, {}))
          assert.notStrictEqual(reply.error?.code, -32601, `${method}: ${JSON.stringify(reply.error)}`)
        }
      })
    )
  }
)
