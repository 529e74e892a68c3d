import type { Endpoint } from "@rfq/engine"
import { tagOf } from "./ApiTags.js"
import type { Json, JsonSchemas } from "./JsonSchemas.js"
import { type ErrorStatus, operationErrors } from "./OperationErrors.js"

/**
 * One operation of the OpenAPI document, from its entry in the endpoint table: path parameters,
 * query parameters (each published with its type, bounds and required-ness), the JSON body as a
 * proper schema (the input's object without its path parameters), the example, the tag, the
 * answer and the error bodies of the statuses it can answer (`OperationErrors.ts`).
 */

/** The operation id: `v1/account/exchange-credentials/get` → `accountExchangeCredentialsGet`. */
export const operationIdOf = (rpc: string): string =>
  rpc.replace(/^v1\//, "").replace(/[/-](.)/g, (_m, c: string) => c.toUpperCase())

export const pathParameterNames = (path: string): Array<string> =>
  [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)

/** The `X-RateLimit-*` headers every answer carries (`components.headers`). */
export const rateLimitHeaderRefs: Json = {
  "X-RateLimit-Limit": { $ref: "#/components/headers/X-RateLimit-Limit" },
  "X-RateLimit-Remaining": { $ref: "#/components/headers/X-RateLimit-Remaining" },
  "X-RateLimit-Reset": { $ref: "#/components/headers/X-RateLimit-Reset" }
}

export const jsonResponse = (description: string, schema: Json, headers: Json = rateLimitHeaderRefs) => ({
  description,
  headers,
  content: { "application/json": { schema } }
})

export const errorResponses = (statuses: ReadonlyArray<ErrorStatus>, schema: Json): Json =>
  Object.fromEntries(statuses.map((s) => [String(s.status), jsonResponse(s.description, schema)]))

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A query parameter's schema: a string on the wire, so a field that also takes an array (a list
 * of statuses) is published in its array form, sent comma-separated (`style: form, explode: false`).
 */
const queryParameter = (name: string, schema: Json, required: boolean, example: unknown): Json => {
  const arrayForm = Array.isArray(schema.anyOf)
    ? (schema.anyOf as Array<unknown>).find((s) => isRecord(s) && s.type === "array")
    : undefined
  const { anyOf: _anyOf, ...annotations } = schema
  const published = isRecord(arrayForm) ? { ...arrayForm, ...annotations } : schema
  return {
    name,
    in: "query",
    required,
    ...(typeof schema.description === "string" ? { description: schema.description } : {}),
    ...(isRecord(arrayForm) ? { style: "form", explode: false } : {}),
    schema: published,
    ...(example === undefined ? {} : { example })
  }
}

export const makeOperation = (op: Endpoint, schemas: JsonSchemas, errorBody: Json): Json => {
  const input = schemas.objectOf(op.input)
  const pathNames = pathParameterNames(op.path)
  const example = (isRecord(op.example) ? op.example : {}) as Record<string, unknown>
  const properties = input?.properties ?? {}
  const required = new Set(input?.required ?? [])
  const parameters: Array<Json> = pathNames.map((name) => {
    const schema = properties[name] ?? { type: "string" }
    return {
      name,
      in: "path",
      required: true,
      ...(typeof schema.description === "string" ? { description: schema.description } : {}),
      schema,
      ...(example[name] === undefined ? {} : { example: example[name] })
    }
  })
  const rest = Object.entries(properties).filter(([name]) => !pathNames.includes(name))
  if (op.from === "query") {
    for (const [name, schema] of rest)
      parameters.push(queryParameter(name, schema, required.has(name), example[name]))
  }
  const requestBody = op.from === "body" ? makeBody(op, schemas, pathNames) : undefined
  const takesInput = input === undefined || Object.keys(properties).length > 0
  return {
    operationId: operationIdOf(op.rpc),
    summary: op.summary ?? op.rpc,
    description: `Also available over JSON-RPC (WebSocket \`/ws/v1\`) as \`${op.rpc}\`, with the same input as \`params\` (path parameters by name) and the same answer as \`result\`.`,
    tags: [tagOf(op.rpc).name],
    "x-jsonrpc-method": op.rpc,
    security: [{ bearer: [] }],
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(requestBody === undefined ? {} : { requestBody }),
    responses: {
      "200": jsonResponse("Success", schemas.of(op.output)),
      ...errorResponses(operationErrors(op, takesInput), errorBody)
    }
  }
}

/**
 * The JSON body: the input without its path parameters. A named input with none is its own
 * component; one that loses a path parameter becomes `<name>Body`, so the component says exactly
 * what the body holds (`POST /v1/rfq/{id}` takes `id` from the path, not from the body).
 */
const makeBody = (op: Endpoint, schemas: JsonSchemas, pathNames: ReadonlyArray<string>): Json => {
  const whole = schemas.of(op.input)
  const input = schemas.objectOf(op.input)
  const example = isRecord(op.example)
    ? Object.fromEntries(Object.entries(op.example).filter(([name]) => !pathNames.includes(name)))
    : undefined
  let schema: Json = whole
  let required = true
  if (input !== undefined) {
    const properties = Object.fromEntries(
      Object.entries(input.properties).filter(([name]) => !pathNames.includes(name))
    )
    const bodyRequired = input.required.filter((name) => !pathNames.includes(name))
    // A body whose fields are all optional may be left out: an empty body is `{}`.
    required = bodyRequired.length > 0
    const removed = Object.keys(input.properties).length !== Object.keys(properties).length
    if (removed || typeof whole.$ref !== "string") {
      const body = {
        type: "object",
        ...input.keywords,
        properties,
        ...(bodyRequired.length === 0 ? {} : { required: bodyRequired })
      }
      const name = typeof whole.$ref === "string" ? `${whole.$ref.split("/").pop()}Body` : undefined
      const described = removed ? { ...body, description: `Body of \`${op.method} ${op.path}\`.` } : body
      schema = name === undefined ? described : schemas.define(name, { ...described, title: name })
    }
  }
  return {
    required,
    content: {
      "application/json": { schema, ...(example === undefined ? {} : { example }) }
    }
  }
}
