/**
 * The JSON text of a response body. A frozen body cannot change, so its text is kept with it: the
 * engine hands out the same frozen object for repeated reads of an unchanged RFQ, and a read
 * served from memory then costs no serialisation at all.
 */
const frozenJson = new WeakMap<object, string>()

/** `undefined` has no JSON text; it is answered as `null`. Throws what `JSON.stringify` throws. */
export const jsonTextOf = (body: unknown): string => {
  if (typeof body !== "object" || body === null || !Object.isFrozen(body))
    return JSON.stringify(body) ?? "null"
  let text = frozenJson.get(body)
  if (text === undefined) {
    text = JSON.stringify(body)
    frozenJson.set(body, text)
  }
  return text
}
