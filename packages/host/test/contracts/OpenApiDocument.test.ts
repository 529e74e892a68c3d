import { decodeRequestEither } from "@rfq/engine"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { makeOpenApiDocument } from "../../src/OpenApi.js"
import { pathParameterNames } from "../../src/OpenApiOperation.js"
import { operationsWithNotFoundList } from "../../src/OperationErrors.js"
import { operations } from "../../src/Operations.js"
import {
  atPointer,
  isRecord,
  type Json,
  objectSchemas,
  refsOf,
  resolveSchema,
  withKeyAt
} from "./documentWalk.js"

/**
 * The OpenAPI document against the behaviour it describes: each claim it makes about an input
 * (which parameters, which are required, their bounds, which objects refuse unknown keys) is
 * checked by decoding with the schema the service decodes with.
 */

const document = makeOpenApiDocument(operations, { version: "test" })
const operationOf = (op: (typeof operations)[number]) =>
  document.paths[op.path]?.[op.method.toLowerCase()] as Json
const decodes = (op: (typeof operations)[number], input: unknown) =>
  Either.isRight(decodeRequestEither(op.input, input))
/** The decoder's "is missing" reasons for `input`, or "nothing missing". */
const missing = (op: (typeof operations)[number], input: unknown): ReadonlyArray<string> => {
  const decoded = decodeRequestEither(op.input, input)
  const reasons = Either.isLeft(decoded)
    ? (decoded.left.reason ?? []).filter((r) => r.endsWith(": is missing"))
    : []
  return reasons.length === 0 ? ["nothing missing"] : reasons
}
const exampleOf = (op: (typeof operations)[number]) => (isRecord(op.example) ? op.example : {})

