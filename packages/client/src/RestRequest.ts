import type { Endpoint } from "@rfq/engine/api"
import { isRecord } from "./RfqError.js"

/**
 * An operation's input as the HTTP request the host reads (`packages/host/src/RestRoutes.ts`):
 * each `{name}` of the path template takes the input's field of that name, percent-encoded; the
 * other fields go to the query string (`from: "query"`), the JSON body (`from: "body"`), or nowhere
 * (`from: "none"`: the path is the whole input). Built from the endpoint table alone, so an
 * operation added to the table is covered without a change here.
 */
export interface RestRequest {
  readonly method: string
  /** The path and query, to be appended to the base URL. */
  readonly target: string
  /** The JSON body, when the operation takes one. */
  readonly body?: string
}

const PATH_PARAMETER = /\{([^}]+)\}/g

/** A query or path value as text: strings as they are, numbers and booleans as JSON writes them. */
const text = (name: string, value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value)
  throw new TypeError(`${name}: a ${typeof value} cannot be sent in a URL`)
}

export const restRequest = (
  endpoint: Pick<Endpoint, "method" | "path" | "from">,
  input: unknown
): RestRequest => {
  const fields: Record<string, unknown> = isRecord(input) ? { ...input } : {}
  const path = endpoint.path.replace(PATH_PARAMETER, (_, name: string) => {
    const value = fields[name]
    if (value === undefined) throw new TypeError(`${name}: the path ${endpoint.path} needs it`)
    delete fields[name]
    return encodeURIComponent(text(name, value))
  })
  switch (endpoint.from) {
    case "none":
      return { method: endpoint.method, target: path }
    case "body":
      return { method: endpoint.method, target: path, body: JSON.stringify(fields) }
    case "query": {
      const query = new URLSearchParams()
      for (const [name, value] of Object.entries(fields)) {
        if (value === undefined) continue
        // A list is the key repeated, which the host reads back as a list.
        if (Array.isArray(value)) for (const element of value) query.append(name, text(name, element))
        else query.append(name, text(name, value))
      }
      const search = query.toString()
      return { method: endpoint.method, target: search === "" ? path : `${path}?${search}` }
    }
  }
}
