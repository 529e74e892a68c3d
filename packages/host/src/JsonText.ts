import { Buffer } from "node:buffer"

/**
 * The JSON payload of a response body. A frozen body cannot change, so its bytes (UTF-8) are kept
 * with it: the engine hands out the same frozen object for repeated reads of an unchanged RFQ, and
 * a read served from memory then costs no serialisation at all, nor any conversion on the way out
 * (uWS writes bytes as they are; a string it would encode to UTF-8 on every write).
 */
const frozenJson = new WeakMap<object, Uint8Array>()

/**
 * `body` as JSON: bytes for a frozen object (kept), text otherwise. `undefined` has no JSON text;
 * it is answered as `null`. Throws what `JSON.stringify` throws.
 */
export const jsonPayloadOf = (body: unknown): string | Uint8Array => {
  if (typeof body !== "object" || body === null || !Object.isFrozen(body))
    return JSON.stringify(body) ?? "null"
  let bytes = frozenJson.get(body)
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(body))
    frozenJson.set(body, bytes)
  }
  return bytes
}
