import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { operations } from "../../src/Operations.js"
import { roomyWindow } from "../support/rateWindow.js"
import {
  callSpread,
  connect,
  connectAs,
  oauthToken,
  promise,
  quoteParams,
  rest,
  STRICT,
  TestHost,
  TestHostLive
} from "./hostHarness.js"

/**
 * The WebSocket endpoint on the real application (engine, auth, demo data) with real clients:
 * authentication both ways, every operation as a method, channels and their visibility, order and
 * seq, cancel-on-disconnect, the rate limit, timeouts and back-pressure.
 */

layer(TestHostLive, { excludeTestServices: true, timeout: "120 seconds" })(
  "WebSocket on the real host",
  (it) => {
    describe("authentication", () => {
      it.scoped("auth with client credentials answers an access token that works on REST", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const client = yield* connect(host.wsUrl)
          const result = yield* promise(() =>
            client.result("auth", { clientId: "demo-taker", clientSecret: "demo-taker-secret" })
          )
          assert.strictEqual(result.success, true)
          assert.isString(result.token)
          assert.strictEqual((yield* rest(host.url, result.token, "GET", "/v1/exchange/maker")).status, 200)
          const wrong = yield* promise(() =>
            client.call("auth", { clientId: "demo-taker", clientSecret: "wrong" })
          )
          assert.deepStrictEqual(wrong.error, {
            code: -32001,
            message: "invalid client ID",
            data: { status: 401, reason: [] }
          })
        })
      )

      it.scoped("auth with a token from /oauth/token; auth/refresh rotates its refresh token", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const issued = yield* oauthToken(host.url, "demo-maker-1")
          const client = yield* connect(host.wsUrl)
          assert.deepStrictEqual(
            yield* promise(() => client.result("auth", { token: issued.access_token })),
            {
              success: true
            }
          )
          const refreshed = yield* promise(() =>
            client.result("auth/refresh", { refreshToken: issued.refresh_token })
          )
          assert.strictEqual(refreshed.success, true)
          assert.isString(refreshed.token)
          assert.isString(refreshed.refreshToken)
          assert.notStrictEqual(refreshed.refreshToken, issued.refresh_token)
          assert.isAbove(refreshed.expiresAt, Date.now())
          assert.strictEqual((yield* rest(host.url, refreshed.token, "GET", "/v1/rfq/quotes")).status, 200)
          // One-time refresh tokens: the used one is refused (and revokes its family).
          const replay = yield* promise(() =>
            client.call("auth/refresh", { refreshToken: issued.refresh_token })
          )
          assert.deepStrictEqual(replay.error.code, -32001)
          assert.deepStrictEqual(replay.error.message, "authorisation token expired or not valid")
        })
      )

      it.scoped(
        "a token that is not valid is -32001 with the spec's message; the session stays unauthenticated",
        () =>
          Effect.gen(function* () {
            const host = yield* TestHost
            const client = yield* connect(host.wsUrl)
            const reply = yield* promise(() => client.call("auth", { token: "not-a-jwt" }))
            assert.strictEqual(reply.error.code, -32001)
            assert.strictEqual(reply.error.message, "authorisation token expired or not valid")
            const call = yield* promise(() => client.call("v1/exchange/maker"))
            assert.deepStrictEqual(call.error, {
              code: -32001,
              message: "authentication required",
              data: { status: 401, reason: [] }
            })
          })
      )

      it.scoped("the session ends with its token (4001) unless auth/refresh extends it", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const expiring = yield* connect(host.wsUrl)
          const extended = yield* connect(host.wsUrl)
          const token = yield* host.shortLivedToken("demo-maker-2", 2)
          yield* promise(() => expiring.result("auth", { token }))
          yield* promise(() => extended.result("auth", { token }))
          const longer = yield* oauthToken(host.url, "demo-maker-2")
          yield* promise(() => extended.result("auth/refresh", { token: longer.access_token }))
          assert.deepStrictEqual(yield* promise(() => expiring.closed), {
            code: 4001,
            reason: "token expired"
          })
          assert.isDefined((yield* promise(() => extended.call("v1/exchange/maker"))).result)
        })
      )
    })

    describe("protocol", () => {
      it.scoped("parse errors, invalid requests, batches and notifications on the real endpoint", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const client = yield* connectAs(host.wsUrl, "demo-maker-1")
          client.send("[{]")
          assert.deepStrictEqual(yield* promise(() => client.next()), {
            jsonrpc: "2.0",
            id: null,
            error: { code: -32700, message: "Parse error" }
          })
          client.send({ jsonrpc: "2.0", method: "v1/exchange/maker" })
          client.send([
            { jsonrpc: "2.0", id: 1, method: "v1/exchange/maker" },
            { jsonrpc: "2.0", method: "heartbeat" },
            { jsonrpc: "2.0", id: 2, method: "v1/rfq/get", params: { id: "abc" } },
            { jsonrpc: "2.0", id: 3 },
            { jsonrpc: "2.0", id: 4, method: "v1/no-such-method" }
          ])
          const replies = yield* promise(() => client.next())
          assert.deepStrictEqual(
            replies.map((r: any) => [r.id, r.method, r.error?.code ?? "result"]),
            [
              [1, "v1/exchange/maker", "result"],
              [2, "v1/rfq/get", -32602],
              [3, undefined, -32600],
              [4, "v1/no-such-method", -32601]
            ]
          )
          assert.deepStrictEqual(replies[0].result, yield* promise(() => client.result("v1/exchange/maker")))
        })
      )
    })

    describe("operations", () => {
      it.scoped("every operation of the shared table is a method with its REST access rule", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const viewer = yield* connectAs(host.wsUrl, "demo-viewer")
          for (const op of operations) {
            const reply = yield* promise(() => viewer.call(op.rpc, {}))
            assert.strictEqual(reply.method, op.rpc)
            if (op.access === "read") {
              assert.notInclude(
                [-32601, -32003, -32001],
                reply.error?.code,
                `${op.rpc}: ${JSON.stringify(reply)}`
              )
            } else {
              assert.deepStrictEqual(
                reply.error,
                { code: -32003, message: "insufficient permissions", data: { status: 403, reason: [] } },
                op.rpc
              )
            }
          }
        })
      )

      it.scoped("methods answer what REST answers, errors included", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const { access_token: taker } = yield* oauthToken(host.url, "demo-taker")
          const client = yield* connect(host.wsUrl)
          yield* promise(() => client.result("auth", { token: taker }))
          const { rfqId } = yield* promise(() => client.result("v1/rfq/create", callSpread(["maker-1"])))
          const same: ReadonlyArray<[string, unknown, string, string, unknown?]> = [
            ["v1/exchange/maker", {}, "GET", "/v1/exchange/maker"],
            ["v1/account/otc-counterparty", {}, "GET", "/v1/account/otc-counterparty"],
            ["v1/account/exchange-credentials", {}, "GET", "/v1/account/exchange-credentials"],
            [
              "v1/exchange/instruments",
              { exchange: "DBT", baseCurrency: "BTC", kind: "future" },
              "GET",
              "/v1/exchange/instruments?exchange=DBT&baseCurrency=BTC&kind=future"
            ],
            ["v1/rfq/quotes", { id: rfqId }, "GET", `/v1/rfq/${rfqId}/quote`],
            ["v1/rfq/get", { id: 999_999 }, "GET", "/v1/rfq/999999"],
            ["v1/rfq/cancel", {}, "POST", "/v1/rfq/cancel", {}],
            ["v1/rfq/list", { limit: "x" }, "GET", "/v1/rfq?limit=x"],
            ["v1/block-trade/bulk", { blockTrades: [] }, "POST", "/v1/block-trade/bulk", { blockTrades: [] }],
            ["v1/quote/create", { rfqId }, "POST", "/v1/rfq/quote", { rfqId }]
          ]
          for (const [method, params, verb, path, body] of same) {
            const viaRest = yield* rest(host.url, taker, verb, path, body)
            const reply = yield* promise(() => client.call(method, params))
            if (viaRest.status === 200) assert.deepStrictEqual(reply.result, viaRest.body, method)
            else {
              assert.deepStrictEqual(
                reply.error,
                {
                  code:
                    { 400: -32602, 401: -32001, 403: -32003, 404: -32004 }[viaRest.status as 400] ?? -32603,
                  message: viaRest.body.message,
                  data: { status: viaRest.status, reason: viaRest.body.reason ?? [] }
                },
                method
              )
            }
          }
          const got = yield* promise(() => client.result("v1/rfq/get", { id: rfqId }))
          assert.strictEqual(got.rfqId, rfqId)
          assert.strictEqual(got.role, "taker")
        })
      )

      it.scoped(
        "a maker runs its day over one socket: hear the RFQ, quote, requote, cancel, see the fill",
        () =>
          Effect.gen(function* () {
            const host = yield* TestHost
            const taker = yield* connectAs(host.wsUrl, "demo-taker")
            const maker = yield* connectAs(host.wsUrl, "demo-maker-1")
            yield* promise(() => maker.result("v1/subscribe", { channels: ["rfq.maker", "rfq_quote.maker"] }))
            yield* promise(() => taker.result("v1/subscribe", { channels: ["rfq.taker", "rfq_quote.taker"] }))
            const { rfqId } = yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-1"])))

            const heard = yield* promise(() => maker.notification((p) => p.data.rfqId === rfqId))
            assert.strictEqual(heard.channel, "rfq.maker")
            assert.strictEqual(heard.data.event, "created")
            assert.strictEqual(heard.data.role, "maker")
            assert.notProperty(heard.data, "label")

            const params = yield* quoteParams(maker, rfqId, "sell", "day-1")
            const { rfqQuoteId } = yield* promise(() => maker.result("v1/quote/create", params))
            const mine = yield* promise(() =>
              maker.notification((p) => p.channel === "rfq_quote.maker" && p.data.rfqQuoteId === rfqQuoteId)
            )
            assert.strictEqual(mine.data.event, "created")
            const received = yield* promise(() =>
              taker.notification((p) => p.channel === "rfq_quote.taker" && p.data.rfqQuoteId === rfqQuoteId)
            )
            assert.strictEqual(received.data.rfqId, rfqId)

            const updated = yield* promise(() =>
              maker.result("v1/quote/update", {
                label: "day-1",
                amount: params.amount,
                legs: params.legs,
                settlementOption: "DBT"
              })
            )
            assert.strictEqual(updated.rfqQuoteId, rfqQuoteId)
            assert.strictEqual(updated.label, "day-1")
            const deleted = yield* promise(() => maker.result("v1/quote/delete", { rfqQuoteId }))
            assert.isString(deleted.message)

            const again = yield* promise(() => maker.result("v1/quote/create", { ...params, label: "day-2" }))
            const trade = yield* promise(() => taker.result("v1/rfq/trade", { rfqQuoteId: again.rfqQuoteId }))
            assert.strictEqual(trade.rfqId, rfqId)
            const filled = yield* promise(() =>
              maker.notification(
                (p) => p.channel === "rfq.maker" && p.data.rfqId === rfqId && p.data.status === "filled"
              )
            )
            assert.strictEqual(filled.data.tradeAmount, params.amount)
            assert.strictEqual(filled.data.tradeDirection, "sell")
            const quotes = yield* promise(() => maker.result("v1/quote/list", { rfqId }))
            assert.isAbove(quotes.totalResults, 0)
          })
      )
    })

    describe("channels", () => {
      it.scoped("each recipient hears what REST shows it, and nothing of what it may not see", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const taker = yield* connectAs(host.wsUrl, "demo-taker")
          const maker1 = yield* connectAs(host.wsUrl, "demo-maker-1")
          const maker2 = yield* connectAs(host.wsUrl, "demo-maker-2")
          const maker3 = yield* connectAs(host.wsUrl, "demo-maker-3")
          const all = ["rfq.maker", "rfq.taker", "rfq_quote.maker", "rfq_quote.taker"]
          for (const c of [taker, maker1, maker2, maker3])
            yield* promise(() => c.result("v1/subscribe", { channels: all }))

          const first = yield* promise(() =>
            taker.result("v1/rfq/create", callSpread(["maker-1", "maker-2"]))
          )
          const params1 = yield* quoteParams(maker1, first.rfqId, "buy")
          const quote1 = yield* promise(() => maker1.result("v1/quote/create", params1))
          // A marker each client can see, published after everything above: whatever a client has
          // not heard of the first RFQ by the time the marker arrives, it will never hear.
          const marker = yield* promise(() =>
            taker.result("v1/rfq/create", callSpread(["maker-1", "maker-2", "maker-3"]))
          )
          const upTo = (client: typeof taker) =>
            promise(async () => {
              await client.notification((p) =>
                p.channel === "rfq.maker" || p.channel === "rfq.taker" ? p.data.rfqId === marker.rfqId : false
              )
              return client.notifications().filter((p) => p.data.rfqId === first.rfqId)
            })
          const seenBy3 = yield* upTo(maker3)
          assert.deepStrictEqual(seenBy3, [], "an uninvited maker hears nothing of the RFQ")
          const seenBy2 = yield* upTo(maker2)
          assert.deepStrictEqual(
            seenBy2.map((p) => [p.channel, p.data.event]),
            [["rfq.maker", "created"]],
            "maker-2 hears the RFQ but never maker-1's quote"
          )
          const seenBy1 = yield* upTo(maker1)
          assert.deepStrictEqual(
            seenBy1.map((p) => [p.channel, p.data.event]),
            [
              ["rfq.maker", "created"],
              ["rfq_quote.maker", "created"]
            ]
          )
          const seenByTaker = yield* upTo(taker)
          assert.deepStrictEqual(
            seenByTaker.map((p) => [p.channel, p.data.event]),
            [
              ["rfq.taker", "created"],
              ["rfq_quote.taker", "created"]
            ]
          )

          // The payloads are the REST renderings for each recipient.
          const takerView = seenByTaker[0].data
          const makerView = seenBy1[0].data
          assert.property(takerView, "label")
          assert.strictEqual(takerView.role, "taker")
          assert.notProperty(makerView, "label")
          assert.strictEqual(makerView.role, "maker")
          const makerQuote = seenBy1[1].data
          const ownList = yield* promise(() => maker1.result("v1/quote/list", { rfqId: first.rfqId }))
          const { event: _event, ...quoteAsNotified } = makerQuote
          assert.deepStrictEqual(quoteAsNotified, ownList.results[0])
          assert.strictEqual(seenByTaker[1].data.rfqQuoteId, quote1.rfqQuoteId)
          assert.deepStrictEqual(seenByTaker[1].data.makers, ["maker-1"])
        })
      )

      it.scoped("seq counts up by one per connection and the events of one RFQ arrive in order", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const taker = yield* connectAs(host.wsUrl, "demo-taker")
          const maker = yield* connectAs(host.wsUrl, "demo-maker-2")
          yield* promise(() => maker.result("v1/subscribe", { channels: ["rfq.maker", "rfq_quote.maker"] }))
          const { rfqId } = yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-2"])))
          const params = yield* quoteParams(maker, rfqId, "sell", "seq-1")
          const { rfqQuoteId } = yield* promise(() => maker.result("v1/quote/create", params))
          yield* promise(() =>
            maker.result("v1/quote/update", {
              rfqQuoteId,
              amount: params.amount,
              legs: params.legs,
              settlementOption: "DBT"
            })
          )
          yield* promise(() => taker.result("v1/rfq/cancel", { rfqId }))
          yield* promise(() =>
            maker.notification(
              (p) => p.channel === "rfq.maker" && p.data.rfqId === rfqId && p.data.status === "cancelled"
            )
          )
          const seen = maker.notifications()
          assert.deepStrictEqual(
            seen.map((p) => p.seq),
            seen.map((_, i) => i + 1)
          )
          // Cancelling the RFQ cancels its quotes first, then reports the RFQ itself.
          assert.deepStrictEqual(
            seen.filter((p) => p.data.rfqId === rfqId).map((p) => [p.channel, p.data.event, p.data.status]),
            [
              ["rfq.maker", "created", "open"],
              ["rfq_quote.maker", "created", "active"],
              ["rfq_quote.maker", "updated", "active"],
              ["rfq_quote.maker", "deleted", "cancelled"],
              ["rfq.maker", "updated", "cancelled"]
            ]
          )
        })
      )

      it.scoped("a base-currency suffix narrows a channel", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const taker = yield* connectAs(host.wsUrl, "demo-taker")
          const maker = yield* connectAs(host.wsUrl, "demo-maker-1")
          const reply = yield* promise(() =>
            maker.result("v1/subscribe", { channels: ["rfq.maker.ETH", "rfq.maker.BTC"] })
          )
          assert.deepStrictEqual(reply, {
            status: "subscribed",
            channels: ["rfq.maker.ETH", "rfq.maker.BTC"]
          })
          const { rfqId } = yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-1"])))
          const heard = yield* promise(() => maker.notification((p) => p.data.rfqId === rfqId))
          assert.strictEqual(heard.channel, "rfq.maker.BTC")
          yield* promise(() => maker.result("v1/unsubscribe", { channels: ["rfq.maker.BTC"] }))
          const second = yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-1"])))
          yield* promise(() => maker.result("v1/subscribe", { channels: ["rfq.maker"] }))
          const third = yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-1"])))
          yield* promise(() => maker.notification((p) => p.data.rfqId === third.rfqId))
          assert.deepStrictEqual(
            maker.notifications().map((p) => [p.channel, p.data.rfqId]),
            [
              ["rfq.maker.BTC", rfqId],
              ["rfq.maker", third.rfqId]
            ]
          )
          assert.notStrictEqual(second.rfqId, third.rfqId)
        })
      )
    })

    describe("cancel-on-disconnect", () => {
      it.scoped(
        "when the maker's protected session drops, its quotes are cancelled and the taker is told",
        () =>
          Effect.gen(function* () {
            const host = yield* TestHost
            const taker = yield* connectAs(host.wsUrl, "demo-taker")
            yield* promise(() => taker.result("v1/subscribe", { channels: ["rfq_quote.taker"] }))
            const maker = yield* connectAs(host.wsUrl, "demo-maker-2")
            assert.deepStrictEqual(
              yield* promise(() => maker.result("v1/cancel-on-disconnect", { enabled: true })),
              {
                enabled: true
              }
            )
            const { rfqId } = yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-2"])))
            const params = yield* quoteParams(maker, rfqId, "buy")
            const { rfqQuoteId } = yield* promise(() => maker.result("v1/quote/create", params))
            yield* promise(() =>
              taker.notification((p) => p.data.rfqQuoteId === rfqQuoteId && p.data.event === "created")
            )
            yield* promise(() => maker.terminate())
            const told = yield* promise(() =>
              taker.notification((p) => p.data.rfqQuoteId === rfqQuoteId && p.data.event !== "created")
            )
            assert.deepStrictEqual([told.data.event, told.data.status], ["deleted", "cancelled"])
            const ladder = yield* promise(() => taker.result("v1/rfq/quotes", { id: rfqId }))
            assert.deepStrictEqual(
              ladder.flatMap((side: any) => [...side.bids, ...side.asks]).map((q: any) => q.rfqQuoteId),
              []
            )
          })
      )
    })

    describe("limits", () => {
      it.scoped("the rate limit per user, with auth, auth/refresh and heartbeat exempt", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          // Wait for a roomy window before connecting: this socket's heartbeat timeout is 1 s, so a
          // wait after the auth would end the session first.
          yield* roomyWindow()
          const { access_token } = yield* oauthToken(host.url, "demo-maker-3")
          const client = yield* connect(host.strictWsUrl)
          yield* promise(() => client.result("auth", { token: access_token }))
          for (let i = 0; i < STRICT.rateLimitPerMinute; i++)
            yield* promise(() => client.result("v1/exchange/maker"))
          const limited = yield* promise(() => client.call("v1/exchange/maker"))
          assert.strictEqual(limited.error.code, -32603)
          assert.strictEqual(limited.error.message, "Rate limit exceeded")
          assert.strictEqual(limited.error.data.limit, STRICT.rateLimitPerMinute)
          assert.strictEqual(limited.error.data.window, "1m0s")
          assert.isTrue(Number.isInteger(limited.error.data.reset))
          assert.isDefined((yield* promise(() => client.call("heartbeat"))).result)
          assert.isDefined((yield* promise(() => client.call("auth", { token: access_token }))).result)
          assert.isDefined(
            (yield* promise(() => client.call("auth/refresh", { token: access_token }))).result
          )
        })
      )

      it.scoped("no heartbeat within the timeout: closed with 4000 heartbeat timeout", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const client = yield* connectAs(host.strictWsUrl, "demo-maker-3")
          assert.deepStrictEqual(yield* promise(() => client.closed), {
            code: 4000,
            reason: "heartbeat timeout"
          })
        })
      )

      it.scoped("a maker that stops reading is cut off (4002) while another keeps up with every RFQ", () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const taker = yield* connectAs(host.wsUrl, "demo-taker")
          const fast = yield* connectAs(host.slowWsUrl, "demo-maker-1")
          const slow = yield* connectAs(host.slowWsUrl, "demo-maker-1")
          for (const c of [fast, slow])
            yield* promise(() => c.result("v1/subscribe", { channels: ["rfq.maker"] }))
          slow.pause()
          const created: Array<number> = []
          // The stalled client keeps asking for the instrument catalog (large replies) while RFQs
          // go out; its buffer passes the 16 KiB cap and it is cut off.
          for (let i = 0; i < 200 && host.slow.connections() === 2; i++) {
            for (let j = 0; j < 20; j++)
              slow.send({
                jsonrpc: "2.0",
                id: `${i}-${j}`,
                method: "v1/exchange/instruments",
                params: { exchange: "DBT", baseCurrency: "BTC" }
              })
            if (i % 20 === 0)
              created.push(
                (yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-1"])))).rfqId
              )
            yield* Effect.sleep(5)
          }
          while (host.slow.connections() === 2) yield* Effect.sleep(10)
          assert.strictEqual(host.slow.closeCodes().get(4002), 1)
          slow.resume()
          // The close frame waits behind the buffered data; uWS may force-close first (1006).
          assert.include([4002, 1006], (yield* promise(() => slow.closed)).code)
          created.push((yield* promise(() => taker.result("v1/rfq/create", callSpread(["maker-1"])))).rfqId)
          yield* promise(() => fast.notification((p) => p.data.rfqId === created.at(-1)))
          assert.deepStrictEqual(
            fast
              .notifications()
              .filter((p) => p.data.event === "created")
              .map((p) => p.data.rfqId),
            created
          )
        })
      )
    })
  }
)
