import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import specs from "@asyncapi/specs"
import { catalog } from "@rfq/engine"
import { Ajv } from "ajv"
import { describe, expect, it } from "vitest"
import { makeAsyncApiDocument, notificationName } from "../../src/AsyncApi.js"
import { channelPayloads, closeCodes, sessionMethods } from "../../src/AsyncApiSession.js"
import { operationIdOf } from "../../src/OpenApiOperation.js"
import { operations } from "../../src/Operations.js"
import { CHANNELS } from "../../src/ws/Channels.js"
import { RpcCode } from "../../src/ws/JsonRpc.js"
import { CloseCode } from "../../src/ws/SessionEnvironment.js"
import { atPointer, isRecord, type Json, refsOf } from "./documentWalk.js"

/**
 * The AsyncAPI 3.0 document of the WebSocket API, validated against the AsyncAPI 3.0.0 JSON schema
 * of `@asyncapi/specs`, and held to its sources: the endpoint table, the session's methods
 * (`ws/SessionMethods.ts`), the channels (`ws/Channels.ts`), the error codes and the close codes.
 */

const document = makeAsyncApiDocument(operations, { version: "test" })
// The AsyncAPI schema embeds the draft-07 meta-schema under its own id: Ajv's copy must stay out.
const ajv = new Ajv({
  strict: false,
  allErrors: true,
  validateFormats: false,
  meta: false,
  validateSchema: false
})
const validateDocument = ajv.compile((specs as { schemas: Record<string, object> }).schemas["3.0.0"]!)

/** A validator of `payload` against a message's payload schema, its `$ref`s into the document. */
const payloadValidator = (message: string) => {
  const payload = (document.components.messages[message] as Json).payload as Json
  return new Ajv({ strict: false, allErrors: true }).compile({
    ...payload,
    components: { schemas: document.components.schemas }
  })
}

const sessionMethodsSource = readFileSync(
  fileURLToPath(new URL("../../src/ws/SessionMethods.ts", import.meta.url)),
  "utf8"
)

describe("GET /v1/asyncapi.json", () => {
  it("is a valid AsyncAPI 3.0 document whose every $ref resolves", () => {
    const valid = validateDocument(document)
    expect(validateDocument.errors ?? []).toEqual([])
    expect(valid).toBe(true)
    expect(refsOf(document).filter(({ ref }) => atPointer(document, ref) === undefined)).toEqual([])
  })

  it("lets each operation use only messages of its own channel", () => {
    for (const [name, operation] of Object.entries(document.operations) as Array<[string, Json]>) {
      const channel = (operation.channel as Json).$ref as string
      const refs = [
        ...((operation.messages ?? []) as Array<Json>),
        ...(((operation.reply as Json | undefined)?.messages ?? []) as Array<Json>)
      ]
      for (const ref of refs)
        expect((ref.$ref as string).startsWith(`${channel}/messages/`), `${name}: ${ref.$ref}`).toBe(true)
    }
  })

  it("has every method: each operation of the table and each of the session's own", () => {
    const titles = Object.values(document.operations).map((o) => (o as Json).title)
    for (const op of operations) expect(titles, op.rpc).toContain(op.rpc)
    // The session's methods as SessionMethods.ts dispatches them: its map entries and comparisons.
    const dispatched = new Set([
      ...[...sessionMethodsSource.matchAll(/\["([\w/-]+)",\s*[\w(]/g)].map((m) => m[1]!),
      ...[...sessionMethodsSource.matchAll(/method === "([\w/-]+)"/g)].map((m) => m[1]!)
    ])
    expect(
      [...dispatched].sort(),
      "session methods of ws/SessionMethods.ts vs AsyncApiSession.ts#sessionMethods"
    ).toEqual(sessionMethods.map((m) => m.method).sort())
    for (const m of sessionMethods) expect(titles, m.method).toContain(m.method)
  })

  it("has examples that its own request schemas accept, and refuses what the service refuses", () => {
    for (const m of [
      ...operations.map((op) => ({ method: op.rpc, example: op.example })),
      ...sessionMethods
    ]) {
      const validate = payloadValidator(`${operationIdOf(m.method)}Request`)
      const request = { jsonrpc: "2.0", id: 1, method: m.method, params: m.example }
      expect(validate(request) ? [] : validate.errors, m.method).toEqual([])
    }
    const create = operations.find((op) => op.rpc === "v1/rfq/create")!
    const validate = payloadValidator("rfqCreateRequest")
    const example = create.example as Json
    expect(
      validate({
        jsonrpc: "2.0",
        id: 1,
        method: "v1/rfq/create",
        params: { ...example, makers: { dbt: ["maker-1"] } }
      })
    ).toBe(false)
    expect(validate({ jsonrpc: "2.0", id: 1, method: "v1/rfq/get", params: example })).toBe(false)
  })

  it("has every channel with the payload of its notifications", () => {
    const missing = CHANNELS.filter((channel) => channelPayloads[channel] === undefined)
    expect(
      missing,
      `channels without a payload schema in packages/host/src/AsyncApiSession.ts#channelPayloads`
    ).toEqual([])
    for (const channel of CHANNELS) {
      expect(document.channels[channel], channel).toBeDefined()
      const message = document.components.messages[notificationName(channel)] as Json
      const data = (((message.payload as Json).properties as Json).params as Json).properties as Json
      expect(isRecord(data.data) && typeof (data.data as Json).$ref === "string", channel).toBe(true)
    }
  })

  it("has every JSON-RPC error code, every catalog message and every close code", () => {
    const errors = Object.entries(document.components.messages).filter(([name]) => name.startsWith("error"))
    const codes = errors.map(
      ([, m]) => ((((m as Json).payload as Json).properties as Json).error as Json).properties as Json
    )
    expect(new Set(codes.map((c) => (c.code as Json).const))).toEqual(new Set(Object.values(RpcCode)))
    const messages = new Set(codes.flatMap((c) => (c.message as Json).enum as Array<string>))
    for (const entry of Object.values(catalog)) expect(messages, entry.message).toContain(entry.message)
    for (const code of [...Object.values(CloseCode), 1011])
      expect(closeCodes[code], `close code ${code}`).toBeDefined()
    expect(document.channels.rpc?.["x-close-codes"]).toEqual(closeCodes)
  })
})