describe("GET /v1/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document whose every $ref resolves", async () => {
    const result = await new Validator().validate(document as never)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    const broken = refsOf(document).filter(({ ref }) => atPointer(document, ref) === undefined)
    expect(broken).toEqual([])
  })

  it("publishes every operation with a summary, a tag declared at the top, and its JSON-RPC name", () => {
    const declared = new Set(document.tags.map((t) => t.name))
    for (const op of operations) {
      const entry = operationOf(op)
      expect(entry, `${op.method} ${op.path}`).toBeDefined()
      expect(entry["x-jsonrpc-method"]).toBe(op.rpc)
      expect(entry.summary).not.toBe(op.rpc)
      const tags = entry.tags as Array<string>
      expect(tags.length, op.rpc).toBe(1)
      expect(declared.has(tags[0]!), `${op.rpc}: tag ${tags[0]} is declared`).toBe(true)
    }
  })

  it("publishes no unused component and no open-ended or hollow body schema", () => {
    const used = new Set(
      refsOf({ paths: document.paths, components: { ...document.components, schemas: {} } }).map((r) => r.ref)
    )
    // Components reached only from other components count too.
    for (let grew = true; grew; ) {
      grew = false
      for (const ref of [...used]) {
        for (const inner of refsOf(atPointer(document, ref))) {
          if (!used.has(inner.ref)) {
            used.add(inner.ref)
            grew = true
          }
        }
      }
    }
    const unused = Object.keys(document.components.schemas).filter(
      (name) => !used.has(`#/components/schemas/${name}`)
    )
    expect(unused).toEqual([])
    const text = JSON.stringify(document)
    expect(text).not.toContain('"additionalProperties":true')
    // The old generator's `{$ref, properties: {}, required: []}` bodies.
    const hollow = refsOf(document).filter(({ at }) => {
      const node = atPointer(document, at)
      return isRecord(node) && ("properties" in node || "required" in node)
    })
    expect(hollow).toEqual([])
  })

  it("publishes each input field as a path or query parameter or a body property, required exactly when the decoder needs it", () => {
    for (const op of operations) {
      const entry = operationOf(op)
      const example = exampleOf(op)
      const parameters = (entry.parameters ?? []) as Array<Json>
      const pathNames = pathParameterNames(op.path)
      expect(
        parameters.filter((p) => p.in === "path").map((p) => p.name),
        op.rpc
      ).toEqual(pathNames)
      const fields: Array<{ readonly name: string; readonly required: boolean }> =
        op.from === "query"
          ? parameters
              .filter((p) => p.in === "query")
              .map((p) => ({ name: p.name as string, required: p.required === true }))
          : op.from === "body"
            ? (() => {
                const body = entry.requestBody as Json
                const schema = resolveSchema(
                  document,
                  (body.content as Json)["application/json"] &&
                    ((body.content as Json)["application/json"] as Json).schema
                )
                const required = new Set((schema.required ?? []) as Array<string>)
                return Object.keys(schema.properties as Json).map((name) => ({
                  name,
                  required: required.has(name)
                }))
              })()
            : []
      for (const field of fields) {
        expect(pathNames, `${op.rpc}: ${field.name} is not also a path parameter`).not.toContain(field.name)
        // Required means the decoder answers `<field>: is missing` without it (an optional field may
        // still be needed by a rule between fields, e.g. `rfqQuoteId or label is required`).
        const { [field.name]: _left, ...without } = example
        if (field.required)
          expect(field.name in example, `${op.rpc}: the example has required ${field.name}`).toBe(true)
        expect(missing(op, without), `${op.rpc}: ${field.name} required = ${field.required}`).toContain(
          field.required ? `${field.name}: is missing` : "nothing missing"
        )
      }
      // Every field the example sends is published somewhere.
      for (const name of Object.keys(example)) {
        expect([...pathNames, ...fields.map((f) => f.name)], `${op.rpc}: ${name} is published`).toContain(
          name
        )
      }
    }
  })

  it("publishes the bounds of integer parameters that the decoder enforces", () => {
    let checked = 0
    for (const op of operations) {
      for (const p of (operationOf(op).parameters ?? []) as Array<Json>) {
        const schema = p.schema as Json
        if (schema.type !== "integer") continue
        const at = (n: number) => decodes(op, { ...exampleOf(op), [p.name as string]: String(n) })
        if (typeof schema.minimum === "number") {
          expect(at(schema.minimum), `${op.rpc} ${p.name} = minimum`).toBe(true)
          expect(at(schema.minimum - 1), `${op.rpc} ${p.name} < minimum`).toBe(false)
          checked++
        }
        if (typeof schema.maximum === "number") {
          expect(at(schema.maximum), `${op.rpc} ${p.name} = maximum`).toBe(true)
          expect(at(schema.maximum + 1), `${op.rpc} ${p.name} > maximum`).toBe(false)
          checked++
        }
        expect(decodes(op, { ...exampleOf(op), [p.name as string]: "1x" }), `${op.rpc} ${p.name} = 1x`).toBe(
          false
        )
      }
    }
    expect(checked).toBeGreaterThan(5)
  })

  it("closes exactly the body objects whose unknown keys the decoder refuses", () => {
    let closed = 0
    for (const op of operations.filter((o) => o.from === "body")) {
      const body = ((operationOf(op).requestBody as Json).content as Json)["application/json"] as Json
      const example = exampleOf(op)
      const bodyExample = body.example
      for (const { path, schema } of objectSchemas(document, body.schema, bodyExample)) {
        const sent = withKeyAt(example, path, "zzUnknownField", 1)
        const refused = !decodes(op, sent)
        expect(
          schema.additionalProperties === false,
          `${op.rpc} at ${path.join(".") || "(body)"}: refuses unknown keys = ${refused}`
        ).toBe(refused)
        if (refused) closed++
      }
    }
    // The settlement-option maps of the RFQ example, at least.
    expect(closed).toBeGreaterThanOrEqual(2)
  })

  it("answers every operation with its error body on the statuses it can answer", () => {
    for (const op of operations) {
      const responses = operationOf(op).responses as Record<string, Json>
      const statuses = Object.keys(responses)
      for (const always of ["200", "401", "403", "429", "500", "503"])
        expect(statuses, `${op.rpc} ${always}`).toContain(always)
      if (op.from === "body") expect(statuses, `${op.rpc} 413`).toContain("413")
      else expect(statuses, `${op.rpc} 413`).not.toContain("413")
      const takesInput = Object.keys(exampleOf(op)).length > 0
      expect(statuses.includes("400"), `${op.rpc} 400`).toBe(takesInput)
      for (const status of statuses.filter((s) => s !== "200")) {
        const schema = ((responses[status]!.content as Json)["application/json"] as Json).schema as Json
        expect(schema.$ref, `${op.rpc} ${status}`).toBe("#/components/schemas/ErrorBody")
        expect((responses[status]!.headers as Json)["X-RateLimit-Reset"], `${op.rpc} ${status}`).toBeDefined()
      }
    }
  })

  it("lists the 404 messages of every operation, none left to a generic 404", () => {
    for (const op of operations) expect(operationsWithNotFoundList, op.rpc).toContain(op.rpc)
    // Market-maker protection as the service answers it (packages/engine/src/mmp/Mmp.ts).
    const errorsOf = (rpc: string) => {
      const op = operations.find((o) => o.rpc === rpc)!
      const responses = operationOf(op).responses as Record<string, Json>
      return { 404: responses["404"]?.description, 403: responses["403"]?.description as string }
    }
    expect(errorsOf("v1/mmp/config/delete")[404]).toBe("Not found: `record not found`.")
    expect(errorsOf("v1/mmp/reset")[404]).toBe("Not found: `record not found`.")
    for (const rpc of ["v1/mmp/config", "v1/mmp/config/set", "v1/mmp/status"])
      expect(errorsOf(rpc)[404], rpc).toBeUndefined()
    for (const rpc of ["v1/mmp/config/set", "v1/mmp/config/delete", "v1/mmp/reset"])
      expect(errorsOf(rpc)[403], rpc).toMatch(/not a maker desk/)
    expect(errorsOf("v1/mmp/status")[403]).not.toMatch(/maker desk/)
  })

  it("shows an example that the service accepts on every operation", () => {
    for (const op of operations) {
      expect(op.example, `${op.rpc} has an example in Endpoints.ts`).toBeDefined()
      const decoded = decodeRequestEither(op.input, op.example)
      expect(Either.isRight(decoded) ? "decodes" : JSON.stringify(decoded.left), op.rpc).toBe("decodes")
    }
  })
})
